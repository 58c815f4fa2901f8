#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# fake_prover.py - a "prover" that answers badly, for tests/e2e/advisor_pool.sh
#
#   fake_prover.py MODE PORTFILE
#
# Listens on 127.0.0.1 (a free port, written to PORTFILE). GET /healthz
# answers 200 {"status":"ok"} in every mode, so the advisor keeps taking it
# back into its pool, and the number of /healthz asked is written to
# PORTFILE.health after each; in two modes it is slow:
#   slowsecond the second /healthz waits 1.5 s before its answer (the
#              advisor asks the first at start-up, the second 2 s later)
#   slow       every /healthz waits 1.5 s
# Every POST is answered according to MODE:
#   garbage    200, a body that is not JSON
#   truncated  200, the first bytes of a verdict "empty" answer, then the
#              connection closes (no Content-Length: the body just ends)
#   short      200 with a Content-Length larger than the bytes sent
#   noverdict  200, a JSON object without a verdict
#   error      503
# The number of POSTs answered is appended to PORTFILE.count after each.
import http.server
import socketserver
import sys
import threading
import time

MODE = sys.argv[1]
PORTFILE = sys.argv[2]
EMPTY = b'{"verdict":"empty","validation_result":"prover: no new findings","grants":[]}'
COUNT = 0
HEALTH = 0
LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        global HEALTH
        body = b'{"status":"ok"}'
        if self.path == "/healthz":
            with LOCK:
                HEALTH += 1
                n = HEALTH
                with open(PORTFILE + ".health", "w") as f:
                    f.write(str(n))
            if MODE == "slow" or (MODE == "slowsecond" and n == 2):
                time.sleep(1.5)
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        global COUNT
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        COUNT += 1
        with open(PORTFILE + ".count", "w") as f:
            f.write(str(COUNT))
        if MODE == "error":
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if MODE == "garbage":
            body = b"<html>this is not a prover</html>"
            self.send_header("Content-Length", str(len(body)))
        elif MODE == "truncated":
            body = EMPTY[: len(EMPTY) // 2]
        elif MODE == "short":
            body = EMPTY[:20]
            self.send_header("Content-Length", str(len(EMPTY)))
        else:
            body = b'{"validation_result":"prover: no new findings"}'
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402

os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
