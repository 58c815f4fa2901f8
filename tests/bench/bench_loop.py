#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# bench_loop.py - the whole loop, timed per phase (driven by bench_loop.sh)
#
# The agent is this Python process (the policy names its executable). Each
# iteration asks for a path it has never been allowed:
#   deny    GET http://127.0.0.1:UP/item/N through the proxy -> 403
#   submit  POST http://policy.local/v1/proposals (the narrow rule) -> 202;
#           the advisor proves it over HTTP and, in auto mode, approves it
#   reload  GET  http://policy.local/v1/proposals/ID/wait -> approved with
#           policy_reloaded: true (this proxy loaded a covering revision)
#   retry   GET /item/N again -> 200, and the upstream saw it
# Every request opens a new connection, as curl does. The baseline, measured
# in the same run, is one allowed request through the same proxy.
import http.client
import json
import os
import statistics
import sys
import time

px_port = int(sys.argv[1])
up_port = int(sys.argv[2])
n = int(sys.argv[3])
exe = os.path.realpath(sys.executable)


def req(method, url, body=None):
    c = http.client.HTTPConnection("127.0.0.1", px_port, timeout=30)
    hdrs = {"Connection": "close"}
    if body is not None:
        hdrs["Content-Type"] = "application/json"
    c.request(method, url, body=body, headers=hdrs)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def pct(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


base = []
for i in range(max(20, n)):
    t = time.perf_counter()
    s, _ = req("GET", "http://127.0.0.1:%d/allowed" % up_port)
    base.append((time.perf_counter() - t) * 1000)
    if s != 200:
        sys.exit("baseline request: status %d" % s)

phases = {"deny": [], "submit": [], "reload": [], "retry": [], "total": []}
for i in range(n):
    path = "/item/%d" % i
    url = "http://127.0.0.1:%d%s" % (up_port, path)
    t0 = time.perf_counter()
    s, _ = req("GET", url)
    if s != 403:
        sys.exit("iteration %d: first request %d, want 403" % (i, s))
    t1 = time.perf_counter()
    rule = {"intent_summary": "read item %d" % i,
            "operations": [{"addRule": {"ruleName": "item_%d" % i, "rule": {
                "endpoints": [{"host": "127.0.0.1", "port": up_port, "protocol": "rest",
                               "enforcement": "enforce",
                               "rules": [{"allow": {"method": "GET", "path": path}}]}],
                "binaries": [{"path": exe}]}}}]}
    s, b = req("POST", "http://policy.local/v1/proposals", json.dumps(rule))
    if s != 202:
        sys.exit("iteration %d: submit %d %s" % (i, s, b[:300]))
    ids = json.loads(b).get("accepted_chunk_ids") or []
    if len(ids) != 1:
        sys.exit("iteration %d: submit accepted %s" % (i, b[:300]))
    t2 = time.perf_counter()
    s, b = req("GET", "http://policy.local/v1/proposals/%s/wait?timeout=10" % ids[0])
    w = json.loads(b) if s == 200 else {}
    if w.get("status") != "approved" or w.get("policy_reloaded") is not True:
        sys.exit("iteration %d: wait %d %s" % (i, s, b[:300]))
    t3 = time.perf_counter()
    s, _ = req("GET", url)
    if s != 200:
        sys.exit("iteration %d: retried request %d, want 200" % (i, s))
    t4 = time.perf_counter()
    for k, a, z in (("deny", t0, t1), ("submit", t1, t2), ("reload", t2, t3),
                    ("retry", t3, t4), ("total", t0, t4)):
        phases[k].append((z - a) * 1000)

b50 = statistics.median(base)
print("== whole loop: denied -> proposal -> prove -> auto-approve -> reload -> retry "
      "(%d iterations, policy grows to %d rules)" % (n, n + 1))
print("  %-8s %9s %9s %9s" % ("phase", "p50 ms", "p99 ms", "max ms"))
for k in ("deny", "submit", "reload", "retry", "total"):
    xs = phases[k]
    print("  %-8s %9.1f %9.1f %9.1f" % (k, statistics.median(xs), pct(xs, 99), max(xs)))
tot50 = statistics.median(phases["total"])
tot99 = pct(phases["total"], 99)
print("  baseline: one allowed request through the proxy, p50 %.2f ms" % b50)
print("  ratio: loop p50 = %.1fx one allowed request" % (tot50 / b50))
ok = tot50 <= 100 and tot99 <= 250
print("  goal p50 <= 100 ms and p99 <= 250 ms: %s (p50 %.1f, p99 %.1f)"
      % ("PASS" if ok else "FAIL", tot50, tot99))
sys.exit(0 if ok else 1)
