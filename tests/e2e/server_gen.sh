#!/bin/sh
# server_gen.sh - print a /v1/prove body: a typical N-rule baseline, a one-rule proposal
#
#   sh tests/e2e/server_gen.sh [RULES] [TIMEOUT_MS]
#
# The baseline mixes the shapes real policies have: L4 endpoints, REST
# endpoints with explicit allow rules, read-only presets, wildcard hosts with
# two ports, two binaries. The proposal adds one enforced REST rule for a new,
# credentialed host (so the answer is a credential_reach_expansion finding).
# Used by the end-to-end tests and by tests/bench/bench_server.sh.
awk -v n="${1:-100}" -v timeout="${2:-0}" 'BEGIN {
    printf "{\"baseline\": {\"version\": 1, \"network_policies\": {";
    for (i = 0; i < n; i++) {
        bin = (i % 2 == 0) ? "/usr/bin/curl" : "/usr/bin/python3";
        if (i % 3 == 0) {
            ep = sprintf("{\"host\": \"svc%d.example.com\", \"port\": 443, \"protocol\": \"rest\", " \
                 "\"enforcement\": \"enforce\", \"rules\": [{\"allow\": {\"method\": \"GET\", " \
                 "\"path\": \"/v1/items/**\"}}, {\"allow\": {\"method\": \"POST\", " \
                 "\"path\": \"/v1/items\"}}]}", i);
        } else if (i % 5 == 0) {
            ep = sprintf("{\"host\": \"*.svc%d.example.com\", \"ports\": [443, 8443]}", i);
        } else if (i % 7 == 0) {
            ep = sprintf("{\"host\": \"svc%d.example.com\", \"port\": 443, \"protocol\": \"rest\", " \
                 "\"enforcement\": \"enforce\", \"access\": \"read-only\"}", i);
        } else {
            ep = sprintf("{\"host\": \"svc%d.example.com\", \"port\": 443}", i);
        }
        printf "%s\"r%d\": {\"name\": \"r%d\", \"endpoints\": [%s], \"binaries\": [{\"path\": \"%s\"}]}",
            (i ? ", " : ""), i, i, ep, bin;
    }
    printf "}}, \"proposal\": {\"intent_summary\": \"read the new API\", \"operations\": [{\"addRule\": " \
        "{\"ruleName\": \"newsvc\", \"rule\": {\"name\": \"newsvc\", \"endpoints\": [{\"host\": " \
        "\"api.newsvc.example.com\", \"port\": 443, \"protocol\": \"rest\", \"enforcement\": " \
        "\"enforce\", \"rules\": [{\"allow\": {\"method\": \"GET\", \"path\": \"/v1/**\"}}]}], " \
        "\"binaries\": [{\"path\": \"/usr/bin/curl\"}]}}}]}, ";
    printf "\"credentials\": [{\"name\": \"newsvc\", \"type\": \"api_key\", \"target_hosts\": " \
        "[\"api.newsvc.example.com\"]}, {\"name\": \"svc3\", \"type\": \"api_key\", " \
        "\"target_hosts\": [\"svc3.example.com\"]}]";
    if (timeout > 0) {
        printf ", \"options\": {\"timeout_ms\": %d}", timeout;
    }
    printf "}\n";
}'
