#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_unbacked.sh - a proxy never enforces a revision whose text is not
# the policy its hash names (docs/proxy.md#advisor, issue 36 item 4). The
# proxy follows a real advisor through advisor_mitm.py, which widens the
# policy of revision 2 on and keeps its hash: the proxy refuses revision 2,
# keeps enforcing revision 1, logs a WARNING, shows it on /metrics and
# reports the hash it found, which the advisor refuses (409) and logs.
. "$(dirname "$0")/proxy_lib.sh"

. "$(dirname "$0")/advisor_proxy_lib.sh"

command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }

start_upstream_base /allowed
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"
start_advisor ADV --config "$T/quiet.yaml"
sandbox ADV one "$T/base.yaml"
python3 "$(dirname "$0")/advisor_mitm.py" "$ADV_PORT" "$T/mitm.port" 2 2>"$T/mitm.err" &
PIDS="$PIDS $!"
wait_file "$T/mitm.port" || { echo "the mitm did not start"; cat "$T/mitm.err"; exit 1; }
read -r MITM_PORT <"$T/mitm.port"

start_aproxy P1 MITM one
wait_log "$T/P1.log" "advisor revision 1 loaded" ||
    fail "proxy one never loaded revision 1: $(cat "$T/P1.log")"
read -r _ P1_ADM <"$T/P1.port"
out=$(via P1 "http://127.0.0.1:$UP/allowed")
expect_eq "revision 1 allows /allowed" 200 "$(code "$out")"
out=$(via P1 "http://127.0.0.1:$UP/secret")
expect_eq "revision 1 denies /secret" 403 "$(code "$out")"

# Revision 2 (a new base that also allows /other), widened on the way.
sed 's|- allow: {method: GET, path: /allowed}|- allow: {method: GET, path: /allowed}\n          - allow: {method: GET, path: /other}|' \
    "$T/base.yaml" >"$T/base2.yaml"
out=$(adm ADV PUT /v1/sandboxes/one/policy "$("$JQ" -n --rawfile p "$T/base2.yaml" '{policy: $p}')")
expect_eq "base revision 2 set" 200 "$(code "$out")"
wait_log "$T/P1.log" "advisor revision 2 refused" ||
    fail "the widened revision 2 was not refused: $(cat "$T/P1.log")"
expect_has "the warning says what stays" "revision 1 stays in force" \
    "$(grep 'revision 2 refused' "$T/P1.log")"
out=$(via P1 "http://127.0.0.1:$UP/secret")
expect_eq "the widened policy is not enforced: /secret denied" 403 "$(code "$out")"
out=$(via P1 "http://127.0.0.1:$UP/allowed")
expect_eq "revision 1 still enforced" 200 "$(code "$out")"
m=$("$CURL" -s --max-time 3 "http://127.0.0.1:$P1_ADM/metrics")
expect_has "/metrics counts the refusal" "proviso_proxy_advisor_revisions_refused_total 1" "$m"
expect_has "/metrics names the refused revision" "proviso_proxy_advisor_revision_refused 2" "$m"
wait_log "$T/ADV.log" "proxy reports revision v2 with hash" ||
    fail "the advisor did not log the proxy's report: $(grep -c . "$T/ADV.log") lines"

finish
