#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# ws_attack.py - a hostile WebSocket client and a raw logging upstream for
# tests/e2e/proxy_attacks_ws_cred.sh (the standard library only)
#
#   upstream : listens on 127.0.0.1 (port 0, written to --port-file) and logs
#              every request head it gets ("HEAD <request line>", then
#              "HDR name: value" per field) and every client frame after a
#              101, unmasked ("FRAME op fin hex-payload" and "TEXT payload"
#              for a whole text message), to --log. It answers a
#              WebSocket upgrade with a correct 101; with --always-101 it
#              answers 101 to every request, upgrade or not (then logs the
#              raw bytes that follow as "RAW hex"); other requests get 200.
#   client   : opens a CONNECT tunnel through --proxy to --port (or uses the
#              forward path with --forward) and sends one --scenario of hand-
#              written bytes; prints "STATUS n" for the first response and
#              "CLOSED code reason" for a close frame it gets back, "TIMEOUT"
#              when nothing came, "EOF" when the connection ended.
import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(op, payload, fin=True, mask=True, rsv=0, length=None):
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    n = len(payload) if length is None else length
    m = 0x80 if mask else 0
    if n < 126:
        h = struct.pack("!BB", b0, m | n)
    elif n < 65536:
        h = struct.pack("!BBH", b0, m | 126, n)
    else:
        h = struct.pack("!BBQ", b0, m | 127, n)
    if not mask:
        return h + payload
    k = os.urandom(4)
    return h + k + bytes(b ^ k[i % 4] for i, b in enumerate(payload))


def text(s, **kw):
    return frame(1, s.encode() if isinstance(s, str) else s, **kw)


# --------------------------------------------------------------------------
# upstream


def read_head(c, buf):
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None, buf
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head.decode(errors="replace"), rest


def log_frames(c, buf, log):
    msg = b""
    mop = 0
    c.settimeout(5)
    while True:
        while len(buf) >= 2:
            b0, b1 = buf[0], buf[1]
            n = b1 & 0x7F
            off = 2
            if n == 126:
                if len(buf) < 4:
                    break
                n = struct.unpack("!H", buf[2:4])[0]
                off = 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n = struct.unpack("!Q", buf[2:10])[0]
                off = 10
            masked = b1 & 0x80
            if masked:
                off += 4
            if len(buf) < off + n:
                break
            k = buf[off - 4:off] if masked else b"\0\0\0\0"
            pl = bytes(b ^ k[i % 4] for i, b in enumerate(buf[off:off + n]))
            op, fin = b0 & 0x0F, bool(b0 & 0x80)
            log.write("FRAME %d %d %s\n" % (op, fin, pl[:64].hex()))
            if op in (0, 1, 2):
                mop = op if op != 0 else mop
                msg += pl
                if fin:
                    log.write("%s %s\n" % ("TEXT" if mop == 1 else "BINMSG", msg.decode(errors="replace")))
                    msg = b""
            buf = buf[off + n:]
            if op == 8:
                c.close()
                return
        try:
            d = c.recv(65536)
        except OSError:
            d = b""
        if not d:
            return
        buf += d


def serve(c, a, log):
    buf = b""
    try:
        while True:
            head, buf = read_head(c, buf)
            if head is None:
                return
            lines = head.split("\r\n")
            log.write("HEAD %s\n" % lines[0])
            key = None
            up = False
            clen = 0
            for l in lines[1:]:
                n, _, v = l.partition(":")
                log.write("HDR %s: %s\n" % (n, v.strip()))
                if n.strip().lower() == "sec-websocket-key":
                    key = v.strip()
                if n.strip().lower() == "upgrade":
                    up = True
                if n.strip().lower() == "content-length":
                    clen = int(v.strip())
            while len(buf) < clen:
                d = c.recv(65536)
                if not d:
                    break
                buf += d
            if clen:
                log.write("BODY %s\n" % buf[:clen].decode(errors="replace"))
                buf = buf[clen:]
            if up or a.always_101:
                acc = base64.b64encode(hashlib.sha1((key or "").encode() + GUID).digest()).decode()
                c.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" % acc).encode())
                if up and key:
                    log_frames(c, buf, log)
                    return
                c.settimeout(3)
                while True:
                    if buf:
                        log.write("RAW %s\n" % buf.hex())
                        log.write("RAWTEXT %s\n" % buf.decode(errors="replace"))
                    try:
                        buf = c.recv(65536)
                    except OSError:
                        return
                    if not buf:
                        return
            body = b"ok\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    finally:
        c.close()


