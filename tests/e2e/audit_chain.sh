#!/bin/sh
# audit_chain.sh - the audit chain end to end: mixed manual and automatic
# decisions through the real advisor and prover, `proviso audit export`
# (over HTTP and offline from the data directory), `verify` on the intact
# export and on each kind of tampering (one byte of a record, one byte of a
# blob, a dropped record, two records swapped, a cut-off tail, another
# key), unreadable files, `replay` (no differences), and a forged
# auto-approval of a proposal with findings (a violation).
. "$(dirname "$0")/advisor_lib.sh"

PROVISO=$PV_BUILDDIR/proviso
POLICY='version: 1
network_policies:
  github_ro:
    name: github_ro
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        access: read-only
    binaries:
      - path: /usr/bin/curl
'
CREDS='credentials:
  - {name: gh, type: github, target_hosts: [api.github.com]}
'

start_advisor "$WORK/data" || exit 1

# --- the key -----------------------------------------------------------------
eq "audit.key is 0600" "$(stat -c %a "$WORK/data/audit.key")" 600
api GET /v1/audit/pubkey "" -
eq "pubkey needs the admin token" "$STATUS" 401
PUB=$("$PROVISO" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")
eq "pubkey is base64 of 32 bytes" "$(printf '%s' "$PUB" | base64 -d 2>/dev/null | wc -c)" 32
api GET /v1/audit/pubkey
has "pubkey route serves PEM too" "$(jf .pem)" "BEGIN PUBLIC KEY"
printf '%s\n' "$(jf .pem)" >"$WORK/pub.pem"

# --- decisions: auto, manual with findings, rejected -------------------------
create_sandbox sb1 "$POLICY" "$CREDS"
T1=$SB_TOKEN
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
api PUT /v1/sandboxes/sb1/settings/proposal_approval_mode '{"value":"auto"}'
api POST /v1/sandboxes/sb1/proposals "$(proposal ex example.com 443 GET /index.html)" "$T1"
C1=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C1"
eq "auto-approved" "$(jf .status)" approved
api POST /v1/sandboxes/sb1/proposals "$(proposal ghw api.github.com 443 PUT '/repos/o/r/contents/**')" "$T1"
C2=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C2"
eq "findings wait for a reviewer" "$(jf .status)" pending
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" "{\"review_token\":\"$(jf .review_token)\"}"
eq "reviewer approves the finding" "$STATUS" 200
api POST /v1/sandboxes/sb1/proposals "$(proposal ex2 example.org 443 GET /a)" "$T1"
C3=$(jf '.accepted_chunk_ids[0]')
api POST /v1/sandboxes/sb1/proposals "$(proposal ghd api.github.com 443 DELETE '/repos/o/r')" "$T1"
C4=$(jf '.accepted_chunk_ids[0]')
api POST "/v1/sandboxes/sb1/proposals/$C4/reject" '{"reason":"too broad"}'
eq "reject" "$STATUS" 200
api POST /v1/sandboxes/sb1/loaded "$(api GET /v1/sandboxes/sb1/policy; jf '{revision, hash}' | jq -c .)" "$T1"
api GET /v1/events
NEV=$(jf '.events | length')

# --- export and verify -------------------------------------------------------
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/a.jsonl"
eq "export over HTTP" "$?" 0
eq "one record per event" "$(grep -c '"type":"record"' "$WORK/a.jsonl")" "$NEV"
has "blobs are in the export" "$(grep -c '"type":"blob"' "$WORK/a.jsonl")" ""
OUT=$("$PROVISO" audit verify "$WORK/a.jsonl" --pubkey "$PUB")
eq "verify intact: exit 0" "$?" 0
has "verify intact: says so" "$OUT" "intact: $NEV records"
"$PROVISO" audit verify "$WORK/a.jsonl" --pubkey "$WORK/pub.pem" >/dev/null
eq "verify with the PEM file" "$?" 0
J=$("$PROVISO" audit verify "$WORK/a.jsonl" --pubkey "$PUB" --format json)
eq "verify json: status" "$(printf '%s' "$J" | jq -r .status)" intact
eq "verify json: last seq" "$(printf '%s' "$J" | jq -r .last_seq)" "$NEV"
"$PROVISO" audit export --data-dir "$WORK/data" >"$WORK/off.jsonl"
eq "offline export while the advisor runs" "$?" 0
"$PROVISO" audit verify "$WORK/off.jsonl" --pubkey "$PUB" >/dev/null
eq "offline export verifies" "$?" 0
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" --since 3 >"$WORK/since.jsonl"
OUT=$("$PROVISO" audit verify "$WORK/since.jsonl" --pubkey "$PUB")
eq "export --since verifies" "$?" 0
has "export --since starts after 3" "$OUT" "(seq 4..$NEV)"
api GET "/v1/audit/export?since=99999"
eq "export since a missing record: 404" "$STATUS" 404

# --- tampering ---------------------------------------------------------------
# verify_bad NAME FILE WANT-IN-OUTPUT
verify_bad() {
    OUT=$("$PROVISO" audit verify "$2" --pubkey "$PUB")
    rc=$?
    eq "$1: exit 1" "$rc" 1
    has "$1: named" "$OUT" "$3"
}
# One byte of record 3's text.
awk 'NR==4 { sub(/CONFIG:/, "CONFIG;") } { print }' "$WORK/a.jsonl" >"$WORK/t1.jsonl"
verify_bad "one byte of a record" "$WORK/t1.jsonl" "record seq 3 (line 4): content does not match its hash"
# One byte of a record's data (a number), re-serialised differently too.
awk 'NR==5 { sub(/"seq":4/, "\"seq\":  4") } { print }' "$WORK/a.jsonl" >"$WORK/t1b.jsonl"
"$PROVISO" audit verify "$WORK/t1b.jsonl" --pubkey "$PUB" >/dev/null
eq "whitespace alone is not tampering" "$?" 0
# One byte of the first blob.
awk '/"type":"blob"/ && !d { i = index($0, "\"data_b64\":\"") + 12; c = substr($0, i, 1);
     r = (c == "A") ? "B" : "A"; $0 = substr($0, 1, i - 1) r substr($0, i + 1); d = 1 } { print }' \
    "$WORK/a.jsonl" >"$WORK/t2.jsonl"
verify_bad "one byte of a blob" "$WORK/t2.jsonl" "is altered"
# A dropped record (seq 4, line 5).
sed '5d' "$WORK/a.jsonl" >"$WORK/t3.jsonl"
verify_bad "a dropped record" "$WORK/t3.jsonl" "record seq 5 (line 5): sequence gap (a record is missing): expected seq 4"
# Two records swapped (seq 4 and 5).
awk 'NR==5 { h = $0; next } NR==6 { print; print h; next } { print }' "$WORK/a.jsonl" >"$WORK/t4.jsonl"
verify_bad "two records swapped" "$WORK/t4.jsonl" "record seq 5 (line 5): sequence gap"
# The last record cut off.
LAST=$((NEV + 1))
sed "${LAST}d" "$WORK/a.jsonl" >"$WORK/t5.jsonl"
verify_bad "the tail cut off" "$WORK/t5.jsonl" "records are missing at the end"
# Another key: a key the auditor does not trust.
openssl genpkey -algorithm ed25519 -out "$WORK/other.key" 2>/dev/null
openssl pkey -in "$WORK/other.key" -pubout -out "$WORK/other.pub" 2>/dev/null
OUT=$("$PROVISO" audit verify "$WORK/a.jsonl" --pubkey "$WORK/other.pub")
eq "another key: exit 1" "$?" 1
has "another key: record 1 named" "$OUT" "record seq 1 (line 2): signature does not verify"
# A signature edited (not covered by the record's own hash).
awk 'NR==3 { sub(/"sig":"./, "\"sig\":\"A") } { print }' "$WORK/a.jsonl" >"$WORK/t6.jsonl"
if cmp -s "$WORK/t6.jsonl" "$WORK/a.jsonl"; then
    awk 'NR==3 { sub(/"sig":"./, "\"sig\":\"B") } { print }' "$WORK/a.jsonl" >"$WORK/t6.jsonl"
fi
verify_bad "an edited signature" "$WORK/t6.jsonl" "record seq 2 (line 3)"
# Unreadable.
"$PROVISO" audit verify "$WORK/nope.jsonl" --pubkey "$PUB" >/dev/null
eq "missing file: exit 2" "$?" 2
printf 'garbage\n' >"$WORK/g.jsonl"
"$PROVISO" audit verify "$WORK/g.jsonl" --pubkey "$PUB" >/dev/null
eq "not an export: exit 2" "$?" 2
"$PROVISO" audit verify "$WORK/a.jsonl" --pubkey "not-a-key" >/dev/null 2>&1
eq "bad --pubkey: exit 2" "$?" 2

# --- replay ------------------------------------------------------------------
OUT=$("$PROVISO" audit replay "$WORK/a.jsonl")
eq "replay: exit 0" "$?" 0
has "replay: nothing differs" "$OUT" "3 replayed, 3 same, 0 differ, 0 violations"
J=$("$PROVISO" audit replay "$WORK/a.jsonl" --format json)
eq "replay json: auto and manual" "$(printf '%s' "$J" | jq -c '[.results[].auto] | sort')" '[false,true,true]'
# The reviewer's approval of a finding, recorded as automatic: a forgery
# (verify catches the edit; replay judges the decision on its merits).
awk -v id="$C2" 'index($0, "\"kind\":\"CONFIG:APPROVED\"") && index($0, id) {
     sub(/"auto":false/, "\"auto\":true"); sub(/"prover_delta":"findings"/, "\"prover_delta\":\"empty\"") }
     { print }' "$WORK/a.jsonl" >"$WORK/forged.jsonl"
