#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# ws_echo.py - a WebSocket echo upstream for tests/e2e/proxy_websocket.sh
#
# Listens on 127.0.0.1 (port 0), writes its port to --port-file, echoes every
# message and LOGS every message it receives to --log (one line each:
# "UPGRADE path ext=...", "TEXT payload", "BINARY hex", "CLOSE code"), so the
# test judges the proxy by what the upstream actually received. --tls CERT KEY
# serves wss; --force-extension answers every upgrade with a
# Sec-WebSocket-Extensions field the client never offered; --raw MODE is a
# hand-written misbehaving server instead: bad-accept (a wrong
# Sec-WebSocket-Accept), masked (a masked frame after the 101), bad-utf8 (a
# text frame that is not UTF-8), each logging the close it gets back.
import argparse
import asyncio
import base64
import hashlib
import os
import socket
import ssl
import struct
import sys
import threading

import websockets
import websockets.server


GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def raw_conn(c, mode, log):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(4096)
        if not d:
            return
        buf += d
    head = buf.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
    path = head.split(" ")[1]
    key = ""
    for line in head.split("\r\n")[1:]:
        n, _, v = line.partition(":")
        if n.strip().lower() == "sec-websocket-key":
            key = v.strip()
    acc = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
    if mode == "bad-accept":
        acc = base64.b64encode(hashlib.sha1(b"x" + GUID).digest()).decode()
    log.write("UPGRADE %s ext=-\n" % path)
    c.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: %s\r\n\r\n" % acc).encode())
    if mode == "masked":
        k = os.urandom(4)
        c.sendall(bytes([0x81, 0x85]) + k + bytes(b ^ k[i % 4] for i, b in enumerate(b"hello")))
    elif mode == "bad-utf8":
        c.sendall(bytes([0x81, 0x02, 0xC3, 0x28]))
    # read the client's frames (small, masked) until its close or the end
    c.settimeout(3)
    d = b""
    while True:
        while len(d) >= 6 and len(d) >= 6 + (d[1] & 0x7F):
            n = d[1] & 0x7F
            k = d[2:6]
            pl = bytes(b ^ k[i % 4] for i, b in enumerate(d[6:6 + n]))
            if d[0] & 0x0F == 8:
                log.write("CLOSE %d\n" % (struct.unpack("!H", pl[:2])[0] if n >= 2 else 0))
                c.close()
                return
            log.write("FRAME %d\n" % (d[0] & 0x0F))
            d = d[6 + n:]
        try:
            more = c.recv(4096)
        except OSError:
            more = b""
        if not more:
            break
        d += more
    log.write("NO-CLOSE %s\n" % d[:16].hex())
    c.close()


def raw_server(a, log):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(a.port_file + ".tmp", a.port_file)
    while True:
        c, _ = s.accept()
        threading.Thread(target=raw_conn, args=(c, a.raw, log), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", nargs=2)
    ap.add_argument("--force-extension", action="store_true")
    ap.add_argument("--raw", choices=["bad-accept", "masked", "bad-utf8"])
    a = ap.parse_args()
    log = open(a.log, "a", buffering=1)
    if a.raw:
        try:
            raw_server(a, log)
        except KeyboardInterrupt:
            pass
        return

    async def process_request(path, headers):
        log.write("UPGRADE %s ext=%s\n" % (path, headers.get("Sec-WebSocket-Extensions", "-")))
        if path.startswith("/v1/slow"):
            await asyncio.sleep(1.5)  # a 101 that takes its time (a reload in between)
        return None

    async def handler(ws, path):
        try:
            async for m in ws:
                if len(m) > 4096:
                    log.write("%s len=%d\n" % ("TEXT" if isinstance(m, str) else "BINARY", len(m)))
                elif isinstance(m, str):
                    log.write("TEXT %s\n" % m)
                else:
                    log.write("BINARY %s\n" % m.hex())
                await ws.send(m)
        except websockets.ConnectionClosed:
            pass
        log.write("CLOSE %s\n" % ws.close_code)

    ctx = None
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
    extra = {"Sec-WebSocket-Extensions": "permessage-deflate"} if a.force_extension else None

    async def run():
        srv = await websockets.serve(handler, "127.0.0.1", 0, ssl=ctx, compression=None,
                                     process_request=process_request, extra_headers=extra,
                                     max_size=4 * 1024 * 1024)
        port = srv.sockets[0].getsockname()[1]
        with open(a.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(a.port_file + ".tmp", a.port_file)
        await asyncio.Future()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
