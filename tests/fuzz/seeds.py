#!/usr/bin/env python3
# seeds.py - regenerate the fuzz targets' seed corpora (tests/fuzz/corpus/)
# and dictionaries (tests/fuzz/*.dict) from the project's own inputs: the
# policies and proposals in corpus/ and examples/, the prover-body cases of
# tests/check_prover_body.c, the proxy's denial batch in tests/data/,
# request heads and chunked bodies written here, and audit exports built
# here (digests right, signatures not). By hand only (needs PyYAML); the
# output is deterministic, so a rerun that changes nothing shows no diff.
#   rm -rf tests/fuzz/corpus && python3 tests/fuzz/seeds.py
import os, glob, json, yaml, hashlib, base64, re  # noqa: E401
R=os.path.abspath(os.path.join(os.path.dirname(__file__),'..','..')); C=R+'/tests/fuzz/corpus'
def out(t, data, cap=60):
    d=f'{C}/{t}'; os.makedirs(d, exist_ok=True)
    if isinstance(data,str): data=data.encode()
    if len(data)>8192 or len(os.listdir(d))>=cap: return
    h=hashlib.sha1(data).hexdigest()[:16]
    open(f'{d}/{h}','wb').write(data)
docs=[]
for f in sorted(glob.glob(R+'/corpus/**/*.yaml',recursive=True)+glob.glob(R+'/examples/*.yaml')):
    try: docs.append((f,open(f).read(),yaml.safe_load(open(f))))
    except Exception: pass
pols=[];props=[];keys=set()
def walk(x):
    if isinstance(x,dict):
        if 'network_policies' in x or 'version' in x and len(x)<6: pols.append(x)
        if 'operations' in x: props.append(x)
        for k,v in x.items(): keys.add(str(k)); walk(v)
    elif isinstance(x,list):
        for v in x: walk(v)
for f,t,y in docs: walk(y)
props.append(json.load(open(R+'/examples/proposal.json'))); walk(props[-1])
def js(x): return json.dumps(x, default=str)
for p in pols[:30]: out('fuzz_policy_yaml', yaml.safe_dump(p)); out('fuzz_policy_json', js(p), 40)
for f,t,y in docs:
    if 'examples' in f or 'semantics' in f or 'invalid' in f: out('fuzz_policy_yaml',t,45)
for p in pols:
    np_=p.get('network_policies') if isinstance(p,dict) else None
    if isinstance(np_,dict):
        for k,v in np_.items():
            if isinstance(v,dict): props.append({'intent_summary':'allow '+str(k),'operations':[{'addRule':{'ruleName':str(k),'rule':v}}]})
for f in sorted(glob.glob(R+'/corpus/invalid/*')): out('fuzz_policy_json', js(yaml.safe_load(open(f))) if f.endswith('yaml') and not isinstance(yaml.safe_load(open(f)),str) else open(f).read())
for i,p in enumerate(props): out('fuzz_advisor_body', json.dumps(p,indent=2,default=str) if i%3==0 else js(p), 40)
dn=json.load(open(R+'/tests/data/denials-recorded.json'))
for i in range(0,len(dn['events']),3): out('fuzz_advisor_body', js({'dropped':i%2,'events':dn['events'][i:i+3]}), 52)
gq={'host':'api.github.com','port':443,'binary':'/usr/bin/gh','stage':'l7','method':'POST','path':'/graphql','protocol':'graphql'}
for sd in [{'dropped':0,'events':[dict(gq,graphql={'operation_type':'mutation','operation_name':'CreateIssue','fields':['createIssue']}),dict(gq,graphql={'operation_type':'query','fields':['viewer','repository']})]},
           {'dropped':1,'events':[dict(gq,stage='forward-l7-deny'),dict({k:v for k,v in gq.items() if k!='protocol'},graphql={'persisted_id':'ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38'})]},
           {'dropped':0,'events':[{'host':'chat.example.com','port':443,'binary':'/usr/bin/python3.11','stage':'websocket','method':'WEBSOCKET_TEXT','path':'/chat'},{'host':'chat.example.com','port':443,'binary':'/usr/bin/python3.11','stage':'websocket','method':'WEBSOCKET_TEXT','path':'/subs','graphql':{'operation_type':'subscription','fields':['issueAdded']},'prior':[{'allow':{'method':'WEBSOCKET_TEXT','path':'/subs'}},{'allow':{'operation_type':'*'}}]}]}]:
    out('fuzz_advisor_body', json.dumps(sd), 60)
