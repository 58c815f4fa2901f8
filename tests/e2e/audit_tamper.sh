#!/bin/sh
# audit_tamper.sh - the chain binds the state (docs/audit.md#state): a store
# changed with sqlite3 behind the advisor's back is refused at start and
# shows in a verified export. Approvals, a rejection and an undo through the
# real advisor; then three copies of the data directory: one untampered
# (starts, verifies, every revision recomputed or counted), one where a
# rejected chunk is flipped to approved with the revision an approval would
# have written but no record, one where the last approval's record is
# deleted (and one where an approval in the middle is deleted). Needs
# sqlite3, curl, jq.
. "$(dirname "$0")/advisor_lib.sh"

if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "SKIP: sqlite3 is not installed"
    exit 77
fi
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
D=$WORK/data

# approve ID: approve chunk ID of sb1 with its current review token (again
# when the policy moved since its evaluation: 412, evaluation refreshed).
approve() {
    for _ in 1 2 3; do
        api GET "/v1/sandboxes/sb1/proposals/$1"
        api POST "/v1/sandboxes/sb1/proposals/$1/approve" "{\"review_token\":\"$(jf .review_token)\"}"
        [ "$STATUS" = 412 ] || break
    done
}
# submit NAME HOST: a proposal of sb1; its chunk id into C.
submit() {
    api POST /v1/sandboxes/sb1/proposals "$(proposal "$1" "$2" 443 GET /x)" "$T1"
    C=$(jf '.accepted_chunk_ids[0]')
}
# refuses NAME DIR WANT...: the advisor exits non-zero at start and logs each WANT.
refuses() {
    name=$1
    dir=$2
    shift 2
    # an advisor that wrongly starts is stopped after 60 s (exit 124)
    timeout 60 "$ADV_BIN" --data-dir "$dir" --port 0 --token-file "$ADMIN_FILE" \
        2>"$WORK/refuse.log"
    rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then ok "$name: the advisor refuses to start"; else
        bad "$name: the advisor started (exit $rc)"; fi
    for want in "$@"; do
        has "$name: logged" "$(cat "$WORK/refuse.log")" "$want"
    done
}
# verify_fails NAME DIR WANT: an offline export of DIR does not verify.
verify_fails() {
    "$PROVISO" audit export --data-dir "$2" >"$WORK/$1.jsonl"
    eq "$1: the tampered store still exports" "$?" 0
    OUT=$("$PROVISO" audit verify "$WORK/$1.jsonl" --pubkey "$PUB")
    eq "$1: verify exit 1" "$?" 1
    has "$1: verify names it" "$OUT" "$3"
}

