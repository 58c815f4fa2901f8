#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# readme_loop.sh - runs the README's "The advisor loop" block as printed.
#
# The block is read from README.md (the first ```sh block after the line
# "**The advisor loop.**"), continuation lines are joined and each command
# is run after these mappings, and only these (a line none of them covers
# fails the test, so the README cannot drift from what is tested):
#   /etc/proviso                          -> $T/etc (created first: the
#                                            README's prover section makes it)
#   /var/lib/proviso                      -> $T/var
#   /usr/local/share/doc/proviso/examples -> the source tree's examples/
#   sudo                                  -> dropped
#   systemctl enable --now proviso-advisor -> the built proviso-advisor with
#       the unit's token file, --port 0 and --test-allow-loopback (the
#       upstream is 127.0.0.1); PROVISO_ADVISOR then names its port
#   proviso ...                           -> the built proviso; the README's
#       example chunk id 3f2a9c1d -> the short id `rule list` prints for
#       the agent's proposal
#   proviso-proxy ...                     -> the built proxy, in the
#       background, with --port 0 --admin-port 0 --port-file --log and
#       --test-allow-loopback; http://127.0.0.1:8788 -> the advisor's real port
#   openssl, chmod, export                -> run as printed
# Before the first `proviso rule` line the script plays the agent (the
# README's comment lines): a request to a local logging upstream is denied
# and points at the skill, which exists at DATA_DIR/skills/policy_advisor.md;
# the agent proposes through http://policy.local. After `rule approve` the
# retried request reaches the upstream.
: "${PV_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export PV_SRCDIR
. "$PV_SRCDIR/tests/e2e/proxy_lib.sh"
. "$PV_SRCDIR/tests/e2e/advisor_proxy_lib.sh"
CLI_BIN=$BUILD/proviso
[ -x "$CLI_BIN" ] || { echo "SKIP: build proviso first"; exit 77; }

"$UPSTREAM_BIN" --port-file "$T/up.port" --log "$T/up.log" 2>"$T/up.err" &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "upstream did not start"; exit 1; }
read -r UP _ <"$T/up.port"
: >"$T/up.log"