src=open(R+'/tests/check_prover_body.c').read()
for m in re.finditer(r'PROVER_BODY_\w+, ("(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*)', src):
    try: out('fuzz_prover_body', eval(re.sub(r'"\s*"','',m.group(1))).encode('latin1','ignore'))
    except Exception: pass
pp=pols[:12]
for i,p in enumerate(pp):
    out('fuzz_prover_body', js({'candidate':p}))
    out('fuzz_prover_body', js({'baseline':pp[i-1],'candidate':p,'options':{'timeout_ms':250}}))
    out('fuzz_prover_body', js({'candidate':yaml.safe_dump(p),'boundary':yaml.safe_dump(pp[i-1])}))
    if i < len(props): out('fuzz_prover_body', js({'policy':p,'proposal':props[i]}))
out('fuzz_prover_body', js({'openapi':{'openapi':'3.0.0','paths':{'/a':{'get':{}}}},'policy':pp[0],'binary':'/usr/bin/curl'}))
# proxy heads
heads=['GET http://api.github.com/repos/o/r HTTP/1.1\r\nHost: api.github.com\r\n\r\n',
'CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\nProxy-Authorization: Bearer abc\r\n\r\n',
'POST http://example.com:8080/v1/x?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nContent-Length: 5\r\nContent-Type: application/json\r\n\r\nhello',
'PUT http://10.0.0.1/a HTTP/1.1\r\nHost: 10.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
'DELETE http://[::1]:80/x HTTP/1.0\r\nHost: [::1]\r\nConnection: close\r\n\r\n',
'HEAD http://user@h.example/ HTTP/1.1\r\nHost: h.example\r\nExpect: 100-continue\r\n\r\n',
'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n','PATCH /rel HTTP/1.1\r\nHost: a.b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
'\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03'+'\x00'*32+'\x00\x00\x02\x13\x01\x01\x00\x00\x10\x00\x00\x00\x0e\x00\x0c\x00\x00\x09localhost',
'GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
'POST http://a.example/graphql HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n']
for m,u in [('GET','http://api.github.com:443/repos/o/r/issues?state=open'),('POST','http://127.0.0.1:8080/graphql'),('PUT','http://[fe80::1%25eth0]/'),('GET','/relative/path'),('CONNECT','[2001:db8::1]:8443'),('CONNECT','169.254.169.254:80'),('GET','http://a.example/%2e%2e/%2F?x=%00'),('DELETE','http://xn--bcher-kva.example./a;b')]:
    heads.append(f'{m} {u} HTTP/1.1\r\nHost: {u.split("/")[2] if "//" in u else u}\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n')
heads.append('GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nX-Folded: a\r\n b\r\n\r\n')
heads.append('GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n')
heads.append('POST http://a.example/ HTTP/1.1\r\nHost: a.example\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd')
heads.append('GET http://a.example/ HTTP/1.1\nHost: a.example\n\n')
for h in heads: out('fuzz_proxy_request', h.encode('latin1'))
ch=['5\r\nhello\r\n0\r\n\r\n','3;name=val\r\nabc\r\n0\r\nTrailer: x\r\n\r\n','A\r\n0123456789\r\n0\r\n\r\n','0\r\n\r\n','1\r\na\r\n2\r\nbc\r\n0;x\r\n\r\n','ffffffff\r\n','5 \r\nhello\r\n0\r\n\r\n','5\nhello\n0\n\n']
for i,c in enumerate(ch):
    for s in (0,1,7,200): out('fuzz_proxy_chunked', bytes([s])+c.encode())
