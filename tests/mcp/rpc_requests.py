#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""rpc_requests.py - Python requests posting JSON-RPC (tests/e2e/mcp_clients.sh)

usage: rpc_requests.py URL BODY...
POSTs each BODY (a JSON text) to URL with one requests.Session (so through
HTTP_PROXY when it is set) and prints one line per body: "CODE JSON", the
HTTP status and the answer re-encoded compactly with sorted keys ("-" when
the body is empty), or "FAIL <exception>" when no answer came.
"""
import json
import sys

import requests

url = sys.argv[1]
status = 0
with requests.Session() as s:
    for body in sys.argv[2:]:
        try:
            r = s.post(url, data=body.encode(), timeout=10,
                       headers={"Content-Type": "application/json"})
            doc = json.dumps(r.json(), sort_keys=True, separators=(",", ":")) if r.content else "-"
            print(r.status_code, doc)
        except (requests.RequestException, ValueError) as e:
            print("FAIL", type(e).__name__, e)
            status = 1
sys.exit(status)