def upstream(a):
    log = open(a.log, "a", buffering=1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a.bind, 0))
    s.listen(64)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(a.port_file + ".tmp", a.port_file)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, a, log), daemon=True).start()


# --------------------------------------------------------------------------
# client


def upgrade_req(a, path=None, extra="", version="1.1", conn="Upgrade"):
    extra += a.header
    key = base64.b64encode(os.urandom(16)).decode()
    target = path if path is not None else a.path
    if a.forward:
        target = "http://127.0.0.1:%d%s" % (a.port, target)
    return ("GET %s HTTP/%s\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: %s\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n"
            % (target, version, a.port, conn, key, extra)).encode()


def gql(op_id, query, typ="subscribe", **extra):
    p = {"query": query}
    p.update(extra)
    return json.dumps({"id": op_id, "type": typ, "payload": p})


SUB_OK = "subscription { messageAdded { id } }"
MUT = "mutation { deleteRepo(id: 1) { id } }"


def scenario(a):
    """A list of byte strings to send after the tunnel (each after a short
    pause), and whether the first one is the upgrade request."""
    s = a.scenario
    up = upgrade_req(a)
    if s == "frag-ping":  # a denied text split around a ping
        return [up, text("frag-secret-", fin=False), frame(9, b"p"), frame(0, b"one")]
    if s == "frag-reload":  # a message whose fragments straddle a reload (--gap)
        return [up, text("rl-secret-", fin=False), frame(0, b"end")]
    if s == "frag-many-ping":
        out = [up, text("fm-secret-", fin=False)]
        for i in range(20):
            out += [frame(9, b"x"), frame(0, b"%d-" % i, fin=False)]
        return out + [frame(0, b"end")]
    if s == "cont-after-deny":  # a denied message, then a continuation and a new text
        return [up, text("cad-secret-1") + frame(0, b"cad-secret-2") + text("cad-secret-3")]
    if s == "binary-then-cont-text":  # binary start, text continuation
        return [up, frame(2, b"bin-", fin=False) + frame(0, b"btc-secret")]
    if s == "ext-case":
        return [upgrade_req(a, extra="sec-websocket-EXTENSIONS: permessage-deflate\r\n"
                                    "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n"
                                    "SEC-WEBSOCKET-EXTENSIONS:permessage-deflate\r\n"),
                text(b"\x0b\xc9\xc8\x2c\x06\x00", rsv=4)]
    if s == "ext-space":  # a space before the colon: not a field (RFC 9112 5.1)
        return [upgrade_req(a, extra="Sec-WebSocket-Extensions : permessage-deflate\r\n"),
                text("es-secret")]
    if s == "ext-fold":  # an obs-fold continuation line
        return [upgrade_req(a, extra="X-A: 1\r\n Sec-WebSocket-Extensions: permessage-deflate\r\n"),
                text("ef-secret")]
    if s == "pipelined":  # frames in the same write as the upgrade, before any 101
        return [up + text("pipe-secret-1") + text("pipe-secret-2")]
    if s == "pipelined-http":  # a denied HTTP request after the upgrade, before the 101
        return [up + ("GET /v1/admin/pipe-http-secret HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
                      % a.port).encode()]
    if s == "keepalive-then-upgrade":
        return [("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (a.path, a.port)).encode(), up,
                text("ka-secret")]
    if s == "no-conn-upgrade":
        return [upgrade_req(a, conn="keep-alive"), text("nc-secret")]
    if s == "http10":
        return [upgrade_req(a, version="1.0"), text("h10-secret")]
    if s == "plain-then-raw":  # a plain GET the upstream answers 101, then raw bytes
        return [("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (a.path, a.port)).encode(),
                ("GET /v1/admin/raw-secret HTTP/1.1\r\nHost: x\r\n\r\n").encode() + text("r101-secret")]
    if s == "huge-length":
        return [up, frame(1, b"", length=(1 << 62))]
    if s == "slow-frame":  # one byte of a frame head, then nothing
        return [up, b"\x81"]
    if s == "frags-1mib":  # a 1 MiB text message as 100,000 fragments
        chunk = b"a" * 10
        parts = [text(chunk, fin=False)]
        parts += [frame(0, chunk, fin=False) for _ in range(99998)]
        parts.append(frame(0, b"a" * (1048576 - 10 * 99999)))
        return [up, b"".join(parts)]
    if s == "empty-frags":  # 200,000 empty fragments: nothing grows
        parts = [text(b"", fin=False)] + [frame(0, b"", fin=False) for _ in range(200000)]
        return [up, b"".join(parts) + frame(0, b"ef-done")]
    # GraphQL over WebSocket (the upstream has GraphQL rules)
    if s == "gql-binary-text":  # an allowed text first, then the binary one
        return [up, text(gql("0", SUB_OK)), frame(2, gql("1", MUT).encode())]
    if s == "gql-binary":
        return [up, frame(2, gql("1", MUT).encode())]
    if s.startswith("gql:"):
        return [up, text(s[4:])]
    raise SystemExit("unknown scenario %s" % s)


def report(s, deadline):
    buf = b""
    status = None
    s.settimeout(0.3)
    while time.time() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            d = b""
        if not d:
            if status is None:
                print("EOF")
            break
        buf += d
        if status is None and b"\r\n\r\n" in buf:
            head, _, buf = buf.partition(b"\r\n\r\n")
            status = head.split(b" ")[1].decode(errors="replace")
            print("STATUS %s" % status)
        while status == "101" and len(buf) >= 2:
            n = buf[1] & 0x7F
            off = 2
            if n == 126:
                n = struct.unpack("!H", buf[2:4])[0]
                off = 4
            if len(buf) < off + n:
                break
            op, pl = buf[0] & 0x0F, buf[off:off + n]
            buf = buf[off + n:]
            if op == 8:
                code = struct.unpack("!H", pl[:2])[0] if len(pl) >= 2 else 0
                print("CLOSED %d %s" % (code, pl[2:].decode(errors="replace")))
                return
            print("FRAME %d %s" % (op, pl[:80].decode(errors="replace")))
    else:
        print("TIMEOUT")


def client(a):
    s = socket.create_connection(("127.0.0.1", a.proxy), timeout=5)
    if not a.forward:
        s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (a.port, a.port))
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = s.recv(4096)
            if not d:
                print("CONNECT-FAILED")
                return
            buf += d
        if b" 200 " not in buf.split(b"\r\n")[0] + b" ":
            print("CONNECT-FAILED %s" % buf.split(b"\r\n")[0].decode())
            return
    parts = scenario(a)
    t0 = time.time()
    for i, p in enumerate(parts):
        try:
            s.sendall(p)
        except OSError:
            print("SEND-FAILED")
            break
        if i == 0 and len(parts) > 1:
            time.sleep(0.3)
        elif i + 1 < len(parts):
            time.sleep(a.gap)
    if a.scenario in ("frags-1mib", "empty-frags"):
        print("SENT %.2f" % (time.time() - t0))
    report(s, time.time() + a.wait)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["upstream", "client"])
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--always-101", action="store_true")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--proxy", type=int)
    ap.add_argument("--port", type=int)
    ap.add_argument("--path", default="/")
    ap.add_argument("--forward", action="store_true")
    ap.add_argument("--scenario")
    ap.add_argument("--header", default="", help="one more field for the upgrade, CRLF included")
    ap.add_argument("--wait", type=float, default=3)
    ap.add_argument("--gap", type=float, default=0, help="seconds between the later parts")
    a = ap.parse_args()
    if a.mode == "upstream":
        try:
            upstream(a)
        except KeyboardInterrupt:
            pass
    else:
        client(a)


if __name__ == "__main__":
    main()
