#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# advisor_burst.py - every worker of several advisor replicas busy at once
# (tests/e2e/advisor_replicas.sh): CLIENTS threads a replica, each sending
# ROUNDS requests that alternate a sandbox's proposal (its token) and the
# admin's list of its proposals. Prints each answer's status with its count
# ("200:384 202:384"); a request that got no HTTP answer counts under the
# exception's name.
#
# usage: advisor_burst.py SANDBOX TOKEN_FILE CLIENTS ROUNDS PORT:ADMIN_TOKEN_FILE...
import sys
import threading
import urllib.error
import urllib.request


def main():
    sandbox, tokf = sys.argv[1:3]
    clients, rounds = int(sys.argv[3]), int(sys.argv[4])
    tok = open(tokf).read().strip()
    adm = {}
    for arg in sys.argv[5:]:
        port, admf = arg.split(":", 1)
        adm[port] = open(admf).read().strip()
    codes = {}
    lock = threading.Lock()
    base = "http://127.0.0.1:%s/v1/sandboxes/" + sandbox + "/proposals"

    def one(port, i):
        for k in range(rounds):
            if (i + k) % 2:
                req = urllib.request.Request(
                    base % port + "?limit=5", headers={"Authorization": "Bearer " + adm[port]}
                )
            else:
                name = "burst_%s_%d_%d" % (port, i, k)
                body = (
                    '{"intent_summary":"burst","operations":[{"addRule":{"ruleName":"%s",'
                    '"rule":{"endpoints":[{"host":"b%d.example.com","port":443}],'
                    '"binaries":[{"path":"/usr/bin/curl"}]}}}]}' % (name, i)
                )
                req = urllib.request.Request(
                    base % port,
                    data=body.encode(),
                    headers={"Authorization": "Bearer " + tok, "Content-Type": "application/json"},
                )
            try:
                c = str(urllib.request.urlopen(req, timeout=60).status)
            except urllib.error.HTTPError as e:
                c = str(e.code)
            except Exception as e:  # no answer at all: named, counted
                c = type(e).__name__
            with lock:
                codes[c] = codes.get(c, 0) + 1

    ts = [threading.Thread(target=one, args=(p, i)) for p in adm for i in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(" ".join("%s:%d" % (k, codes[k]) for k in sorted(codes)))


if __name__ == "__main__":
    main()
