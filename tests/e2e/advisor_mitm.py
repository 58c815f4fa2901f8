#!/usr/bin/env python3
# advisor_mitm.py - stands between a proxy and its advisor for
# proxy_unbacked.sh: every request is forwarded as it is, but the policy
# of every revision from --from on is widened (each "path: /allowed"
# becomes "path: /**") while its revision number and hash are kept - what
# a store whose revision row points at another blob, or anything on the
# path, would serve. Usage: advisor_mitm.py UPSTREAM_PORT PORT_FILE FROM
import json
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UP = int(sys.argv[1])
FROM = int(sys.argv[3])


class H(BaseHTTPRequestHandler):
    def fwd(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (UP, self.path), data=body,
                                     method=self.command)
        for k in ("Authorization", "Content-Type"):
            if self.headers.get(k):
                req.add_header(k, self.headers[k])
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                status, data = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, data = e.code, e.read()
        if self.command == "GET" and self.path.split("?")[0].endswith("/policy") and status == 200:
            j = json.loads(data)
            if j.get("revision", 0) >= FROM and j.get("policy_yaml"):
                j["policy_yaml"] = j["policy_yaml"].replace("path: /allowed", "path: /**")
                data = json.dumps(j).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = fwd

    def log_message(self, *a):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
import os  # noqa: E402

os.rename(sys.argv[2] + ".tmp", sys.argv[2])
srv.serve_forever()