# audit exports
def canon(o): return json.dumps(o,sort_keys=True,separators=(',',':'),ensure_ascii=True)
def sha(b): return hashlib.sha256(b).hexdigest()
for n in range(1,5):
    lines=[]; prev='0'*64; blob=base64.b64encode(b'{"a":1}').decode(); bsha=sha(b'{"a":1}')
    recs=[]
    for s in range(1,n+1):
        r={'type':'record','seq':s,'ts_ms':1700000000000+s,'kind':['proposal.created','proposal.approved','rule.revoked','proposal.rejected'][s%4],'sandbox':'sb1','line':'chunk c%d'%s,'data':{'id':'p%d'%s,'rule':'r'},'blobs':[bsha] if s%2 else [],'prev':prev}
        r['hash']=sha(canon(r).encode()); r['sig']=base64.b64encode(hashlib.sha512(str(s).encode()).digest()).decode()
        prev=sha(canon(r).encode()); recs.append(r)
    h={'type':'header','format':'proviso-audit/1','since':0,'last_seq':n,'records':n,'first_prev':'0'*64,'head':prev,'key':base64.b64encode(hashlib.sha256(b'key').digest()).decode()}
    h['hash']=sha(canon(h).encode()); h['sig']=base64.b64encode(hashlib.sha512(b'header').digest()).decode()
    txt='\n'.join([canon(h)]+[canon({'type':'blob','sha256':bsha,'data_b64':blob})]+[canon(r) for r in recs])+'\n'
    out('fuzz_audit_verify', txt)
    out('fuzz_audit_verify', txt.replace('"seq":1','"seq":2',1))
    out('fuzz_audit_verify', '\n'.join(txt.split('\n')[:2]))
KEYS=sorted(keys)

# dictionaries
R=os.path.dirname(os.path.abspath(__file__))+'/'
keys=[k for k in KEYS if re.fullmatch(r'[A-Za-z0-9_.\-]+',k)]
vals=['rest','graphql','tcp','tls','passthrough','enforce','audit','allow','deny','GET','POST','PUT','PATCH','DELETE','HEAD','OPTIONS','CONNECT','/usr/bin/curl','/**','/*','**','*.','443','80','0.0.0.0/0','169.254.169.254','::1','true','false','null']
js=['{','}','[',']',':',',','"','\\"','\\u0000','\\n','1e309','-1','0']
ym=[': ','- ','---','\n  ','&a','*a','!!str','|','>','{}','[]','#',"'"]
def q(s): return '"'+''.join(c if 32<=ord(c)<127 and c not in '\\"' else '\\x%02x'%ord(c) for c in s)+'"'
def w(name, toks, head):
    seen=[];[seen.append(t) for t in toks if t not in seen]
    open(R+name+'.dict','w').write('# '+head+'\n'+'\n'.join(q(t) for t in seen)+'\n')
