#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""advisor_replicas_load.py - the client of tests/e2e/advisor_replicas.sh

Submits N proposals through replica A (the sandbox's token) and decides
each through replica B (the admin token): approve the even ones, reject the
odd ones. Every answer the client saw as 2xx is appended to OUT as a line
"submit ID MS", "approve ID MS" or "reject ID MS", flushed before the next request,
so the file lists exactly the acknowledged writes even when the test kills
a replica mid-run; each line ends with the wall-clock time of the answer
in milliseconds. Refused or failed requests are counted, never retried
with the same meaning (a retried write could hide a lost one). The number
of operations done so far is written to PROGRESS.

usage: advisor_replicas_load.py A_URL B_URL SANDBOX TOKEN_FILE ADMIN_FILE
                                UPSTREAM_PORT N OUT PROGRESS
"""
import json
import sys
import time
import urllib.error
import urllib.request


def call(url, token, method="GET", body=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except (OSError, ValueError):
        return 0, None


def rule(i, up):
    return {
        "intent_summary": "let curl GET /p/%d" % i,
        "operations": [{"addRule": {"ruleName": "r%d" % i, "rule": {
            "endpoints": [{"host": "127.0.0.1", "port": up, "protocol": "rest",
                           "enforcement": "enforce",
                           "rules": [{"allow": {"method": "GET", "path": "/p/%d" % i}}]}],
            "binaries": [{"path": "/usr/bin/curl"}]}}}]}


def main():
    a, b, sb, tokf, admf, up, n, out, progress = sys.argv[1:10]
    tok = open(tokf).read().strip()
    adm = open(admf).read().strip()
    up, n = int(up), int(n)
    done = failed = 0
    with open(out, "a") as log:
        def ack(kind, cid):
            log.write("%s %s %d\n" % (kind, cid, int(time.time() * 1000)))
            log.flush()

        def step():
            nonlocal done
            done += 1
            with open(progress + ".tmp", "w") as p:
                p.write("%d %d\n" % (done, failed))
            import os
            os.replace(progress + ".tmp", progress)

        i = 0
        while done < n:
            i += 1
            st, doc = call("%s/v1/sandboxes/%s/proposals" % (a, sb), tok, "POST", rule(i, up))
            ids = (doc or {}).get("accepted_chunk_ids") or []
            if 200 <= st < 300 and ids:
                ack("submit", ids[0])
            else:
                failed += 1
                step()
                time.sleep(0.02)
                continue
            step()
            cid = ids[0]
            st, doc = call("%s/v1/sandboxes/%s/proposals/%s" % (b, sb, cid), adm)
            tokn = (doc or {}).get("review_token")
            verb = "approve" if i % 2 == 0 else "reject"
            body = {"review_token": tokn}
            if verb == "reject":
                body["reason"] = "load test"
            st, _ = call("%s/v1/sandboxes/%s/proposals/%s/%s" % (b, sb, cid, verb), adm,
                         "POST", body) if tokn else (0, None)
            if 200 <= st < 300:
                ack(verb, cid)
            else:
                failed += 1
            step()
    print("%d operations, %d refused or failed" % (done, failed))


if __name__ == "__main__":
    main()