start_advisor "$D" || exit 1
PUB=$("$PROVISO" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")
create_sandbox sb1 "$POLICY"
T1=$SB_TOKEN
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
submit ex1 example.com
C1=$C
approve "$C1"
eq "approve C1" "$STATUS" 200
submit ex2 example.org
C2=$C
api POST "/v1/sandboxes/sb1/proposals/$C2/reject" '{"reason":"no"}'
eq "reject C2" "$STATUS" 200
submit ex3 example.net
C3=$C
approve "$C3"
api POST "/v1/sandboxes/sb1/proposals/$C3/undo" '{}'
eq "undo C3" "$STATUS" 200
submit ex4 example.edu
C4=$C
approve "$C4"
eq "approve C4 (the last event)" "$STATUS" 200
stop_advisor
for t in clean flip tail middle scratch; do cp -a "$D" "$WORK/$t"; done
SQL() { sqlite3 "$WORK/$1/advisor.db" "$2"; }

# --- untampered --------------------------------------------------------------
start_advisor "$WORK/clean" || exit 1
has "untampered: the check ran" "$(cat "$ADV_LOG")" "the store agrees with its chain"
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/clean.jsonl"
OUT=$("$PROVISO" audit verify "$WORK/clean.jsonl" --pubkey "$PUB")
eq "untampered: verify exit 0" "$?" 0
has "untampered: the state is checked" "$OUT" "store state: the state at the export is the one the records imply"
has "untampered: CONFIG:CREATED recomputed" "$OUT" "revisions: "
J=$("$PROVISO" audit verify "$WORK/clean.jsonl" --pubkey "$PUB" --format json)
eq "untampered: every revision record counted" \
    "$(printf '%s' "$J" | jq '.revisions_recomputed + .revisions_not_recomputable')" \
    "$(grep -c '"kind":"CONFIG:\(CREATED\|APPROVED\|REMOVED\)"' "$WORK/clean.jsonl")"
eq "untampered: creation recomputed" "$(printf '%s' "$J" | jq '.revisions_recomputed >= 1')" true
OUT=$("$PROVISO" audit replay "$WORK/clean.jsonl")
eq "untampered: replay exit 0" "$?" 0
has "untampered: replay counts" "$OUT" "3 replayed, 3 same"
stop_advisor

# --- a rejected chunk flipped to approved, with the revision ------------------
# The revision an approval of C2 would write: made by the advisor in a
# scratch copy, then copied into the store without its record.
start_advisor "$WORK/scratch" || exit 1
approve "$C2"
eq "scratch: approve C2" "$STATUS" 200
stop_advisor
REV=$(SQL scratch "SELECT rev || '|' || blob || '|' || hash FROM revisions ORDER BY rev DESC LIMIT 1")
BLOB=$(echo "$REV" | cut -d'|' -f2)
HASH=$(echo "$REV" | cut -d'|' -f3)
SQL scratch ".dump blobs" | grep "'$BLOB'" | sed 's/^INSERT INTO/INSERT OR IGNORE INTO/' >"$WORK/blob.sql"
SQL flip "$(cat "$WORK/blob.sql")"
SQL flip "INSERT INTO revisions SELECT sandbox, rev + 1, base_rev, '$BLOB', '$HASH', 'approve $C2',
    created_ms FROM revisions ORDER BY rev DESC LIMIT 1;
  UPDATE chunks SET status = 'approved', decided_by = 'reviewer', rejection_reason = '',
    approved_seq = (SELECT MAX(approved_seq) + 1 FROM chunks),
    approved_rev = (SELECT MAX(rev) FROM revisions) WHERE id = '$C2';"
eq "flip: the store now serves C2's grant" \
    "$(SQL flip "SELECT hash FROM revisions ORDER BY rev DESC LIMIT 1")" "$HASH"
refuses flip "$WORK/flip" "sandbox sb1 chunk $C2: the store says approved, the chain says rejected" \
    "sandbox sb1: the store says revision v" "refusing to start"
verify_fails flip "$WORK/flip" "the store disagrees with the chain: sandbox sb1"
OUT=$("$PROVISO" audit replay "$WORK/flip.jsonl")
eq "flip: replay exit 1" "$?" 1
has "flip: replay names the unbacked approval" "$OUT" "chunk $C2: approved in the store, but the chain"

# --- the last approval's record deleted ---------------------------------------
N=$(SQL tail "SELECT MAX(seq) FROM events")
eq "tail: the last event is C4's approval" \
    "$(SQL tail "SELECT kind FROM events WHERE seq = $N")" "CONFIG:APPROVED"
SQL tail "DELETE FROM events WHERE seq = $N"
refuses tail "$WORK/tail" "sandbox sb1 chunk $C4: the store says approved, the chain says pending"
verify_fails tail "$WORK/tail" "the store disagrees with the chain: sandbox sb1"
has "tail: verify counts the rest" "$OUT" "(and 1 more disagreements)"
OUT=$("$PROVISO" audit replay "$WORK/tail.jsonl")
eq "tail: replay exit 1" "$?" 1
has "tail: replay counts honestly" "$OUT" "1 approved chunks without a CONFIG:APPROVED record"

# --- an approval in the middle deleted ----------------------------------------
S1=$(SQL middle "SELECT seq FROM events WHERE kind = 'CONFIG:APPROVED'
    AND json_extract(json, '$.chunk_id') = '$C1'")
SQL middle "DELETE FROM events WHERE seq = $S1"
refuses middle "$WORK/middle" "sandbox sb1 chunk $C1: the store says approved, the chain says pending"
verify_fails middle "$WORK/middle" "sequence gap"

finish