w('fuzz_policy_yaml', keys+vals+ym, 'fuzz_policy_yaml: the policy schema keys and values, YAML punctuation')
w('fuzz_policy_json', ['"%s":'%k for k in keys]+keys+vals+js, 'fuzz_policy_json: the policy schema keys and values, JSON punctuation')
w('fuzz_prover_body', ['"%s":'%k for k in ['candidate','baseline','proposal','policy','boundary','credentials','options','timeout_ms','openapi','binary']]+['"%s":'%k for k in keys]+vals+js+ym, 'fuzz_prover_body: the prove/check/discover body fields, the policy schema, JSON and YAML punctuation')
w('fuzz_advisor_body', ['"%s":'%k for k in keys]+keys+vals+js+['addRule','removeRule','ruleName','intent_summary','events','denials','binary','host','port','method','path','reason','dropped','ancestors','stage','l4','l7','"events": [','graphql','"graphql":','operation_type','operation_name','fields','persisted_id','protocol','websocket','WEBSOCKET_TEXT','query','mutation','subscription','prior'], 'fuzz_advisor_body: proposal and denial-batch fields, the policy schema, JSON punctuation')
http=['GET ','POST ','PUT ','PATCH ','DELETE ','HEAD ','OPTIONS ','CONNECT ','TRACE ',' HTTP/1.1\r\n',' HTTP/1.0\r\n','HTTP/2','\r\n','\r\n\r\n','http://','https://','Host: ','Content-Length: ','Transfer-Encoding: ','chunked','gzip','identity','Connection: ','close','keep-alive','Upgrade: ','Expect: ','100-continue','Proxy-Authorization: ','Proxy-Connection: ','Authorization: ','Bearer ','Basic ','Te: ','trailers',':443',':80','[::1]','@','%00','%2e%2e','/../','?','#',';',' ','\t','\x16\x03\x01','\x00\x00','localhost']
w('fuzz_proxy_request', http+['0\r\n\r\n','5\r\nhello\r\n'], 'fuzz_proxy_request: HTTP/1.1 request-line, header and framing tokens, the TLS ClientHello start')
w('fuzz_proxy_chunked', ['\r\n','0\r\n\r\n',';','=','"','ffffffff','0000000000000001','A\r\n','\n','\r',' ','\t','Trailer: ','Content-Length: ','Transfer-Encoding: '], 'fuzz_proxy_chunked: chunk-size, extension, trailer and line-end tokens')
w('fuzz_audit_verify', ['"type":','"header"','"record"','"blob"','"format":','"proviso-audit/1"','"since":','"last_seq":','"records":','"first_prev":','"head":','"hash":','"sig":','"seq":','"ts_ms":','"kind":','"sandbox":','"line":','"data":','"blobs":','"prev":','"sha256":','"data_b64":','"key":','"0000000000000000000000000000000000000000000000000000000000000000"','\n','{','}','[',']',':',',','==','"'], 'fuzz_audit_verify: export line fields, the genesis digest, JSON punctuation')
# WebSocket frame streams (fuzz_ws_frames): first byte = side (bit 0: server),
# small limit (bit 1) and read step; then frames, valid and hostile
import struct
def wsf(op, pl, fin=True, mask=True, rsv=0, ln=None):
    n=len(pl) if ln is None else ln
    b0=(0x80 if fin else 0)|(rsv<<4)|op; m=0x80 if mask else 0
    h=struct.pack('!BB',b0,m|n) if n<126 else struct.pack('!BBH',b0,m|126,n) if n<65536 else struct.pack('!BBQ',b0,m|127,n)
    if not mask: return h+pl
    k=b'\x37\xfa\x21\x3d'; return h+k+bytes(c^k[i%4] for i,c in enumerate(pl))
gq=[b'{"type":"connection_init","payload":{}}',b'{"id":"1","type":"subscribe","payload":{"query":"subscription { messageAdded { id } }"}}',
    b'{"id":"2","type":"start","payload":{"query":"query Q { viewer { login } }","operationName":"Q"}}',
    b'{"id":"3","type":"subscribe","payload":{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}}',
    b'{"type":"ping"}',b'{"type":"complete","id":"1"}',b'{"type":"next"}']
streams=[[wsf(1,b'hello')],[wsf(1,b'hel',fin=False),wsf(9,b'p'),wsf(0,b'lo')],[wsf(2,b'\x00\xff'*40)],
    [wsf(8,b'\x03\xe8bye')],[wsf(8,b'\x03')],[wsf(1,b'x',mask=False)],[wsf(3,b'x')],[wsf(1,b'x',rsv=4)],
    [wsf(0,b'x')],[wsf(9,b'p',fin=False)],[wsf(9,b'p'*126)],[wsf(1,b'ok\xc3',fin=False),wsf(0,b'\xa9')],
    [wsf(1,b'ok\xc3',fin=False),wsf(0,b'\x28')],[wsf(1,b'\xed\xa0\x80')],[wsf(2,b'a'*200)],
    [wsf(1,b'a'*70,fin=False),wsf(0,b'b'*70)],[bytes([0x82,0xff])+struct.pack('!Q',1<<63)+b'\x00'*4],
    [bytes([0x81,0xfe,0x00,0x05])+b'\x00'*4+b'hello'],[wsf(8,b''),wsf(1,b'after')]]+[[wsf(1,g)] for g in gq]
