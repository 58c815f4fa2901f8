// SPDX-License-Identifier: Apache-2.0
// grants.mjs - the inbox's "What this change grants" without a browser
// (run by tests/ui_grants.sh). app.js is loaded into a node vm with a small
// stand-in DOM (elements, text nodes, attributes: what el() uses); app.js
// hands its pure builders to the __provisoInboxTest hook. Checks, on the
// issue's chunk (auto-approved, verdict empty, /usr/bin/** opaque to
// **.pastebin.com:443): the grant list renders first in the detail, above
// the findings, with its breadth marks, and no text says "nothing new"
// while the list is not empty. Then the pure builders beside it: the
// findings table's pattern and count, and the policy diff's lines.
// Prints "ok - ..." lines; exits 1 on a failure.
import fs from 'node:fs';
import vm from 'node:vm';

const APP = process.argv[2];
let failed = 0;
function check(cond, what) {
    console.log(`${cond ? 'ok' : 'not ok'} - ${what}`);
    if (!cond) {
        failed++;
    }
}

// --- a stand-in DOM: enough for el(), replaceChildren and a text walk ---
class Node {}
class Text extends Node {
    constructor(t) { super(); this.data = String(t); }
    get textContent() { return this.data; }
}
class Element extends Node {
    constructor(tag) { super(); this.tagName = tag.toUpperCase(); this.attrs = {}; this.children = []; }
    setAttribute(k, v) { this.attrs[k] = String(v); }
    getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
    addEventListener() {}
    append(...cs) {
        for (const c of cs) {
            this.children.push(c instanceof Node ? c : new Text(c));
        }
    }
    replaceChildren(...cs) { this.children = []; this.append(...cs); }
    get textContent() { return this.children.map((c) => c.textContent).join(''); }
    set textContent(v) { this.children = [new Text(v)]; }
    get id() { return this.attrs.id || ''; }
    // every descendant element, depth first
    *walk() {
        for (const c of this.children) {
            if (c instanceof Element) {
                yield c;
                yield* c.walk();
            }
        }
    }
    find(pred) { for (const e of this.walk()) { if (pred(e)) { return e; } } return null; }
    all(pred) { return [...this.walk()].filter(pred); }
}
const hasClass = (e, c) => (e.attrs.class || '').split(/\s+/).includes(c);

const detail = new Element('section');
const doc = {
    createElement: (t) => new Element(t),
    createTextNode: (t) => new Text(t),
    addEventListener() {},
    getElementById: (id) => (id === 'detail' ? detail : new Element('div')),
    body: new Element('body'),
};
const hook = {};
const ctx = vm.createContext({ document: doc, Node, sessionStorage: { getItem: () => null },
    __provisoInboxTest: hook, console });
const src = fs.readFileSync(APP, 'utf8');
vm.runInContext(src, ctx, { filename: APP });
check(typeof hook.grantsSection === 'function' && typeof hook.renderDetail === 'function',
    'app.js hands its builders to the test hook');

const pasteGrant = {
    change: 'new', rule: 'paste', binary: '/usr/bin/**', host: '**.pastebin.com', ports: [443],
    route: 'opaque', access: ['all traffic'], credentials: [], private_destinations: [],
    breadth: { binary: 'glob', host: 'any-depth', route: 'opaque', methods: 'all' },
};
const pasteChunk = {
    chunk_id: '9f00', status: 'approved', auto_approved: true, rule_name: 'paste',
    host: 'paste.pastebin.com', port: 443, binary: '/usr/bin/curl', analysis_mode: 'agent_authored',
    confidence: 0.9, hit_count: 1, rationale: 'share a log', approved_revision: 2,
    validation_result: 'prover: no new findings',
    evidence: { diff: '+  paste:', prover: { verdict: 'empty', categories: [], findings: [], grants: [pasteGrant] } },
    proposed_rule: {},
};

// 1. The chunk: grants first, above the findings, with breadth.
hook.renderDetail(pasteChunk);
const kids = detail.children.filter((c) => c instanceof Element);
const gi = kids.findIndex((e) => e.id === 'grants');
const fi = kids.findIndex((e) => e.tagName === 'H3' && e.textContent === 'Findings');
check(gi === 1, `the grants come right after the title (index ${gi})`);
check(fi > gi, `the grants are above the findings (${gi} < ${fi})`);
const sec = kids[gi];
const headline = sec.find((e) => e.id === 'grants-headline');
check(headline !== null && headline.textContent ===
    'This change grants 1 new unit: /usr/bin/** -> **.pastebin.com:443 opaque, wide: any binary under /usr/bin, ' +
    'any subdomain of pastebin.com at any depth, all traffic, not inspected; prover: no new findings.',
    `the headline: ${headline && headline.textContent}`);
