#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# ws_echo.py - a WebSocket echo upstream for tests/e2e/proxy_websocket.sh
#
# Listens on 127.0.0.1 (port 0), writes its port to --port-file, echoes every
# message and LOGS every message it receives to --log (one line each:
# "UPGRADE path ext=...", "TEXT payload", "BINARY hex", "CLOSE code"), so the
# test judges the proxy by what the upstream actually received. --tls CERT KEY
# serves wss; --force-extension answers every upgrade with a
# Sec-WebSocket-Extensions field the client never offered.
import argparse
import asyncio
import ssl
import sys

import websockets
import websockets.server


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", nargs=2)
    ap.add_argument("--force-extension", action="store_true")
    a = ap.parse_args()
    log = open(a.log, "a", buffering=1)

    async def process_request(path, headers):
        log.write("UPGRADE %s ext=%s\n" % (path, headers.get("Sec-WebSocket-Extensions", "-")))
        return None

    async def handler(ws, path):
        try:
            async for m in ws:
                if isinstance(m, str):
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
        import os
        os.rename(a.port_file + ".tmp", a.port_file)
        await asyncio.Future()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
