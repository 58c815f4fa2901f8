#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_pg.sh - proviso-advisor --store postgresql://... with real processes
# on loopback: a throwaway PostgreSQL cluster on a Unix socket
# (tests/pg_lib.sh), the advisor with its prover child, proviso-proxy
# --advisor, the logging upstream and curl as the agent.
#
# The loop: an agent's rule is proved, auto-approved and loaded (revision 2)
# and the retried request reaches the upstream; a manual proposal waits for a
# reviewer, a stale review token is refused, the right one approves
# (revision 3). Then a stream of acknowledged setting writes is cut by
# kill -9 of the advisor and an immediate (crash) stop of PostgreSQL; after
# both restart nothing acknowledged is missing, the revisions and rules are
# intact, a fresh proxy loads revision 3 from the restarted advisor and the
# upstream gets the approved request, and `proviso audit verify` passes on
# the export (and on --export-audit straight from the database). PostgreSQL
# restarting under the running advisor costs no request. A row changed
# behind the advisor's back makes the next start refuse the database, and so
# do credentials changed there.
# Nothing is written to the data directory's advisor.db; sqlite:FILE puts
# the store at FILE. Bad --store values fail at start with a clear message.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
. "$SRC/tests/pg_lib.sh"

pg_cluster "$BUILD/tests" cleanup

# ---------------------------------------------------------------------------
# start-up errors: refused with a message, nothing crashes
# ---------------------------------------------------------------------------

"$ADVISOR_BIN" --data-dir "$T/bad.d" --store mysql://x >"$T/bad1.log" 2>&1
expect_eq "unknown scheme exits 2" 2 "$?"
expect_has "unknown scheme named" "--store takes sqlite:FILE, postgresql://" "$(cat "$T/bad1.log")"
"$ADVISOR_BIN" --data-dir "$T/bad.d" --port 0 --store "postgresql:///nosuchdb?host=$PG_DIR/sock&user=proviso&password=s3cret" \
    >"$T/bad2.log" 2>&1
rc=$?
expect_eq "missing database: start-up error" 2 "$rc"
expect_has "missing database named" 'database "nosuchdb" does not exist' "$(cat "$T/bad2.log")"
expect_not "no password in the message" "s3cret" "$(cat "$T/bad2.log")"

# ---------------------------------------------------------------------------
# the loop on PostgreSQL
# ---------------------------------------------------------------------------

start_upstream_base /allowed
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"