for i,st in enumerate(streams):
    for s in (0,6,53): out('fuzz_ws_frames', bytes([s])+b''.join(st))
    sv=[wsf(f[0]&15,b'srv',mask=False) for f in st[:1]]
    out('fuzz_ws_frames', bytes([1+4*i%13*4])+b''.join(sv))
w('fuzz_ws_frames', ['\x81','\x01','\x80','\x82','\x02','\x88','\x89','\x8a','\x83','\xc1','\xf1','\x7e','\x7f','\xfe','\xff','\x80\x00\x00\x00','\x7f\xff\xff\xff\xff\xff\xff\xff','\x03\xe8','\x03\xed','\x13\x87','\xc3\xa9','\xed\xa0\x80','\xf4\x90\x80\x80','\xc0\xaf','{"type":"','subscribe','start','connection_init','complete','"payload":{"query":"','"operationName":','"id":"1",','persistedQuery','sha256Hash'], 'fuzz_ws_frames: frame-head bytes (FIN, RSV, opcodes, mask bit, 16/64-bit lengths), close codes, UTF-8 edge sequences, graphql-ws message fields')
# fuzz_graphql: the first byte picks the entry (0 document, 1 "opname\n"
# document, 2 POST JSON body, 3 POST application/graphql, 4 GET target);
# documents from tests/check_model_graphql.c and a few written here
gsrc=open(R+'../check_model_graphql.c').read()
gdocs=[]
for m in re.finditer(r'^    \{("(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*), (NULL|"(?:[^"\\]|\\.)*")', gsrc, re.M):
    try:
        d=eval(re.sub(r'"\s*"','',m.group(1))); n=eval(m.group(2)) if m.group(2)!='NULL' else None
        gdocs.append((d.encode('latin1') if all(ord(c)<256 for c in d) else d.encode(),n))
    except Exception: pass
gdocs+=[(b'query Viewer { viewer { login name repositories(first: 10, orderBy: {field: UPDATED_AT, direction: DESC}) { nodes { name } } } }',None),
        (b'mutation AddStar($id: ID!) { addStar(input: {starrableId: $id}) { starrable { id } } }\nquery Q { viewer { login } }','AddStar'),
        (b'query Q { ...F ... on Query @include(if: true) { b } }\nfragment F on Query { a: viewer { ...G } }\nfragment G on User { login }',None),
        (b'{ a(s: """block \\""" string""", t: "\\uD83D\\uDE00 \\u{1F600}", n: -1.5e3, l: [1, [2]], o: {k: null}) }',None)]
for i,(d,n) in enumerate(gdocs):
    if d.startswith(b'type') or b'\x00' in d and i%2: continue
    if n is None: out('fuzz_graphql', b'\x00'+d, 300)
    else: out('fuzz_graphql', b'\x01'+n.encode()+b'\n'+d, 300)
for d,n in gdocs[:40]:
    s=d.decode('utf-8','replace')
    body={'query':s}
    if n is not None: body['operationName']=n
    out('fuzz_graphql', b'\x02'+json.dumps(body).encode(), 300)
    out('fuzz_graphql', b'\x03'+d, 300)
    out('fuzz_graphql', b'\x04/graphql?query='+''.join(c if c.isalnum() else '%%%02X'%ord(c) for c in s if ord(c)<128).encode(), 300)
