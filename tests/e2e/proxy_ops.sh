#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_ops.sh - operating proviso-proxy: GET /metrics counts known traffic
# exactly (3 allowed and 2 denied requests, a DNS failure that is its own
# stage and no DENIED line, reloads, pins, the latency histogram); /healthz
# answers 503 with the reason while a failed reload keeps the proxy in
# fail-closed quarantine and 200 again once a valid policy loads; the CA
# path is logged at start; the start-up self-check refuses to run without
# CAP_SYS_PTRACE (capabilities really dropped with setpriv) unless
# --unprivileged-identity is given.
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A
# a port nothing listens on (the upstream's own port file, then it exits)
"$UPSTREAM_BIN" --port-file "$T/closed.port" 2>/dev/null &
cp=$!
wait_file "$T/closed.port"
kill "$cp"
wait "$cp" 2>/dev/null
read -r CLOSED _ <"$T/closed.port"

policy() {
    cat >"$1" <<EOF
version: 1
network_policies:
  curl:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
      - host: nosuch.invalid
        port: 80
      - host: 127.0.0.1
        port: $CLOSED
    binaries:
      - path: /usr/bin/curl
  raw:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: $RAW
EOF
}
policy "$T/policy.yaml"
start_proxy

metric() { # NAME{LABELS} -> value (empty when absent)
    "$CURL" -s --max-time 3 "http://127.0.0.1:$ADM/metrics" |
        awk -v k="$1" '$1 == k {print $2}'
}

# the CA clients must trust is named at start
expect_log "CA path logged" "CA certificate (clients must trust it): $T/data/ca.crt"

out=$("$CURL" -s --max-time 3 -w '|%{http_code}|%{content_type}' "http://127.0.0.1:$ADM/metrics")
expect_has "metrics: 200" "|200|text/plain; version=0.0.4" "$out"
expect_has "metrics: HELP" "# TYPE proviso_proxy_decisions_total counter" "$out"
expect_eq "metrics: no decisions yet" "" "$(metric 'proviso_proxy_decisions_total{outcome="allowed",stage="forward"}')"

for i in 1 2 3; do
    expect_eq "allowed $i" "|200" "$(pcurl -o /dev/null "http://127.0.0.1:$A_HTTP/ok$i")"
done
for i in 1 2; do
    expect_eq "denied $i" "|403" "$(pcurl -o /dev/null "http://127.0.0.1:$((A_HTTP == 65535 ? 1 : A_HTTP + 1))/no$i")"
done
log_has "no2" >/dev/null
expect_eq "metrics: 3 allowed" 3 "$(metric 'proviso_proxy_decisions_total{outcome="allowed",stage="forward"}')"
expect_eq "metrics: 2 denied" 2 "$(metric 'proviso_proxy_decisions_total{outcome="denied",stage="forward"}')"
expect_eq "metrics: 5 latency samples" 5 "$(metric 'proviso_proxy_decision_seconds_count')"
expect_eq "metrics: +Inf bucket" 5 "$(metric 'proviso_proxy_decision_seconds_bucket{le="+Inf"}')"
pins=$(metric proviso_proxy_pins)
if [ "${pins:-0}" -ge 1 ]; then pass; else fail "metrics: pins [$pins] >= 1 (curl is pinned)"; fi
expect_eq "metrics: no tunnel open" 0 "$(metric proviso_proxy_tunnels_open)"
expect_eq "metrics: not quarantined" 0 "$(metric proviso_proxy_policy_quarantined)"

