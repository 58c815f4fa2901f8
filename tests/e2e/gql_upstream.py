#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gql_upstream.py - a GraphQL server stand-in on loopback that logs what it got

usage: gql_upstream.py PORTFILE LOGFILE [CERT KEY]
Listens on 127.0.0.1 (a free port, written to PORTFILE; TLS with CERT and
KEY when given), answers every
request 200 {"data":{}} and appends one JSON line per request to LOGFILE:
{"method", "path", "body"} - what reached the upstream, for the test to judge.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_one(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
        body = raw.decode("utf-8", "replace")
        with open(sys.argv[2], "a", encoding="utf-8") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")
        out = b'{"data":{}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = handle_one

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if len(sys.argv) > 4:
    import ssl  # noqa: E402

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(sys.argv[1] + ".tmp", "w", encoding="utf-8") as f:
    f.write("%d\n" % srv.server_address[1])
import os  # noqa: E402

os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
