#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# ws_client.py - WebSocket clients for tests/e2e/proxy_websocket.sh
#
#   lib  : the websockets library through a CONNECT tunnel of the proxy
#          (plaintext, or TLS intercepted with --ca); actions text:S,
#          binary:HEX, sleep:S, bench:N (N echoed round trips, prints us per
#          message); --proxy 0 goes straight to the upstream (the baseline)
#   raw  : a hand-written client (CONNECT, or the forward path with --forward)
#          that sends one scenario of frames, some of them protocol
#          violations, and prints the close frame it gets back
# Output: one line per event ("STATUS n", "ECHO TEXT s", "ECHO BINARY hex",
# "CLOSED code reason", "BENCH n us").
import argparse
import asyncio
import base64
import os
import socket
import ssl
import struct
import sys
import time

import websockets
import websockets.client


def tunnel(proxy, host, port):
    s = socket.create_connection(("127.0.0.1", proxy), timeout=5)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    line = buf.split(b"\r\n", 1)[0]
    if b" 200 " not in line + b" ":
        print("CONNECT-FAILED %s" % line.decode(errors="replace"))
        sys.exit(0)
    return s


async def lib(a):
    # --proxy 0: straight to the upstream (the cost baseline)
    s = tunnel(a.proxy, a.host, a.port) if a.proxy else socket.create_connection((a.host, a.port), timeout=5)
    ctx = None
    scheme = "ws"
    if a.ca:
        ctx = ssl.create_default_context(cafile=a.ca)
        scheme = "wss"
    uri = "%s://%s:%d%s" % (scheme, a.host, a.port, a.path)
    try:
        ws = await websockets.client.connect(uri, sock=s, ssl=ctx, server_hostname=a.host if ctx else None,
                                             open_timeout=5, close_timeout=2, max_size=4 * 1024 * 1024)
    except websockets.InvalidStatusCode as e:
        print("STATUS %d" % e.status_code)
        return
    except Exception as e:  # noqa: BLE001 - the test wants the failure's name
        print("HANDSHAKE-FAILED %s" % type(e).__name__)
        return
    print("STATUS 101")
    try:
        for act in a.actions:
            kind, _, arg = act.partition(":")
            if kind == "text":
                await ws.send(arg)
                m = await asyncio.wait_for(ws.recv(), 5)
                print("ECHO TEXT %s" % m if isinstance(m, str) else "ECHO BINARY %s" % m.hex())
            elif kind == "binary":
                await ws.send(bytes.fromhex(arg))
                m = await asyncio.wait_for(ws.recv(), 5)
                print("ECHO TEXT %s" % m if isinstance(m, str) else "ECHO BINARY %s" % m.hex())
            elif kind == "sleep":
                await asyncio.sleep(float(arg))
            elif kind == "bench":
                n = int(arg)
                t0 = time.perf_counter()
                for i in range(n):
                    await ws.send("m%d" % i)
                    await ws.recv()
                dt = time.perf_counter() - t0
                print("BENCH %d %.1f" % (n, dt * 1e6 / n))
        await ws.close()
        print("CLOSED %s %s" % (ws.close_code, ws.close_reason))
    except websockets.ConnectionClosed as e:
        print("CLOSED %s %s" % (e.code, e.reason))


def frame(op, payload, fin=True, mask=True, rsv=0, length=None):
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    n = len(payload) if length is None else length
    if n < 126:
        h = struct.pack("!BB", b0, (0x80 if mask else 0) | n)
    elif n < 65536:
        h = struct.pack("!BBH", b0, (0x80 if mask else 0) | 126, n)
    else:
        h = struct.pack("!BBQ", b0, (0x80 if mask else 0) | 127, n)
    if not mask:
        return h + payload
    k = os.urandom(4)
    return h + k + bytes(b ^ k[i % 4] for i, b in enumerate(payload))


SCENARIOS = {
    "hello": [frame(1, b"raw-hello")],
    "unmasked": [frame(1, b"unmasked-secret", mask=False)],
    "reserved-opcode": [frame(3, b"x")],
    "rsv": [frame(1, b"rsv-secret", rsv=4)],
    # U+00E9 split across two fragments is fine; a lone continuation byte is not
    "utf8-split-ok": [frame(1, b"split-\xc3", fin=False), frame(0, b"\xa9-ok")],
    "utf8-split-bad": [frame(1, b"bad-\xc3", fin=False), frame(0, b"\x28-utf8")],
    "too-big": [frame(2, b"", length=2 * 1024 * 1024)],
    "control-too-big": [frame(9, b"p" * 126)],
    "fragmented-ping": [frame(9, b"p", fin=False)],
    "continuation-first": [frame(0, b"cont-secret")],
    "ping": [frame(9, b"are-you-there")],
}


def read_frames(s, want_close=True):
    buf = b""
    out = []
    s.settimeout(5)
    while True:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        buf += d
        while len(buf) >= 2:
            op = buf[0] & 0x0F
            n = buf[1] & 0x7F
            off = 2
            if n == 126:
                n = struct.unpack("!H", buf[2:4])[0]
                off = 4
            elif n == 127:
                n = struct.unpack("!Q", buf[2:10])[0]
                off = 10
            if len(buf) < off + n:
                break
            out.append((op, buf[off:off + n]))
            buf = buf[off + n:]
            if op == 8:
                return out
        if not want_close and out:
            return out
    return out


def raw(a):
    if a.forward:
        s = socket.create_connection(("127.0.0.1", a.proxy), timeout=5)
        target = "http://%s:%d%s" % (a.host, a.port, a.path)
    else:
        s = tunnel(a.proxy, a.host, a.port)
        target = a.path
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n"
               % (target, a.host, a.port, key)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    print("STATUS %s" % status.split(" ")[1] if " " in status else "STATUS ?")
    if " 101 " not in status + " ":
        return
    for f in SCENARIOS[a.scenario]:
        s.sendall(f)
    frames = read_frames(s, want_close=a.scenario not in ("hello", "ping", "utf8-split-ok"))
    for op, p in frames:
        if op == 8:
            code = struct.unpack("!H", p[:2])[0] if len(p) >= 2 else 0
            print("CLOSED %d %s" % (code, p[2:].decode(errors="replace")))
        elif op == 1:
            print("ECHO TEXT %s" % p.decode(errors="replace"))
        elif op == 10:
            print("PONG %s" % p.decode(errors="replace"))
        else:
            print("FRAME %d %s" % (op, p.hex()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["lib", "raw"])
    ap.add_argument("--proxy", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", default="/")
    ap.add_argument("--ca")
    ap.add_argument("--forward", action="store_true")
    ap.add_argument("--scenario", default="hello")
    ap.add_argument("actions", nargs="*")
    a = ap.parse_intermixed_args()
    if a.mode == "lib":
        asyncio.run(lib(a))
    else:
        raw(a)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