OUT=$("$PROVISO" audit replay "$WORK/forged.jsonl")
eq "forged auto-approval: exit 1" "$?" 1
has "forged auto-approval: violation" "$OUT" "VIOLATION seq"
has "forged auto-approval: the finding" "$OUT" "auto-approved, but the replayed proof has findings"
has "forged auto-approval: counted" "$OUT" "1 violations"
"$PROVISO" audit verify "$WORK/forged.jsonl" --pubkey "$PUB" >/dev/null
eq "forged auto-approval: verify catches the edit" "$?" 1
# A recorded answer that the prover would not give again.
awk -v id="$C2" 'index($0, "\"kind\":\"CONFIG:APPROVED\"") && index($0, id) {
     sub(/"validation_result":"prover: 1 new finding/, "\"validation_result\":\"prover: 2 new finding") }
     { print }' "$WORK/a.jsonl" >"$WORK/vr.jsonl"
OUT=$("$PROVISO" audit replay "$WORK/vr.jsonl")
eq "edited validation_result: exit 1" "$?" 1
has "edited validation_result: counted" "$OUT" "1 differ"
has "edited validation_result: a mismatch" "$OUT" ": mismatch"
# The same difference recorded under another prover build: a version change.
awk -v id="$C2" 'index($0, "\"kind\":\"CONFIG:APPROVED\"") && index($0, id) {
     sub(/"prover_version":"[^"]*"/, "\"prover_version\":\"proviso-prover 0.0.1 (z3 4.8.1)\"") }
     { print }' "$WORK/vr.jsonl" >"$WORK/ver.jsonl"
