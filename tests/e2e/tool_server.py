#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# tool_server.py - a host-side tool server in Python for the e2e tests of
# `proviso run` and tool discovery (standard library only).
#
#   tool_server.py --port P --token-file F [--log FILE] [--ignore-term]
#
# The uniform process contract (docs/advisor.md#tools): listens on
# 127.0.0.1:P; GET /healthz answers 200; GET /openapi.json describes the
# operations below; every operation needs "Authorization: Bearer TOKEN" and
# appends "METHOD PATH" to --log; SIGTERM stops it with status 0, unless
# --ignore-term (to test that the orchestrator kills what outlives its grace).
#
#   GET  /repos/{owner}/{repo}   one repository
#   POST /repos/{owner}/{repo}/scan   start a scan
import argparse
import json
import re
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "repos", "version": "1"},
    "servers": [{"url": "http://127.0.0.1"}],
    "paths": {
        "/repos/{owner}/{repo}": {
            "parameters": [
                {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "get": {"operationId": "get_repo", "summary": "Get a repository"},
        },
        "/repos/{owner}/{repo}/scan": {
            "parameters": [
                {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "post": {"operationId": "scan_repo", "summary": "Scan a repository"},
        },
    },
}
ROUTES = [("GET", re.compile(r"^/repos/[^/]+/[^/]+$")),
          ("POST", re.compile(r"^/repos/[^/]+/[^/]+/scan$"))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--ignore-term", action="store_true")
    a = ap.parse_args()
    with open(a.token_file) as f:
        token = f.read().strip()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, obj):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def serve(self, method):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            if method == "GET" and self.path == "/healthz":
                return self.answer(200, {"ok": True})
            if method == "GET" and self.path == "/openapi.json":
                return self.answer(200, OPENAPI)
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.answer(401, {"error": "unauthorized"})
            if a.log:
                with open(a.log, "a") as f:
                    f.write("%s %s\n" % (method, self.path))
            for m, rx in ROUTES:
                if m == method and rx.match(self.path):
                    return self.answer(200, {"ok": True})
            return self.answer(404, {"error": "not_found"})

        def do_GET(self):
            self.serve("GET")

        def do_POST(self):
            self.serve("POST")

        def do_DELETE(self):
            self.serve("DELETE")

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    if a.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        srv.serve_forever()
    except SystemExit:
        srv.server_close()
        raise


if __name__ == "__main__":
    main()