const items = sec.all((e) => hasClass(e, 'grant'));
check(items.length === 1, `one grant listed (${items.length})`);
const line = items[0].find((e) => hasClass(e, 'grant-line'));
check(line.textContent === '+ /usr/bin/** -> **.pastebin.com:443 opaque, all traffic',
    `the grant line: ${line.textContent}`);
const marks = items[0].find((e) => hasClass(e, 'breadth'));
check(marks.textContent === '[binary: glob, host: any-depth, route: opaque, methods: all]',
    `the breadth marks: ${marks.textContent}`);
const wide = items[0].all((e) => hasClass(e, 'wide')).map((e) => e.getAttribute('data-dim'));
check(wide.join(',') === 'binary,host,route,methods', `the wide marks stand out: ${wide.join(',')}`);
const extra = items[0].find((e) => hasClass(e, 'grant-extra'));
check(extra.textContent === 'rule paste; wide: any binary under /usr/bin, any subdomain of pastebin.com at any ' +
    'depth, all traffic, not inspected', `the grant's breadth in words: ${extra.textContent}`);
const nf = detail.find((e) => e.id === 'no-findings');
check(nf !== null && nf.textContent ===
    'No new prover findings; the change grants 1 unit (see "What this change grants" above).',
    `the findings section keeps the grant in view: ${nf && nf.textContent}`);
check(!/nothing new/i.test(detail.textContent), 'no "nothing new" beside a grant');
check(!/null|undefined/.test(sec.textContent), 'no "null" or "undefined" in the section');

// 1b. An approval the envelope made reads as such, never as a person's.
const title = detail.find((e) => e.id === 'detail-title');
check(/APPROVED \(AUTO\)/.test(title.textContent), `the title's badge says auto: ${title.textContent}`);
check(detail.find((e) => hasClass(e, 'chunk-status')).textContent ===
    'approved automatically (within the auto-approval envelope; no reviewer decided it)',
    'the status row says no reviewer decided it');
hook.renderDetail({ ...pasteChunk, auto_approved: false });
check(!/AUTO/.test(detail.find((e) => e.id === 'detail-title').textContent) &&
    detail.find((e) => hasClass(e, 'chunk-status')).textContent === 'approved',
    'negative: a reviewer\'s approval is not marked auto');
hook.renderDetail({ ...pasteChunk, status: 'pending', auto_approved: true });
check(!/AUTO/.test(detail.find((e) => e.id === 'detail-title').textContent),
    'negative: only an approval is marked auto');

// 2. An empty grant list says so, and only then.
hook.renderDetail({ ...pasteChunk, evidence: { prover: { verdict: 'empty', categories: [], grants: [] } } });
check(detail.find((e) => e.id === 'grants-headline').textContent ===
    'This change grants no new or changed unit; prover: no new findings.', 'empty list: the headline says so');
check(detail.find((e) => hasClass(e, 'grants')) === null, 'empty list: no list');

// 3. Evidence without a grant list (no prover run, an older advisor): no
// section, no claim either way.
hook.renderDetail({ ...pasteChunk, evidence: { prover: { verdict: 'empty', categories: [] } } });
check(detail.find((e) => e.id === 'grants') === null, 'no grant list: no grants section');
check(detail.find((e) => e.id === 'no-findings').textContent ===
    'No new prover findings (this evidence lists no grants).', 'no grant list: no claim');
check(!/null/.test(detail.children.filter((c) => c instanceof Text).map((c) => c.data).join()),
    'no stray "null" text in the detail');
hook.renderDetail({ ...pasteChunk, evidence: {} });
check(detail.find((e) => e.id === 'no-findings').textContent === 'No prover evidence for this proposal.',
    'no prover: said as such');

// A changed unit marks the access lines its endpoint gained, as the CLI does.
const grown = hook.grantsSection({ verdict: 'empty', grants: [{ ...pasteGrant, change: 'changed',
    binary: '/usr/bin/curl', host: 'api.github.com', route: 'inspected',
    access: ['GET on every path', 'PUT /repos/o/r/contents/**'], added_access: ['PUT /repos/o/r/contents/**'],
    breadth: { binary: 'exact', host: 'exact', route: 'inspected', methods: 'writes' } }] });
const grownLine = grown.find((e) => hasClass(e, 'grant-line'));
check(grownLine !== null && grownLine.textContent ===
    '~ /usr/bin/curl -> api.github.com:443 inspected, GET on every path, PUT /repos/o/r/contents/** (added)',
    `a changed unit's added access is marked, the rest not: ${grownLine && grownLine.textContent}`);

// 4. Findings and changed units; unknown.
const h = hook.grantsHeadline({ verdict: 'findings', categories: ['capability_expansion'],
    grants: [{ ...pasteGrant, change: 'changed' }, pasteGrant] });