start_advisor ADV --config "$T/quiet.yaml" --store "$PG_URL"
expect_has "the store is named" "dbname=proviso host=$PG_DIR/sock" "$(grep -F 'store: ' "$T/ADV.log")"
# its sessions carry proviso's connection defaults (store_pg_connect)
sessions=$(pg_as "$PG_BIN/psql" -h "$PG_DIR/sock" -U proviso -d proviso -Atc \
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'proviso-advisor'")
[ "${sessions:-0}" -ge 2 ] && pass ||
    fail "the advisor's database sessions are named proviso-advisor (found ${sessions:-none})"
sandbox ADV one "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "auto mode" 200 "$(code "$out")"
start_aproxy P1 ADV one
wait_log "$T/P1.log" "advisor revision 1 loaded" || fail "proxy never loaded revision 1"

out=$(via P1 "http://127.0.0.1:$UP/data")
expect_eq "denied before the proposal" 403 "$(code "$out")"
out=$(via P1 -d "$(rule data_read 127.0.0.1 "$UP" GET /data)" http://policy.local/v1/proposals)
expect_eq "submitted" "202 submitted" "$(code "$out") $(jget "$out" .status)"
ID=$(jget "$out" '.accepted_chunk_ids[0]')
out=$(via P1 "http://policy.local/v1/proposals/$ID/wait?timeout=20")
expect_eq "auto-approved, revision 2" "200 approved 2" \
    "$(code "$out") $(jget "$out" .status) $(jget "$out" .approved_revision)"
wait_log "$T/P1.log" "advisor revision 2 loaded" || fail "proxy never loaded revision 2"
out=$(via P1 "http://127.0.0.1:$UP/data")
expect_eq "retried request allowed" 200 "$(code "$out")"
if up_got "GET /data"; then pass; else fail "the upstream never got GET /data"; fi

out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"manual"}')
expect_eq "manual mode" 200 "$(code "$out")"
out=$(via P1 -d "$(rule manual_read 127.0.0.1 "$UP" GET /manual)" http://policy.local/v1/proposals)
MID=$(jget "$out" '.accepted_chunk_ids[0]')
out=$(via P1 "http://policy.local/v1/proposals/$MID/wait?timeout=1")
expect_eq "pending" "pending" "$(jget "$out" .status)"
TOKEN=$(jget "$out" .review_token)
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$MID/approve" '{"review_token":"stale"}')
expect_eq "stale review token refused" 412 "$(code "$out")"
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$MID/approve" "{\"review_token\":\"$TOKEN\"}")
expect_eq "reviewer approves" 200 "$(code "$out")"
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$MID/approve" "{\"review_token\":\"$TOKEN\"}")
expect_eq "a second approval with the same token is refused" 409 "$(code "$out")"
out=$(adm ADV GET /v1/sandboxes/one/policy)
expect_eq "revision 3 after the approval" 3 "$(jget "$out" .revision)"
wait_log "$T/P1.log" "advisor revision 3 loaded" || fail "proxy never loaded revision 3"

# ---------------------------------------------------------------------------
# kill -9 of the advisor and a crash of PostgreSQL during acknowledged writes
# ---------------------------------------------------------------------------

WRITES=${PG_WRITES:-4000}
ADM_TOKEN=$(cat "$T/ADV.admin") # read once: 4,000 forks of cat churned the PIDs
i=0
while [ "$i" -lt "$WRITES" ]; do
    if [ $((i % 2)) -eq 0 ]; then v=auto; else v=manual; fi
    printf 'url = "http://127.0.0.1:%s/v1/settings/proposal_approval_mode"\n' "$ADV_PORT"
    printf 'request = "PUT"\nheader = "Authorization: Bearer %s"\n' "$ADM_TOKEN"
    printf 'header = "Content-Type: application/json"\ndata = "{\\"value\\":\\"%s\\"}"\n' "$v"
    printf 'output = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n'
    [ $((i + 1)) -lt "$WRITES" ] && printf 'next\n'
    i=$((i + 1))
done >"$T/curl.cfg"
before=$(adm ADV GET "/v1/events?limit=1000" | sed 's/|[0-9]*$//' |
    "$JQ" '[.events[] | select(.kind == "CONFIG:SETTING")] | length')
"$CURL" -s -K "$T/curl.cfg" >"$T/codes" 2>/dev/null &
CURL_PID=$!
n=0
while kill -0 "$CURL_PID" 2>/dev/null; do
    n=$(wc -l <"$T/codes")
    [ "$n" -ge $((WRITES / 2)) ] && break
    sleep 0.02
done
kill -KILL "$ADV_PID"
pg_crash
wait "$ADV_PID" 2>/dev/null
wait "$CURL_PID" 2>/dev/null
ACKED=$(grep -c '^200$' "$T/codes")
echo "# $ACKED of $WRITES setting writes acknowledged before kill -9 and the crash"
[ "$ACKED" -gt 0 ] && [ "$ACKED" -lt "$WRITES" ] && pass ||
    fail "the kill did not land inside the writes ($ACKED of $WRITES)"
eq_prefix=$(grep -n -v '^200$' "$T/codes" | head -n 1 | cut -d: -f1)
expect_eq "acknowledged writes are a prefix" "$((ACKED + 1))" "${eq_prefix:-$((ACKED + 1))}"

pg_restart || fail "PostgreSQL did not restart"
start_advisor ADV --config "$T/quiet.yaml" --store "$PG_URL"
expect_has "the restarted advisor checked its chain" "the store agrees with its chain" \
    "$(grep -F 'audit: ' "$T/ADV.log")"
after=$(adm ADV GET "/v1/events?limit=5000" | sed 's/|[0-9]*$//' |
    "$JQ" '[.events[] | select(.kind == "CONFIG:SETTING")] | length')
got=$((after - before))
if [ "$got" -ge "$ACKED" ] && [ "$got" -le $((ACKED + 1)) ]; then pass; else
    fail "acknowledged setting writes: $ACKED answered, $got recorded"
fi
out=$(adm ADV GET /v1/sandboxes/one/policy)
expect_eq "revision 3 survived" 3 "$(jget "$out" .revision)"
expect_has "the approved rule survived" "path: /manual" "$(jget "$out" .policy_yaml)"
out=$(adm ADV GET "/v1/sandboxes/one/proposals/$MID")
expect_eq "the approval survived" approved "$(jget "$out" .status)"

start_aproxy P2 ADV one
wait_log "$T/P2.log" "advisor revision 3 loaded" || fail "a fresh proxy did not load revision 3"
: >"$T/up.log"
out=$(via P2 "http://127.0.0.1:$UP/manual")
expect_eq "the approved request passes after the restart" 200 "$(code "$out")"
if up_got "GET /manual"; then pass; else fail "the upstream never got GET /manual"; fi
out=$(via P2 "http://127.0.0.1:$UP/other")
expect_eq "an unapproved request is still denied" 403 "$(code "$out")"
if up_got "GET /other"; then fail "the upstream got GET /other"; else pass; fi

"$BUILD/proviso" audit export --advisor "http://127.0.0.1:$ADV_PORT" --token-file "$T/ADV.admin" \
    >"$T/a.jsonl"
expect_eq "audit export" 0 "$?"
pub=$("$BUILD/proviso" audit pubkey --advisor "http://127.0.0.1:$ADV_PORT" --token-file "$T/ADV.admin")
vout=$("$BUILD/proviso" audit verify "$T/a.jsonl" --pubkey "$pub" 2>&1)
expect_eq "the chain verifies after kill -9 and the crash" 0 "$?"
echo "# $vout"
# The export straight from the database (the advisor running), and the
# refusal to export a store that is not in the data directory.
"$ADVISOR_BIN" --data-dir "$T/ADV.d" --store "$PG_URL" --export-audit >"$T/b.jsonl" 2>"$T/b.err"
expect_eq "--export-audit --store" 0 "$?"
"$BUILD/proviso" audit verify "$T/b.jsonl" --pubkey "$pub" >/dev/null 2>&1
expect_eq "the direct export verifies" 0 "$?"
"$BUILD/proviso" audit export --data-dir "$T/ADV.d" --store "$PG_URL" >"$T/d.jsonl" 2>"$T/d.err"
expect_eq "proviso audit export --data-dir --store" 0 "$?"
"$BUILD/proviso" audit verify "$T/d.jsonl" --pubkey "$pub" >/dev/null 2>&1
expect_eq "the CLI's offline export verifies" 0 "$?"
expect_eq "and holds every record of the advisor's own export" "" \
    "$(grep -v '"type":"header"' "$T/b.jsonl" | grep -vxFf "$T/d.jsonl" | head -c 200)"
"$BUILD/proviso" audit export --advisor "http://127.0.0.1:$ADV_PORT" --store "$PG_URL" >/dev/null 2>&1
expect_eq "--store without --data-dir: usage" 2 "$?"
"$ADVISOR_BIN" --data-dir "$T/ADV.d" --export-audit >/dev/null 2>"$T/c.err"
expect_eq "--export-audit without --store refused" 2 "$?"
expect_has "names the store it is on" "this data directory's store is postgresql" "$(cat "$T/c.err")"

# PostgreSQL restarts under the running advisor: the next write opens a new
# connection (docs/operations.md#postgresql) and is acknowledged durably.
pg_crash
pg_restart || fail "PostgreSQL did not restart the second time"
out=$(adm ADV PUT /v1/settings/proposal_approval_mode '{"value":"manual"}')
expect_eq "a write after a database restart" 200 "$(code "$out")"
out=$(adm ADV GET /v1/sandboxes/one/policy)
expect_eq "a read after a database restart" "200 3" "$(code "$out") $(jget "$out" .revision)"
out=$(via P2 "http://policy.local/v1/proposals/$MID")
expect_eq "the agent's view after a database restart" approved "$(jget "$out" .status)"
# The data directory remembers the store: started without --store the
# advisor refuses instead of beginning on a new, empty SQLite store.
expect_has "store.location names the database" "dbname=proviso" "$(cat "$T/ADV.d/store.location")"
expect_not "store.location holds no secret" "password" "$(cat "$T/ADV.d/store.location")"
"$ADVISOR_BIN" --data-dir "$T/ADV.d" --port 0 >"$T/nostore.log" 2>&1
expect_eq "without --store: start-up refused" 2 "$?"
expect_has "the refusal names --store" "pass --store" "$(cat "$T/nostore.log")"

# A database changed behind the advisor's back: the start-up check against
# the chain refuses it (docs/audit.md#state), as on SQLite.
kill -KILL "$ADV_PID"
wait "$ADV_PID" 2>/dev/null
"$PG_BIN/psql" -q "$PG_URL" -c "UPDATE chunks SET status = 'rejected' WHERE id = '$MID'" >/dev/null
expect_eq "the chunk changed in the database" 0 "$?"
"$ADVISOR_BIN" --data-dir "$T/ADV.d" --store "$PG_URL" --port 0 >"$T/tamper.log" 2>&1
expect_eq "a tampered database: start-up refused" 2 "$?"
expect_has "the disagreement is named" "the store says rejected, the chain says approved" \
    "$(cat "$T/tamper.log")"
# The inputs of decisions too (docs/audit.md#inputs, issue 36 item 5): the
# chunk put back, the sandbox's credentials changed by a database writer.
"$PG_BIN/psql" -q "$PG_URL" -c "UPDATE chunks SET status = 'approved' WHERE id = '$MID';
    UPDATE sandboxes SET credentials = 'credentials: []' WHERE name = 'one'" >/dev/null
expect_eq "the credentials changed in the database" 0 "$?"
"$ADVISOR_BIN" --data-dir "$T/ADV.d" --store "$PG_URL" --port 0 >"$T/tamper2.log" 2>&1
expect_eq "changed credentials: start-up refused" 2 "$?"
expect_has "the input is named" "sandbox one: the store says input credentials sha256" \
    "$(cat "$T/tamper2.log")"

# sqlite:FILE puts the SQLite store where it says, not in the data directory.
"$ADVISOR_BIN" --data-dir "$T/sq.d" --store sqlite: >"$T/sq0.log" 2>&1
expect_eq "sqlite: without a file exits 2" 2 "$?"
"$ADVISOR_BIN" --data-dir "$T/sq.d" --port 0 --store "sqlite:$T/nodir/x.db" >"$T/sq1.log" 2>&1
expect_eq "sqlite: in a missing directory: start-up error" 2 "$?"
expect_has "names the file" "$T/nodir/x.db" "$(cat "$T/sq1.log")"
start_advisor SQ --store "sqlite:$T/elsewhere.db"
sandbox SQ two "$T/base.yaml"
expect_has "the store line names the file" "store: sqlite $T/elsewhere.db" "$(grep -F 'store: ' "$T/SQ.log")"
if [ -s "$T/elsewhere.db" ] && [ ! -e "$T/SQ.d/advisor.db" ]; then pass; else
    fail "sqlite:FILE did not put the store at FILE"
fi

if [ -e "$T/ADV.d/advisor.db" ]; then fail "an SQLite advisor.db was written"; else pass; fi
finish
