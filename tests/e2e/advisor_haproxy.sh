#!/bin/sh
# advisor_haproxy.sh - contrib/haproxy/proviso-provers.cfg as shipped, in
# front of two real proviso-prover processes, all on 127.0.0.1; the advisor
# is given HAProxy's one address (--prover once). Proofs are spread over
# both provers under concurrent submissions (their own /metrics); after kill -9 of one, submissions are
# still approved on proofs; with both dead they stay pending with the
# reason and nothing is approved; a prover started again is used again.
# Skips (77) when haproxy is not installed.
. "$(dirname "$0")/advisor_lib.sh"

HAPROXY=${PV_HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}
[ -x "$HAPROXY" ] || { echo "SKIP: haproxy is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
CFG=${PV_SRCDIR:-$(dirname "$0")/../..}/contrib/haproxy/proviso-provers.cfg
[ -f "$CFG" ] || CFG=$(dirname "$0")/../../contrib/haproxy/proviso-provers.cfg
PIDS=
# shellcheck disable=SC2086
trap 'kill_own KILL $PIDS; adv_cleanup' EXIT INT TERM

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
N=0
submit() { # SANDBOX TOKEN: the chunk's record in BODY
    N=$((N + 1))
    api POST "/v1/sandboxes/$1/proposals" "$(proposal "h$N" "lb$N.example.com" 443 GET /x)" "$2"
    CHUNK=$(jf '.accepted_chunk_ids[0]')
    api GET "/v1/sandboxes/$1/proposals/$CHUNK"
}
approved_without_proof() {
    api GET "/v1/sandboxes/$1/proposals"
    jf '[.chunks[] | select(.status == "approved") |
         select(.evidence.prover.verdict != "empty")] | length'
}

start_prover p1
P1=$P_PID
P1_PORT=$P_PORT
start_prover p2
P2=$P_PID
P2_PORT=$P_PORT
LB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export PROVISO_POOL_BIND=127.0.0.1:$LB_PORT PROVISO_PROVER1=127.0.0.1:$P1_PORT \
    PROVISO_PROVER2=127.0.0.1:$P2_PORT
"$HAPROXY" -c -q -f "$CFG"
eq "the shipped config is valid" "$?" 0
"$HAPROXY" -db -f "$CFG" >"$WORK/haproxy.log" 2>&1 &
HA=$!
PIDS="$PIDS $HA"
i=0
until curl -s -o /dev/null "http://$PROVISO_POOL_BIND/healthz" || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done

start_advisor "$WORK/data" --prover "http://$PROVISO_POOL_BIND" --prover-token-file "$ADMIN_FILE" ||
    exit 1
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
create_sandbox sb "$POLICY"
T=$SB_TOKEN
api PUT /v1/sandboxes/sb/settings/proposal_approval_mode '{"value":"auto"}'

# Twenty at once: leastconn spreads what is in flight (one call after the
# other would all find the first prover idle).
# Decisions on one sandbox are serialised: four sandboxes, five each.
for s in 1 2 3 4; do
    create_sandbox "par$s" "$POLICY"
    eval "PT$s=\$SB_TOKEN"
    api PUT "/v1/sandboxes/par$s/settings/proposal_approval_mode" '{"value":"auto"}'
done
CURLS=
for k in $(seq 1 20); do
    s=$((k % 4 + 1))
    eval "pt=\$PT$s"
    b=$(proposal "par$k" "par$k.example.com" 443 GET /x)
    # a subshell of dash keeps the EXIT trap: clear it (it would clean up)
    (trap - EXIT INT TERM; exec curl -s -o "$WORK/par.$k" -H "Authorization: Bearer $pt" \
        -H 'Content-Type: application/json' --data-binary "$b" \
        "$ADV/v1/sandboxes/par$s/proposals") &
    CURLS="$CURLS $!"
done
for c in $CURLS; do wait "$c"; done
okn=0
for k in $(seq 1 20); do
    c=$(jq -r '.accepted_chunk_ids[0]' "$WORK/par.$k")
    api GET "/v1/sandboxes/par$((k % 4 + 1))/proposals/$c"
    [ "$(jf .status)" = approved ] && okn=$((okn + 1))
done
eq "through HAProxy: twenty approved on proofs" "$okn" 20
d1=$(proves "$P1_PORT")
d2=$(proves "$P2_PORT")
c1=$(proves "$P1_PORT" '\(prove\|check\)')
c2=$(proves "$P2_PORT" '\(prove\|check\)')
echo "# proofs: prover 1 answered $d1, prover 2 answered $d2; with containment checks $c1 and $c2"
# (a submission proved against a revision another one moved is proved again)
eq "all twenty proved" "$([ $((d1 + d2)) -ge 20 ] && echo yes)" yes
# HAProxy balances calls, and an evaluation's proof and its containment
# check follow each other: which of the two a prover gets is not random
# (under load one prover took 1 proof and 16 checks), so calls are counted.
eq "both provers took calls (random: fewer than 4 of 40 on one is a 1 in 10^7 chance)" \
    "$([ "$c1" -ge 4 ] && [ "$c2" -ge 4 ] && echo yes)" yes

kill -KILL "$P1"
wait "$P1" 2>/dev/null
okn=0
for _ in 1 2 3 4 5 6; do
    submit sb "$T"
    if [ "$(jf .status)" = approved ]; then
        okn=$((okn + 1))
    else
        echo "# not approved: $(jf "{status, application_error} | tostring")"
    fi
done
eq "prover 1 dead: six approved through HAProxy" "$okn" 6 ||
    sed 's/^/# haproxy: /' "$WORK/haproxy.log"
eq "prover 2 proved them" "$(($(proves "$P2_PORT") - d2))" 6
eq "no approval without a proof" "$(approved_without_proof sb)" 0

kill -KILL "$P2"
wait "$P2" 2>/dev/null
api GET /v1/sandboxes/sb/policy
REV=$(jf .revision)
submit sb "$T"
eq "both dead: pending" "$(jf .status)" pending
has "both dead: the reason" "$(jf .application_error)" "prover validation unavailable"
api GET /v1/sandboxes/sb/policy
eq "both dead: the revision did not move" "$(jf .revision)" "$REV"

start_prover p1b "$P1_PORT"
okn=0
i=0
while [ $i -lt 30 ]; do
    submit sb "$T"
    [ "$(jf .status)" = approved ] && { okn=1; break; }
    sleep 0.5
    i=$((i + 1))
done
eq "prover 1 restarted: HAProxy uses it again" "$okn" 1
eq "prover 1 proved it" "$([ "$(proves "$P1_PORT")" -ge 1 ] && echo yes)" yes
eq "still no approval without a proof" "$(approved_without_proof sb)" 0
stop_advisor
finish