# a destination that does not resolve: its own error and stage, not DENIED
out=$("$CURL" -s --max-time 15 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "http://nosuch.invalid/x")
expect_has "dns: 502" "|502" "$out"
expect_has "dns: own error" '"error":"dns_resolution_failed"' "$out"
expect_has "dns: detail" "DNS resolution failed for nosuch.invalid:80" "$out"
expect_log "dns: a note with its stage" "dns_resolution_failed nosuch.invalid:80: DNS resolution failed"
expect_log "dns: stage dns" "(stage dns, /usr/bin/curl("
expect_eq "dns: no DENIED line" 0 "$(grep -c 'DENIED.*nosuch.invalid' "$T/proxy.log")"
expect_eq "dns: not in denials.jsonl" 0 "$(cat "$T/data/denials.jsonl" 2>/dev/null | grep -c nosuch.invalid)"
expect_eq "metrics: 1 dns failure" 1 "$(metric proviso_proxy_dns_failures_total)"
expect_eq "metrics: decisions unchanged" 2 "$(metric 'proviso_proxy_decisions_total{outcome="denied",stage="forward"}')"

# an allowed destination whose connect fails: an upstream error
expect_eq "upstream down: 502" "|502" "$(pcurl -o /dev/null "http://127.0.0.1:$CLOSED/x")"
expect_eq "metrics: 1 upstream error" 1 "$(metric proviso_proxy_upstream_errors_total)"

# an open CONNECT tunnel is counted while it lives
"$RAW" -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
    printf "CONNECT 127.0.0.1:'"$A_HTTP"' HTTP/1.1\r\nHost: 127.0.0.1:'"$A_HTTP"'\r\n\r\n" >&3
    IFS= read -r -t 5 st <&3
    echo "$st" >'"$T"'/tunnel.status
    while [ ! -e '"$T"'/tunnel.done ]; do sleep 0.05; done' 2>/dev/null &
TUN=$!
wait_file "$T/tunnel.status"
expect_has "tunnel: 200" " 200 " "$(cat "$T/tunnel.status")"
expect_eq "metrics: 1 tunnel open" 1 "$(metric proviso_proxy_tunnels_open)"
touch "$T/tunnel.done"
wait "$TUN"
i=0
while [ "$(metric proviso_proxy_tunnels_open)" != 0 ] && [ $i -lt 100 ]; do
    sleep 0.05
    i=$((i + 1))
done
expect_eq "metrics: tunnel closed" 0 "$(metric proviso_proxy_tunnels_open)"

# quarantine: /healthz 503 with the reason, then healthy again
expect_eq "healthz ok" '{"status":"ok"}|200' \
    "$("$CURL" -s --max-time 3 -w '|%{http_code}' "http://127.0.0.1:$ADM/healthz")"
printf 'version: 1\nnetwork_policies: [\n' >"$T/policy.next.yaml"
reload_policy || fail "reload (invalid) not logged"
out=$("$CURL" -s --max-time 3 -w '|%{http_code}' "http://127.0.0.1:$ADM/healthz")
expect_has "healthz quarantined: 503" "|503" "$out"
expect_has "healthz quarantined: status" '"status":"quarantined"' "$out"
expect_has "healthz quarantined: reason" "fail-closed quarantine is active" "$out"
expect_eq "metrics: quarantined" 1 "$(metric proviso_proxy_policy_quarantined)"
bad=$(metric 'proviso_proxy_reloads_total{result="failed"}')
if [ "${bad:-0}" -ge 1 ]; then pass; else fail "metrics: failed reloads [$bad] >= 1"; fi
expect_eq "quarantined: denied" "|403" "$(pcurl -o /dev/null "http://127.0.0.1:$A_HTTP/q")"
policy "$T/policy.next.yaml"
reload_policy || fail "reload (valid) not logged"
expect_eq "healthz ok again" '{"status":"ok"}|200' \
    "$("$CURL" -s --max-time 3 -w '|%{http_code}' "http://127.0.0.1:$ADM/healthz")"
