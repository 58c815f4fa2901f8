#!/bin/sh
# audit_durability.sh - kill -9 in the middle of 10,000 acknowledged writes:
# every write the advisor answered 200 is in the chain after a restart, and
# the chain verifies.
#
# One client sends the writes one after another (a global setting, each a
# CONFIG:SETTING record), so the acknowledged writes are exactly the first
# N records of that kind; the advisor is killed with SIGKILL once about
# half have been answered. After the restart the export must hold at least
# N such records (at most N + 1: the write in flight may have committed
# without its answer) and verify intact; then the rest of the 10,000 are
# written to the restarted advisor and the whole chain verifies again.
. "$(dirname "$0")/advisor_lib.sh"

PROVISO=$PV_BUILDDIR/proviso
WRITES=${AUDIT_WRITES:-10000}
KILL_AT=$((WRITES / 2))

start_advisor "$WORK/data" || exit 1
PUB=$("$PROVISO" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")

# curl_config N FILE: one curl process, one connection, N sequential PUTs;
# each answer's status on its own line as it arrives.
curl_config() {
    i=0
    while [ "$i" -lt "$1" ]; do
        if [ $((i % 2)) -eq 0 ]; then v=auto; else v=manual; fi
        printf 'url = "%s/v1/settings/proposal_approval_mode"\n' "$ADV"
        printf 'request = "PUT"\nheader = "Authorization: Bearer %s"\n' "$ADMIN"
        printf 'header = "Content-Type: application/json"\n'
        printf 'data = "{\\"value\\":\\"%s\\"}"\n' "$v"
        printf 'output = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n'
        [ $((i + 1)) -lt "$1" ] && printf 'next\n'
        i=$((i + 1))
    done >"$2"
}
curl_config "$WRITES" "$WORK/curl.cfg"
curl -s -K "$WORK/curl.cfg" >"$WORK/codes" 2>/dev/null &
CURL_PID=$!
n=0
while kill -0 "$CURL_PID" 2>/dev/null; do
    n=$(wc -l <"$WORK/codes")
    [ "$n" -ge "$KILL_AT" ] && break
    sleep 0.05
done
kill -KILL "$ADV_PID"
wait "$ADV_PID" 2>/dev/null
ADV_PID=
wait "$CURL_PID" 2>/dev/null
ACKED=$(grep -c '^200$' "$WORK/codes")
echo "# $ACKED of $WRITES writes acknowledged before kill -9 (killed at $n answers)"
[ "$ACKED" -ge "$((KILL_AT / 2))" ] && ok "at least half the target was written before the kill" ||
    bad "only $ACKED writes were acknowledged"
[ "$ACKED" -lt "$WRITES" ] && ok "the kill interrupted the writes" || bad "the kill came too late"
# The acknowledged answers are a prefix: nothing was answered after a failure.
eq "acknowledged writes are a prefix" "$(grep -n -v '^200$' "$WORK/codes" | head -n 1 | cut -d: -f1)" \
    "$((ACKED + 1))"

start_advisor "$WORK/data" || exit 1
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/a.jsonl"
eq "export after the restart" "$?" 0
OUT=$("$PROVISO" audit verify "$WORK/a.jsonl" --pubkey "$PUB")
eq "the chain verifies after kill -9" "$?" 0
echo "# $OUT"
GOT=$(grep -c '"kind":"CONFIG:SETTING"' "$WORK/a.jsonl")
[ "$GOT" -ge "$ACKED" ] && ok "every acknowledged write is in the chain ($GOT >= $ACKED)" ||
    bad "acknowledged writes lost: $GOT records for $ACKED answers"
[ "$GOT" -le "$((ACKED + 1))" ] && ok "no write beyond the one in flight ($GOT <= $ACKED + 1)" ||
    bad "$GOT records for $ACKED answers"

# The chain goes on from where it stopped: the rest of the writes.
REST=$((WRITES - ACKED))
curl_config "$REST" "$WORK/curl2.cfg"
curl -s -K "$WORK/curl2.cfg" >"$WORK/codes2" 2>/dev/null
eq "the rest of the writes are acknowledged" "$(grep -c '^200$' "$WORK/codes2")" "$REST"
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/b.jsonl"
OUT=$("$PROVISO" audit verify "$WORK/b.jsonl" --pubkey "$PUB")
eq "the chain over all $WRITES acknowledged writes verifies" "$?" 0
echo "# $OUT"
ALL=$(grep -c '"kind":"CONFIG:SETTING"' "$WORK/b.jsonl")
[ "$ALL" -ge "$WRITES" ] && [ "$ALL" -le "$((WRITES + 1))" ] &&
    ok "$ALL records for $WRITES acknowledged writes" || bad "$ALL records for $WRITES acknowledged writes"

finish
