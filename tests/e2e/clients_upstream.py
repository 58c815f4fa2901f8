# SPDX-License-Identifier: Apache-2.0
"""clients_upstream.py - the HTTPS upstream of tests/e2e/clients_*.sh.

One loopback server for the real clients (git, pip, npm, Python requests,
curl): it serves

  /git/...   git's smart HTTP protocol, by running `git http-backend` as a
             CGI program over the repositories under --git-root;
  /echo...   a JSON description of the request (method, target, the
             header names, the body length and its SHA-256);
  anything   else a file under --root (a directory answers with its
             index.html or index.json).

Every request is logged to --log as one line "METHOD TARGET" before it is
answered, so a test can tell what reached the upstream and what did not.
HTTP/1.1 with keep-alive; request bodies may be chunked or sized; answers
always carry Content-Length. Usage:

  clients_upstream.py [--cert PEM --key PEM] --root DIR --git-root DIR \
      --log FILE --port-file FILE [--port N]

(without --cert it speaks plain HTTP; without --port it takes a free port).
"""

import argparse
import hashlib
import http.server
import json
import os
import ssl
import subprocess
import sys
import threading

TYPES = {
    ".html": "text/html",
    ".json": "application/json",
    ".whl": "application/octet-stream",
    ".tgz": "application/octet-stream",
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "clients-upstream"

    def log_message(self, fmt, *args):
        pass

    def note(self):
        with self.server.log_lock:
            with open(self.server.opts.log, "a", encoding="utf-8") as f:
                f.write("%s %s\n" % (self.command, self.path))

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline(16)
        n = int(self.headers.get("Content-Length", "0") or "0")
        return self.rfile.read(n) if n > 0 else b""

    def answer(self, status, ctype, body, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or []):
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        self.note()
        body = self.read_body()
        path, _, query = self.path.partition("?")
        if path.startswith("/git/"):
            return self.git(path[len("/git"):], query, body)
        if path.startswith("/echo"):
            desc = {
                "method": self.command,
                "target": self.path,
                "headers": sorted(k.lower() for k in self.headers.keys()),
                "host": self.headers.get("Host", ""),
                "body_length": len(body),
                "body_sha256": hashlib.sha256(body).hexdigest(),
                "protocol": self.request_version,
            }
            return self.answer(200, "application/json",
                               json.dumps(desc).encode() + b"\n")
        return self.static(path)

    def static(self, path):
        root = os.path.realpath(self.server.opts.root)
        full = os.path.realpath(os.path.join(root, path.lstrip("/")))
        if full != root and not full.startswith(root + os.sep):
            return self.answer(404, "text/plain", b"not found\n")
        if os.path.isdir(full):
            for index in ("index.html", "index.json"):
                if os.path.isfile(os.path.join(full, index)):
                    full = os.path.join(full, index)
                    break
        if not os.path.isfile(full):
            return self.answer(404, "text/plain", b"not found\n")
        ctype = TYPES.get(os.path.splitext(full)[1], "application/octet-stream")
        with open(full, "rb") as f:
            return self.answer(200, ctype, f.read())

    def git(self, path_info, query, body):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.opts.git_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path_info,
            "QUERY_STRING": query,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
        }
        for k, v in self.headers.items():
            name = "HTTP_" + k.upper().replace("-", "_")
            if name not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"):
                env[name] = v
        run = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True, check=False)
        out = run.stdout
        head, sep, rest = out.partition(b"\r\n\r\n")
        if not sep:
            head, sep, rest = out.partition(b"\n\n")
        if not sep:
            msg = b"git http-backend failed: " + run.stderr[-400:]
            return self.answer(500, "text/plain", msg)
        status, ctype, extra = 200, "text/plain", []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k.lower() == "content-type":
                ctype = v
            elif k and k.lower() != "content-length":
                extra.append((k, v))
        return self.answer(status, ctype, rest, extra)

    do_GET = do_POST = do_HEAD = do_PUT = handle_any


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--root", "--git-root", "--log", "--port-file"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--cert", help="PEM certificate (without it: plain HTTP)")
    ap.add_argument("--key")
    ap.add_argument("--port", type=int, default=0, help="default: any free port")
    opts = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", opts.port), Handler)
    srv.daemon_threads = True
    srv.opts = opts
    srv.log_lock = threading.Lock()
    if opts.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts.cert, opts.key)
        ctx.set_alpn_protocols(["http/1.1"])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = opts.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, opts.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
