#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mapper_replay.sh - the mechanistic mapper's proposals for a recorded denial
# stream: starts proviso-advisor (its prover child, mapper flushing every 200
# ms), creates a sandbox with an empty policy, posts the stream as its proxy
# would (POST /v1/sandboxes/NAME/denials) and prints one line per pending
# mechanistic chunk: key, hits, confidence, the proposed endpoint, and the
# security notes' count. Not part of `make check` (no assertions): a way to
# see what the mapper makes of real denials.
#
#   tests/bench/mapper_replay.sh [BUILD_DIR] [STREAM.json]
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-.}" && pwd)
STREAM=${2:-$SRC/tests/data/denials-recorded.json}
JQ=$(command -v jq) || { echo "mapper_replay.sh: jq is needed"; exit 1; }
T=$(mktemp -d)
trap 'kill $ADV 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/admin"
chmod 600 "$T/admin"
printf 'mapper_flush_interval_ms: 200\n' >"$T/adv.yaml"
"$BUILD/proviso-advisor" --data-dir "$T/d" --port 0 --token-file "$T/admin" \
    --config "$T/adv.yaml" >"$T/adv.log" 2>&1 &
ADV=$!
i=0
while ! grep -q 'listening on 127.0.0.1 port' "$T/adv.log" && [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
done
P=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/adv.log" | head -n 1)
[ -n "$P" ] || { cat "$T/adv.log"; exit 1; }
call() { curl -s -X "$1" -H "Authorization: Bearer $(cat "$T/${4:-admin}")" \
    -H 'Content-Type: application/json' ${3:+-d "$3"} "http://127.0.0.1:$P$2"; }
call POST /v1/sandboxes '{"name":"replay","policy":"version: 1\n"}' | "$JQ" -r .token >"$T/sb"
call PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}' >/dev/null
n=$("$JQ" '.events | length' "$STREAM")
call POST /v1/sandboxes/replay/denials "$(cat "$STREAM")" sb >/dev/null
sleep 2
echo "# $n recorded denials -> $(call GET '/v1/sandboxes/replay/proposals?status=pending' | "$JQ" '.chunks | length') pending mechanistic chunks"
call GET '/v1/sandboxes/replay/proposals?status=pending' | "$JQ" -r '.chunks | sort_by(.host, .port)[] |
    "\(.host):\(.port) \(.binary) hits=\(.hit_count) confidence=\(.confidence) notes=\(.security_notes | if . == "" then 0 else (split("\n") | length) end)\n    " +
    (.proposed_rule.endpoints[0] | if .protocol then "\(.protocol) \(.enforcement): " + ([.rules[].allow | "\(.method) \(.path)"] | join(", ")) else "L4 (no inspection)" end)'