# the README's block, one command per line
awk '/^\*\*The advisor loop\.\*\*/ { f = 1 } f && /^```sh/ { b = 1; next }
     b && /^```/ { exit } b { print }' "$SRC/README.md" |
    sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' >"$T/block.sh"
expect_eq "README block found" yes "$([ -s "$T/block.sh" ] && echo yes)"
grep -q 'agent_policy_proposals_enabled true' "$T/block.sh" &&
    pass || fail "the README never turns agent proposals on (policy.local answers 404 feature_disabled)"

mkdir -p "$T/etc" "$T/var"
# the mapper would turn the agent's denial into a second proposal of its own
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"
CHUNK=""
REVIEW_TOKEN=""
agent_done=no

# agent: what the README's comment lines describe
agent() {
    SKILL=$T/var/demo/skills/policy_advisor.md
    out=$(via PX "http://127.0.0.1:$UP/data")
    expect_eq "agent: denied" 403 "$(code "$out")"
    if up_got "GET /data"; then fail "agent: the upstream got the denied request"; else pass; fi
    expect_eq "agent: the denial names the skill" "read_skill $SKILL" \
        "$(jget "$out" '.next_steps[0] | .action + " " + .path')"
    if [ -s "$SKILL" ]; then pass; else fail "agent: no skill at $SKILL"; fi
    out=$(via PX -d "$(rule data_read 127.0.0.1 "$UP" GET /data)" http://policy.local/v1/proposals)
    expect_eq "agent: proposal submitted" "202 1" "$(code "$out") $(jget "$out" .accepted_chunks)"
    CHUNK=$(jget "$out" '.accepted_chunk_ids[0]')
    out=$(via PX "http://policy.local/v1/proposals/$CHUNK/wait?timeout=2")
    expect_eq "agent: pending for a reviewer" "pending" "$(jget "$out" .status)"
    agent_done=yes
}

map() {
    printf '%s' "$1" | sed -e "s#/etc/proviso#$T/etc#g" -e "s#/var/lib/proviso#$T/var#g" \
        -e "s#/usr/local/share/doc/proviso/examples#$SRC/examples#g" \
        -e 's/^sudo //' -e 's/| sudo /| /g' -e 's/ *#.*$//'
}

n=0
while IFS= read -r line; do
    case "$line" in
    '' | '#'*) continue ;;
    esac
    n=$((n + 1))
    cmd=$(map "$line")
    echo "README: $line"
    case "$cmd" in
    "systemctl enable --now proviso-advisor")
        "$ADVISOR_BIN" --data-dir "$T/var" --port 0 --token-file "$T/etc/admin.token" \
            --test-allow-loopback --config "$T/quiet.yaml" >"$T/adv.log" 2>&1 &
        PIDS="$PIDS $!"
        wait_log "$T/adv.log" "listening on 127.0.0.1 port" 1500 ||
            { fail "advisor did not start: $(cat "$T/adv.log")"; finish; }
        ADV_PORT=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/adv.log" | head -n 1)
        export PROVISO_ADVISOR=http://127.0.0.1:$ADV_PORT
        ;;
    "proviso-proxy "*)
        # shellcheck disable=SC2086
        set -- ${cmd#proviso-proxy }
        set -- "${@//http:\/\/127.0.0.1:8788/$PROVISO_ADVISOR}"
        "$PROXY_BIN" "$@" --port 0 --admin-port 0 \
            --port-file "$T/px.port" --log "$T/px.log" --test-allow-loopback 2>"$T/px.err" &
        PIDS="$PIDS $!"
        wait_file "$T/px.port" || { fail "proxy did not start: $(cat "$T/px.err")"; finish; }
        read -r PX_PX _ <"$T/px.port"
        wait_log "$T/px.log" "agent_policy_proposals_enabled is on" ||
            fail "the proxy never saw proposals on: $(tail -5 "$T/px.log")"
        ;;
    "proviso "*)
        [ "$agent_done" = yes ] || case "$cmd" in "proviso rule "*) agent ;; esac
        cmd=${cmd//3f2a9c1d/${CHUNK:0:8}} # as rule list prints it
        # the README's example review token -> the one rule get printed
        case "$cmd" in
        *"--review-token 7b0e41d2c9f3a855..."*)
            [ -n "$REVIEW_TOKEN" ] || fail "rule approve before rule get printed a review token"
            cmd=${cmd//7b0e41d2c9f3a855.../$REVIEW_TOKEN}
            ;;
        esac
        # shellcheck disable=SC2086
        set -- ${cmd#proviso }
        out=$("$CLI_BIN" "$@" 2>&1)
        expect_eq "exit 0: $cmd" 0 "$?"
        case "$1 $2" in
        "rule list") expect_has "rule list shows the chunk" "${CHUNK:0:8}  pending" "$out" ;;
        "rule get")
            expect_has "rule get shows the rule" "/data" "$out"
            REVIEW_TOKEN=$(printf '%s\n' "$out" | sed -n 's/^review token: *\([0-9a-f]*\)$/\1/p')
            [ -n "$REVIEW_TOKEN" ] && pass || fail "rule get printed no review token: $out"
            ;;
        "rule approve")
            expect_has "rule approve used the review token rule get printed" "--review-token $REVIEW_TOKEN" "$cmd"
            ;;
        esac
        ;;
    "openssl "* | "chmod "* | "export "*)
        eval "$cmd"
        expect_eq "exit 0: $cmd" 0 "$?"
        ;;
    *) fail "README line not mapped by tests/readme_loop.sh: $line" ;;
    esac
done <"$T/block.sh"
expect_eq "README commands run" 10 "$n"

wait_log "$T/px.log" "advisor revision 2 loaded" || fail "the proxy never loaded the approval"
out=$(via PX "http://127.0.0.1:$UP/data")
expect_eq "retried request passes" 200 "$(code "$out")"
if up_got "GET /data"; then pass; else fail "the upstream never got GET /data"; fi
finish