out('fuzz_graphql', b'\x02'+json.dumps([{'query':'{ a }'},{'query':'mutation { b }'}]).encode(), 300)
out('fuzz_graphql', b'\x02'+json.dumps({'extensions':{'persistedQuery':{'version':1,'sha256Hash':'a'*64}}}).encode(), 300)
# parameter cloaking: a raw ';' separates parameters for Rack 2, old Django and Go
out('fuzz_graphql', b'\x04/graphql?query=%7Ba%7D&x=1;query=mutation%7Bb%7D', 300)
out('fuzz_graphql', b'\x04/graphql?query=%7Ba%7D&x=1%3Bquery%3Dmutation', 300)
out('fuzz_graphql', b'\x04/graphql?extensions=%7B%22persistedQuery%22%3A%7B%22version%22%3A1%2C%22sha256Hash%22%3A%22'+b'b'*64+b'%22%7D%7D', 300)
w('fuzz_graphql', ['{','}','(',')','[',']',':','$','@','!','=','|','&','...','"','"""','\\"""','\\u','\\uD83D\\uDE00','\\u{1F600}','#','\n','\r\n',',','\xef\xbb\xbf','query ','mutation ','subscription ','fragment ','on ','true','false','null','@skip(if: true)','@include(if: $v)','__typename','-1.5e3','0','1.0',
    '"query":','"operationName":','"variables":','"extensions":','"persistedQuery":','"sha256Hash":','"version":','query=','&operationName=','&extensions=',';query=',';operationName=',';','%7B','%7D','%20','+','type ','schema ','extend '],
    'fuzz_graphql: GraphQL punctuators, keywords, escapes, directives; GraphQL-over-HTTP members and query parameters')
# fuzz_cred_rewrite: first byte = mode (0 header field, 1 request-target,
# 2 body, 3 text, 4 redaction), then the host up to a newline, then bytes
b64=base64.b64encode(b'user:openshell:resolve:env:API_TOKEN').decode()
for s in ['\x00api.example.com\nAuthorization: Bearer openshell:resolve:env:API_TOKEN',
          '\x00github.com\nX-Key: sk-OPENSHELL-RESOLVE-ENV-GH',
          '\x00api.example.com\nAuthorization: Basic '+b64,
          '\x00github.com\nX-Key: openshell:resolve:env:API_TOKEN',
          '\x00api.example.com\nX-Key: openshell%3Aresolve%3Aenv%3AAPI_TOKEN',
          '\x01api.example.com\n/v1/openshell:resolve:env:API_TOKEN/x?k=openshell%3Aresolve%3Aenv%3AGH&a=b',
          '\x01b.example.org\n/q?t=Bearer+openshell:resolve:env:API_TOKEN',
          '\x01api.example.com\n/v1/x?a=1;openshell:resolve:env:API_TOKEN=1',
          '\x02api.example.com\n{"k":"openshell:resolve:env:API_TOKEN","n":[1,2]}',
          '\x02api.example.com\na=1&t=x-OPENSHELL-RESOLVE-ENV-API_TOKEN',
          '\x03github.com\n{"type":"auth","token":"openshell:resolve:env:GH"}',
          '\x04x\nopenshell:resolve:env:ANY and OpenShell:Resolve:Env:X']:
    out('fuzz_cred_rewrite', s.encode())
out('fuzz_cred_rewrite', b'\x02api.example.com\n\xff\xfe openshell:resolve:env:API_TOKEN')
w('fuzz_cred_rewrite', ['openshell:resolve:env:','OPENSHELL-RESOLVE-ENV-','OPENSHELL:RESOLVE:ENV:','openshell-resolve-env-','API_TOKEN','GH','NOPE','Bearer ','Basic ','Authorization:','%3A','%3a','%253A','%2F','%6F','?','&',';','=','+','/','-','api.example.com','a.example.org','github.com','10.0.0.1','\xc3\xa9','\xff'],
  'fuzz_cred_rewrite: markers, keys, schemes, encodings and hosts')