OUT=$("$PROVISO" audit replay "$WORK/ver.jsonl")
eq "another prover version: exit 1" "$?" 1
has "another prover version: a version change" "$OUT" "version change"
has "another prover version: names both" "$OUT" "recorded under proviso-prover 0.0.1"
"$PROVISO" audit replay "$WORK/g.jsonl" >/dev/null 2>&1
eq "replay of garbage: exit 2" "$?" 2

# --- the key's protection ----------------------------------------------------
stop_advisor
chmod 644 "$WORK/data/audit.key"
"$ADV_BIN" --data-dir "$WORK/data" --port 0 --token-file "$ADMIN_FILE" 2>"$WORK/perm.log" &
P=$!
wait "$P"
eq "a world-readable key: the advisor refuses to start" "$?" 2
has "a world-readable key: says why" "$(cat "$WORK/perm.log")" "must not be accessible"
chmod 600 "$WORK/data/audit.key"
start_advisor "$WORK/data" || exit 1
eq "same key after restart" "$("$PROVISO" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")" "$PUB"
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":false}'
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/b.jsonl"
"$PROVISO" audit verify "$WORK/b.jsonl" --pubkey "$PUB" >/dev/null
eq "the chain continues across a restart" "$?" 0

# --- events written before the chain (a v1 store, or the test switch) ---------
stop_advisor
start_advisor "$WORK/old" --test-no-audit-chain || exit 1
api PUT /v1/settings/proposal_approval_mode '{"value":"auto"}'
api PUT /v1/settings/proposal_approval_mode '{"value":"manual"}'
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >/dev/null 2>&1
eq "unsealed events cannot be exported" "$?" 3
stop_advisor
start_advisor "$WORK/old" || exit 1
has "the restart seals them" "$(cat "$ADV_LOG")" "sealed 2 events written before the chain"
api PUT /v1/settings/proposal_approval_mode '{"value":"auto"}'
P2=$("$PROVISO" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/old.jsonl"
"$PROVISO" audit verify "$WORK/old.jsonl" --pubkey "$P2" >/dev/null
eq "legacy records and new ones verify as one chain" "$?" 0
eq "legacy records are marked" "$(grep -c '"legacy":true' "$WORK/old.jsonl")" 2

finish