check(h === 'This change grants 1 new unit and 1 changed unit (listed below; 2 of them wide); prover: 1 new ' +
    'finding (capability_expansion).', `findings headline: ${h}`);
// a narrow grant: no words, and the narrow dimensions never marked wide
const narrow = { ...pasteGrant, binary: '/usr/bin/git', host: 'api.github.com', route: 'inspected',
    access: ['GET on every path'], breadth: { binary: 'exact', host: 'exact', route: 'inspected', methods: 'read-only' } };
check(hook.grantsHeadline({ verdict: 'empty', grants: [narrow] }) ===
    'This change grants 1 new unit: /usr/bin/git -> api.github.com:443 inspected; prover: no new findings.',
    'negative: a narrow grant has no "wide:"');
check(hook.grantsHeadline({ verdict: 'empty', grants: [{ ...narrow, binary: '/opt/bin/*', host: '*.example.com',
    breadth: { binary: 'glob', host: 'one-label', route: 'inspected', methods: 'writes' } }] }) ===
    'This change grants 1 new unit: /opt/bin/* -> *.example.com:443 inspected, wide: any binary directly in ' +
    '/opt/bin, any one-label subdomain of example.com, writes; prover: no new findings.',
    'a binary folder, a one-label host and writes in words');
check(hook.grantsHeadline({ verdict: 'unknown', reason_code: 'timeout', grants: [] }) ===
    'This change grants no new or changed unit; prover: undecided (timeout), so not approvable automatically.',
    'unknown headline');

// 5. The proposal list's one line names the grants and what makes them wide.
check(hook.grantsSummary({ grants: [pasteGrant] }) ===
    'grants 1 unit; wide: binary glob, host any-depth, route opaque, methods all',
    `list summary: ${hook.grantsSummary({ grants: [pasteGrant] })}`);
check(hook.grantsSummary({ grants: [{ ...pasteGrant, breadth: { binary: 'exact', host: 'exact',
    route: 'inspected', methods: 'read-only' } }] }) === 'grants 1 unit', 'negative: a narrow grant is not wide');
check(hook.grantsSummary({ verdict: 'empty' }) === null, 'no grant list: no summary');

// 6. The findings table's pattern column: the proposed rule's pattern
// that opens a path, picked by host glob, port, method and path; the
// witness never stands in for it.
const rp = hook.rulePattern;
const rule = { endpoints: [
    { host: '*.example.org', port: 443, protocol: 'rest',
        rules: [{ allow: { method: 'GET', path: '/v1/items/**' } }, { allow: { method: 'POST', path: '/v1/a.b' } },
            { allow: { method: 'GET', path: '/v2/*' } }] },
    { host: 'files.example.org', ports: [8443], access: 'read-write' },
    { host: 'db.internal', port: 5432 },
] };
const wit = (method, path, host = 'api.example.org', port = 443) =>
    ({ host, port, rule: 'r', witness: { host, port, method, path } });
check(rp(rule, wit('GET', '/v1/items/7/x')) === 'GET /v1/items/**', 'pattern: ** spans segments');
check(rp(rule, wit('GET', '/v2/x')) === 'GET /v2/*', 'pattern: * is one segment');
check(rp(rule, wit('POST', '/v1/a.b')) === 'POST /v1/a.b', 'pattern: literal dot');
check(rp(rule, wit('POST', '/v1/aXb')) === 'POST /v1/a.b',
    'negative: a dot is not a regex wildcard (no path matches: the method\'s patterns are listed)');
check(rp(rule, wit('GET', '/v2/x/y')) === 'GET /v1/items/**, GET /v2/*',
    'negative: * does not span a slash (no match: the GET patterns are listed, never the witness path)');
check(rp(rule, wit('GET', '/v1/items/1', 'a.b.example.org')) === 'through rule r',
    'negative: *.example.org is one label: a deeper host names the rule instead');
check(rp(rule, wit('GET', '/v1/items/1', 'api.example.org', 8443)) === 'through rule r',
    'negative: another port is not this endpoint');
check(rp(rule, wit('PUT', '/x', 'files.example.org', 8443)) === 'access read-write (its methods on /**)',
    'pattern: an access preset, ports list');
check(rp(rule, wit(null, null, 'db.internal', 5432)) === 'all traffic (not inspected)', 'pattern: an L4 endpoint');
// an inspected endpoint without rules is never called "not inspected"
check(rp({ endpoints: [{ host: 'i.example', port: 443, protocol: 'rest' }] }, wit('GET', '/x', 'i.example', 443)) ===
    'every request (rest, audit mode: not enforced)', 'pattern: an inspected endpoint in audit mode');
check(rp({ endpoints: [{ host: 'i.example', port: 443, protocol: 'rest', enforcement: 'enforce' }] },
    wit('GET', '/x', 'i.example', 443)) === 'no request (rest endpoint without allow rules)',
'pattern: an enforced endpoint without allow rules');
check(rp({ endpoints: [{ host: 'i.example', port: 443, protocol: 'rest', tls: 'skip' }] },
    wit('GET', '/x', 'i.example', 443)) === 'all traffic (not inspected)', 'pattern: tls skip is not inspected');
