#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""rpc_upstream.py - a JSON-RPC / MCP server stand-in on loopback that logs what it got

usage: rpc_upstream.py PORTFILE LOGFILE [CERT KEY]
Listens on 127.0.0.1 (a free port, written to PORTFILE; TLS with CERT and KEY
when given) and appends one JSON line per request to LOGFILE:
{"method", "path", "body", "session"} - what reached the upstream, for the
test to judge. Answers: a POST with {"jsonrpc":"2.0","id":ID,"result":{"echo":
METHOD}} per request of the body (an array for a batch; 202 and no body when
it holds none); a GET with Accept: text/event-stream with an event stream of
two events sent 0.3 s apart (the test sees the first before the second was
written: the proxy relays unbuffered), or with "quiet" in its query one event
and then nothing, until the connection closes (at most 10 s), logged as a
{"method": "QUIET", "closed_after": SECONDS or null} line; a DELETE with 200.
"""
import json
import select
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return raw
                raw += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def record(self, raw):
        with open(sys.argv[2], "a", encoding="utf-8") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "body": raw.decode("utf-8", "replace"),
                                "session": self.headers.get("Mcp-Session-Id", "")}) + "\n")

    def send(self, code, out, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(out)))
        self.send_header("Mcp-Session-Id", "s-1")
        self.end_headers()
        self.wfile.write(out)

    def do_POST(self):
        raw = self.body()
        self.record(raw)
        try:
            doc = json.loads(raw)
        except ValueError:
            self.send(400, b'{"error":"not json"}')
            return
        msgs = doc if isinstance(doc, list) else [doc]
        answers = [{"jsonrpc": "2.0", "id": m["id"], "result": {"echo": m.get("method")}}
                   for m in msgs if isinstance(m, dict) and "id" in m and "method" in m]
        if not answers:
            self.send(202, b"")
            return
        out = answers if isinstance(doc, list) else answers[0]
        self.send(200, json.dumps(out).encode())

    def do_GET(self):
        raw = self.body()
        self.record(raw)
        if "text/event-stream" not in self.headers.get("Accept", ""):
            self.send(405, b'{"error":"no stream"}')
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/one"}\n\n')
        self.wfile.flush()
        if "quiet" in self.path:
            # a quiet stream: wait for the other side to close, writing nothing
            t0 = time.monotonic()
            closed = None
            while time.monotonic() - t0 < 10:
                r, _, _ = select.select([self.connection], [], [], 0.05)
                if r and not self.connection.recv(1, 0):
                    closed = round(time.monotonic() - t0, 3)
                    break
            with open(sys.argv[2], "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": "QUIET", "path": self.path,
                                    "closed_after": closed}) + "\n")
            self.close_connection = True
            return
        time.sleep(0.3)
        self.wfile.write(b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/two"}\n\n')
        self.wfile.flush()
        self.close_connection = True

    def do_DELETE(self):
        self.record(self.body())
        self.send(200, b"")

    do_PUT = do_POST

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
