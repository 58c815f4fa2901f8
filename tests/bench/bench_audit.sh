#!/bin/sh
# bench_audit.sh - replaying and verifying an export with many approvals
#
#   tests/bench/bench_audit.sh [APPROVALS]     (from the build directory)
#
# Starts the real advisor (and its prover child) on 127.0.0.1, spreads
# APPROVALS (default 1000) automatically approved proposals over sandboxes
# of 50 each (so the policies stay the size a sandbox really has), exports
# the record, then times `proviso audit verify` and `proviso audit replay`
# (the prover in process). Goal (issue 9): the replay of 1,000
# approvals in <= 10 s on two cores. Not part of make check.
set -u
N=${1:-1000}
PER=50
BUILD=${PV_BUILDDIR:-$(pwd)}
PROVISO=$BUILD/proviso
ADVISOR=$BUILD/proviso-advisor
for t in curl jq; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench_audit: $t is not installed"; exit 77; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/pv-bench-audit.XXXXXX") || exit 1
APID=
cleanup() {
    [ -n "$APID" ] && kill -KILL "$APID" 2>/dev/null
    if [ -n "${KEEP:-}" ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT INT TERM
TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$TOKEN" >"$W/token")

"$ADVISOR" --data-dir "$W/data" --port 0 --token-file "$W/token" 2>"$W/advisor.log" &
APID=$!
i=0
while [ $i -lt 400 ]; do
    PORT=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$W/advisor.log" | head -n 1)
    [ -n "$PORT" ] && break
    sleep 0.05
    i=$((i + 1))
done
[ -n "$PORT" ] || { cat "$W/advisor.log"; exit 1; }
A=http://127.0.0.1:$PORT
H="Authorization: Bearer $TOKEN"
put() { curl -s -o /dev/null -X PUT -H "$H" -H 'Content-Type: application/json' -d "$2" "$A$1"; }
put /v1/settings/agent_policy_proposals_enabled '{"value":true}'
put /v1/settings/proposal_approval_mode '{"value":"auto"}'
POLICY='version: 1
network_policies:
  github_ro:
    name: github_ro
    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}]
    binaries: [{path: /usr/bin/curl}]
'
s=0
k=0
t0=$(date +%s.%N)
while [ "$k" -lt "$N" ]; do
    if [ $((k % PER)) -eq 0 ]; then
        s=$((s + 1))
        SBT=$(jq -cn --arg n "sb$s" --arg p "$POLICY" '{name: $n, policy: $p}' |
            curl -s -H "$H" -H 'Content-Type: application/json' --data-binary @- "$A/v1/sandboxes" |
            jq -r .token)
        : >"$W/cfg$s"
    fi
    printf 'url = "%s/v1/sandboxes/sb%d/proposals"\nheader = "Authorization: Bearer %s"\n' \
        "$A" "$s" "$SBT" >>"$W/cfg$s"
    printf 'header = "Content-Type: application/json"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' >>"$W/cfg$s"
    printf 'data = "{\\"operations\\":[{\\"addRule\\":{\\"ruleName\\":\\"r%d\\",\\"rule\\":{\\"endpoints\\":[{\\"host\\":\\"svc%d.example.com\\",\\"port\\":443,\\"protocol\\":\\"rest\\",\\"enforcement\\":\\"enforce\\",\\"rules\\":[{\\"allow\\":{\\"method\\":\\"GET\\",\\"path\\":\\"/v1/**\\"}}]}],\\"binaries\\":[{\\"path\\":\\"/usr/bin/curl\\"}]}}}]}"\n' \
        "$k" "$k" >>"$W/cfg$s"
    k=$((k + 1))
    [ $((k % PER)) -ne 0 ] && [ "$k" -lt "$N" ] && printf 'next\n' >>"$W/cfg$s"
done
# Two sandboxes at a time (two cores).
ls "$W"/cfg* | xargs -P 2 -n 1 curl -s -K >"$W/codes"
t1=$(date +%s.%N)
echo "== $N submissions in $(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') s ($(grep -c '^202$' "$W/codes") answered 202)"
"$PROVISO" audit export --advisor "$A" --token-file "$W/token" >"$W/a.jsonl" || exit 1
PUB=$("$PROVISO" audit pubkey --advisor "$A" --token-file "$W/token")
NA=$(grep -c '"kind":"CONFIG:APPROVED"' "$W/a.jsonl")
NR=$(grep -c '"type":"record"' "$W/a.jsonl")
echo "== export: $NR records, $NA approvals, $(wc -c <"$W/a.jsonl") bytes"
kill -TERM "$APID"
wait "$APID" 2>/dev/null
APID=
t0=$(date +%s.%N)
"$PROVISO" audit verify "$W/a.jsonl" --pubkey "$PUB"
t1=$(date +%s.%N)
echo "== verify: $(echo "$t0 $t1 $NR" | awk '{printf "%.2f s, %.0f records/s", $2 - $1, $3 / ($2 - $1)}')"
t0=$(date +%s.%N)
"$PROVISO" audit replay "$W/a.jsonl" | tail -n 1
rc=$?
t1=$(date +%s.%N)
el=$(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}')
echo "== replay of $NA approvals: $el s (prover start-up included)"
if awk -v e="$el" -v n="$NA" 'BEGIN { exit !(e <= 10 * n / 1000) }'; then
    echo "PASS: <= 10 s per 1,000 approvals"
else
    echo "MISS: > 10 s per 1,000 approvals"
    exit 1
fi