check(rp(null, wit('GET', '/')) === 'through rule r', 'no proposed rule: the granting rule is named');
check(hook.findingsCount({ findings: [{ category: 'a', paths: [{}, {}] }] }) === '1 finding, 2 paths',
    'count: 1 finding over 2 paths is said as such');
check(hook.findingsCount({ findings: [{ category: 'a', paths: [{}], paths_total: 1500 },
    { category: 'b', paths: [{}] }] }) === '2 findings, 1501 paths (2 listed)', 'count: a truncated list says so');

// 6b. GraphQL: the pattern is the operation rule that admits the witness's
// operation (type, name, every field under one rule), never a method and
// path the rule does not have; the witness curl carries the operation.
const grule = { endpoints: [{ host: 'api.github.com', port: 443, path: '/graphql', protocol: 'graphql',
    rules: [{ allow: { operation_type: 'query', fields: ['viewer'] } },
        { allow: { operation_type: 'mutation', operation_name: 'Issue*', fields: ['createIssue', 'close*'] } }] }] };
const gw = (type, name, fields) => ({ host: 'api.github.com', port: 443, rule: 'g',
    witness: { host: 'api.github.com', port: 443, method: 'POST', path: '/graphql',
        graphql: { operation_type: type, operation_name: name, fields } } });
check(rp(grule, gw('mutation', 'IssueNew', ['createIssue', 'closeIssue'])) === 'mutation Issue* {createIssue, close*}',
    'graphql pattern: type, name glob and the fields of one rule');
check(rp(grule, gw('query', null, ['viewer'])) === 'query {viewer}', 'graphql pattern: an anonymous query');
check(rp(grule, gw('mutation', null, ['createIssue'])) === 'through rule g',
    'negative: an anonymous operation does not match a rule with operation_name');
check(rp(grule, gw('mutation', 'IssueNew', ['deleteRepository'])) === 'through rule g',
    'negative: a field no glob of the rule covers');
check(hook.curlLine(gw('mutation', 'IssueNew', ['createIssue']).witness).includes(
    `--data '{"query":"mutation IssueNew { createIssue }"}'`), 'the witness curl carries the operation');
check(!hook.curlLine({ host: 'h', port: 443, method: 'GET', path: '/' }).includes('--data'),
    'negative: a REST witness has no body');

// 6c. The policy diff (docs/advisor.md#diff): a line each, classed by its
// mark - the hunk's "@@ PATH @@" header, context (' '), removed ('-'),
// added ('+') - the marks kept in the text; a diff stored before hunks
// (every line '-' or '+') reads the same way.
const diffLines = (diff) => {
    hook.renderDetail({ ...pasteChunk, evidence: { ...pasteChunk.evidence, diff } });
    const p = detail.find((e) => e.tagName === 'PRE' && hasClass(e, 'diff'));
    return p === null ? null : { text: p.textContent,
        lines: p.all((e) => hasClass(e, 'line')).map((e) => [e.attrs.class.split(/\s+/)[1], e.textContent]) };
};
const unified = '@@ network_policies > github > endpoints[api.github.com] > rules @@\n' +
    '       - allow:\n           method: GET\n           path: /repos/**\n' +
    '+      - allow:\n+          method: POST\n+          path: /repos/o/r/issues\n' +
    '-      access: read-only\n       port: 443\n';
const dl = diffLines(unified);
check(dl !== null && dl.text === unified, 'the diff\'s text is the evidence\'s, marks and all');
check(dl !== null && JSON.stringify(dl.lines.map((l) => l[0])) === JSON.stringify(
    ['hunk', 'ctx', 'ctx', 'ctx', 'add', 'add', 'add', 'del', 'ctx']),
`each diff line is classed by its mark: ${dl && dl.lines.map((l) => l[0]).join(',')}`);
check(dl !== null && dl.lines.length > 8 && dl.lines[8][1] === '       port: 443\n', 'a context line is shown as it is');
const legacy = diffLines('-      access: read-only\n-      port: 443\n+      port: 443\n');
check(legacy !== null && legacy.lines.map((l) => l[0]).join() === 'del,del,add' &&
    legacy.text === '-      access: read-only\n-      port: 443\n+      port: 443\n',
'a diff stored before hunks: its lines marked, no header made up');
const none = diffLines('');
check(none !== null && none.text === '(empty)' && none.lines.length === 0, 'no diff: "(empty)"');

// 7. The file carries no "nothing new" wording at all.
check(!/nothing new/i.test(src), 'app.js has no "nothing new" text');

process.exit(failed ? 1 : 0);