# SIGHUP and the file check may both see a change: count, do not guess
ok=$(metric 'proviso_proxy_reloads_total{result="ok"}')
bad=$(metric 'proviso_proxy_reloads_total{result="failed"}')
if [ "${ok:-0}" -ge 1 ]; then pass; else fail "metrics: good reloads [$ok] >= 1"; fi
expect_eq "metrics: quarantine cleared" 0 "$(metric proviso_proxy_policy_quarantined)"
expect_eq "metrics: generation = 1 + reloads" $((1 + ${ok:-0} + ${bad:-0})) \
    "$(metric proviso_proxy_policy_generation)"
expect_eq "metrics: unknown route" "|404" \
    "$("$CURL" -s --max-time 3 -o /dev/null -w '|%{http_code}' "http://127.0.0.1:$ADM/metricsx")"
stop_proxy

# the start-up self-check, with capabilities really dropped
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
    setpriv --inh-caps=-all --bounding-set=-all true 2>/dev/null; then
    rm -f "$T/px.port"
    setpriv --inh-caps=-all --bounding-set=-all -- "$PROXY_BIN" --policy "$T/policy.yaml" \
        --port 0 --admin-port 0 --port-file "$T/px.port" --data-dir "$T/data" \
        --log "$T/proxy.log" 2>"$T/selfcheck.err"
    rc=$?
    expect_eq "self-check: refuses without CAP_SYS_PTRACE" 2 "$rc"
    expect_has "self-check: says why" "CAP_SYS_PTRACE is not in the effective set" \
        "$(cat "$T/selfcheck.err")"
    expect_has "self-check: names the switch" "--unprivileged-identity" "$(cat "$T/selfcheck.err")"
    [ ! -e "$T/px.port" ] && pass || fail "self-check: the proxy must not have started"
    # --identity-scan bpf without the privilege to load the iterator: refused
    setpriv --inh-caps=-all --bounding-set=-all -- "$PROXY_BIN" --policy "$T/policy.yaml" \
        --port 0 --admin-port 0 --port-file "$T/px.port" --data-dir "$T/data" \
        --log "$T/proxy.log" --unprivileged-identity --identity-scan bpf 2>"$T/selfcheck3.err"
    expect_eq "--identity-scan bpf without privilege: exit 2" 2 "$?"
    expect_has "--identity-scan bpf without privilege: says why" \
        "--identity-scan bpf: the BPF task-file iterator cannot be used" "$(cat "$T/selfcheck3.err")"
    [ ! -e "$T/px.port" ] && pass || fail "--identity-scan bpf: the proxy must not have started"
    # with the explicit switch it runs, and says so
    setpriv --inh-caps=-all --bounding-set=-all -- "$PROXY_BIN" --policy "$T/policy.yaml" \
        --port 0 --admin-port 0 --port-file "$T/px.port" --data-dir "$T/data" \
        --log "$T/proxy.log" --unprivileged-identity 2>"$T/selfcheck2.err" &
    PX_PID=$!
    PIDS="$PIDS $PX_PID"
    if wait_file "$T/px.port"; then
        pass
        read -r PX ADM <"$T/px.port"
        expect_eq "unprivileged: healthz" '{"status":"ok"}' \
            "$("$CURL" -s --max-time 3 "http://127.0.0.1:$ADM/healthz")"
        expect_log "unprivileged: warned in the log" "proviso-proxy warning: --unprivileged-identity: CAP_SYS_PTRACE"
        expect_eq "unprivileged: warned once on stderr" 1 \
            "$(grep -c 'unprivileged-identity' "$T/selfcheck2.err")"
        stop_proxy
    else
        fail "--unprivileged-identity: the proxy did not start: $(cat "$T/selfcheck2.err")"
    fi
else
    echo "note: not root or no setpriv: self-check refusal not exercised"
fi
"$PROXY_BIN" --policy "$T/policy.yaml" --identity-scan sometimes 2>"$T/usage.err" </dev/null
expect_eq "--identity-scan: an unknown way is a usage error" 2 "$?"
expect_has "--identity-scan: the error names the choices" "must be auto, bpf or proc, not 'sometimes'" \
    "$(cat "$T/usage.err")"

finish
