#!/bin/sh
# cli_completion.sh - bash completion offers what the advisor knows: sandbox
# names (the SANDBOX argument, --sandbox) and chunk ids (--chunk-id, of the
# sandbox named on the line), asked of a real advisor on 127.0.0.1 through
# 'proviso ... --format json'. Negative: another sandbox's chunks are not
# offered, an advisor that is gone offers nothing (and does not hang), a
# wrong token offers nothing.
. "$(dirname "$0")/advisor_lib.sh"

: "${PV_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
COMP=$PV_SRCDIR/contrib/bash-completion/proviso
CLI=${PV_CLI_BIN:-$PV_BUILDDIR/proviso}
command -v bash >/dev/null 2>&1 || { echo "SKIP: no bash"; exit 77; }

# complete proviso WORDS...: what _proviso offers for the last word (the
# built proviso stands for the first word), on one line, sorted.
cat >"$WORK/comp.bash" <<'B'
. "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_proviso
printf '%s\n' "${COMPREPLY[@]}"
B
complete() { shift; bash "$WORK/comp.bash" "$COMP" "$CLI" "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }

start_advisor "$WORK/data" --test-allow-loopback || exit 1
POLICY='version: 1
network_policies: {}
'
create_sandbox alpha "$POLICY"
eq "create alpha" "$STATUS" 201
ATOK=$SB_TOKEN
create_sandbox alpine "$POLICY"
eq "create alpine" "$STATUS" 201
BTOK=$SB_TOKEN
create_sandbox beta "$POLICY"
eq "create beta" "$STATUS" 201
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
eq "proposals enabled" "$STATUS" 200
api POST /v1/sandboxes/alpha/proposals "$(proposal r1 api.example.org 443 GET '/a/**')" "$ATOK"
A1=$(jf '.accepted_chunk_ids[0]')
api POST /v1/sandboxes/alpha/proposals "$(proposal r2 api.example.org 443 GET '/b/**')" "$ATOK"
A2=$(jf '.accepted_chunk_ids[0]')
api POST /v1/sandboxes/alpine/proposals "$(proposal r3 api.example.org 443 GET '/c/**')" "$BTOK"
B1=$(jf '.accepted_chunk_ids[0]')
[ -n "$A1" ] && [ -n "$A2" ] && [ -n "$B1" ] && ok "three chunks submitted" || bad "submissions failed"

export PROVISO_ADVISOR=$ADV PROVISO_TOKEN_FILE=$ADMIN_FILE
eq "rule get SANDBOX: every sandbox" "$(complete proviso rule get '')" "alpha alpine beta"
eq "rule list al: the names with that prefix" "$(complete proviso rule list al)" "alpha alpine"
eq "policy get b" "$(complete proviso policy get b)" "beta"
eq "settings get --sandbox: the names" "$(complete proviso settings get --sandbox '')" "alpha alpine beta"
eq "sandbox create NAME: no existing name offered" "$(complete proviso sandbox create '')" ""
eq "sandbox list takes no sandbox" "$(complete proviso sandbox list '')" ""
eq "sandbox show: the names" "$(complete proviso sandbox show a)" "alpha alpine"
want=$(printf '%s\n%s\n' "$A1" "$A2" | sort | tr '\n' ' ' | sed 's/ $//')
eq "rule approve alpha --chunk-id: alpha's chunks" "$(complete proviso rule approve alpha --chunk-id '')" "$want"
eq "rule get alpine --chunk-id: only alpine's chunk" "$(complete proviso rule get alpine --chunk-id '')" "$B1"
eq "--chunk-id before the options: the sandbox is still found" \
    "$(complete proviso rule reject --format text alpine --chunk-id '')" "$B1"
pre=$(printf '%s' "$A1" | cut -c1-4)
got=$(complete proviso rule get alpha --chunk-id "$pre")
has "a prefix narrows the chunk ids" "$got" "$A1"
eq "no sandbox on the line: no chunk id" "$(complete proviso rule get --chunk-id '')" ""
eq "an unknown sandbox: no chunk id" "$(complete proviso rule get nosuch --chunk-id '')" ""

# --advisor/--token-file on the line are used when the environment has none
unset PROVISO_ADVISOR PROVISO_TOKEN_FILE
eq "without the environment: nothing (the default port has no advisor)" \
    "$(PROVISO_ADVISOR=http://127.0.0.1:9 complete proviso rule get '')" ""
eq "--advisor and --token-file on the line are used" \
    "$(complete proviso rule get --advisor "$ADV" --token-file "$ADMIN_FILE" '')" "alpha alpine beta"
printf 'not-the-token-0123456789abcdef\n' >"$WORK/wrong.token"
chmod 600 "$WORK/wrong.token"
eq "a wrong token: nothing offered" \
    "$(PROVISO_ADVISOR=$ADV PROVISO_TOKEN_FILE=$WORK/wrong.token complete proviso rule get '')" ""

# an advisor that is gone: nothing, quickly
stop_advisor
t0=$(date +%s)
eq "advisor gone: nothing offered" \
    "$(PROVISO_ADVISOR=$ADV PROVISO_TOKEN_FILE=$ADMIN_FILE complete proviso rule get '')" ""
t1=$(date +%s)
[ $((t1 - t0)) -le 4 ] && ok "... within the timeout ($((t1 - t0)) s)" || bad "completion hung $((t1 - t0)) s"

# The advisor's log (and its prover child's, on the same stderr) is one
# format: every line "TS PROGRAM TAG: ...", the access lines of each
# request included - no JSON line beside the text ones.
odd=$(grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z proviso-(advisor|prover) (info|warning|error|access): ' "$ADV_LOG" | head -3)
eq "the advisor's log has one line shape" "$odd" ""
n=$(grep -c ' proviso-advisor access: GET /v1/sandboxes 200 verdict:none ' "$ADV_LOG")
[ "$n" -ge 5 ] && ok "completion's sandbox lists are in the access log ($n)" || bad "access lines: $n"
has "a refused token is logged as a 401" "$(cat "$ADV_LOG")" "access: GET /v1/sandboxes 401 verdict:none"
finish
