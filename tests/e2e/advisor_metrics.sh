#!/bin/sh
# advisor_metrics.sh - the advisor's GET /metrics (httpd/httpd_metrics.c):
# admin only; requests counted by method, table route and exact status,
# never by raw URL; a latency histogram whose count matches; and the
# shared /healthz and /openapi.json of the service shell.
. "$(dirname "$0")/advisor_lib.sh"

POLICY='version: 1
network_policies: {}
'

start_advisor "$WORK/data" || exit 1

api GET /metrics "" -
eq "metrics without a token: 401" "$STATUS" 401
api GET /metrics "" "not-the-admin-token-at-all-0000000000000000000000000000000000000"
eq "metrics with a wrong token: 401" "$STATUS" 401
create_sandbox m1 "$POLICY"
eq "create sandbox: 201" "$STATUS" 201
api GET /metrics "" "$SB_TOKEN"
eq "metrics with a sandbox token: 403" "$STATUS" 403

api GET /healthz "" -
eq "healthz: 200" "$STATUS" 200
eq "healthz body" "$BODY" '{"status":"ok"}'
api GET /healthz "" -
api GET /v1/sandboxes/m1
eq "get sandbox: 200" "$STATUS" 200
api GET /v1/sandboxes/no-such-sandbox-xyz
eq "missing sandbox: 404" "$STATUS" 404
api GET /no/such/route/secret-in-url
eq "unknown route: 404" "$STATUS" 404
api GET /openapi.json
eq "openapi describes /metrics" "$(jf '.paths | has("/metrics")')" true

api GET /metrics
eq "metrics: 200" "$STATUS" 200
M=$BODY
line() { printf '%s\n' "$M" | grep -v '^#' | grep -F "$1" | head -n 1 | sed 's/.* //'; }
eq "healthz counted twice" \
    "$(line 'proviso_advisor_requests_total{method="GET",route="/healthz",status="200"}')" 2
eq "created sandbox counted" \
    "$(line 'proviso_advisor_requests_total{method="POST",route="/v1/sandboxes",status="201"}')" 1
eq "200 and 404 of one route apart" \
    "$(line 'proviso_advisor_requests_total{method="GET",route="/v1/sandboxes/*",status="404"}')" 1
eq "the sandbox token's 403 counted" \
    "$(line 'proviso_advisor_requests_total{method="GET",route="/metrics",status="403"}')" 1
eq "401s counted" \
    "$(line 'proviso_advisor_requests_total{method="GET",route="/metrics",status="401"}')" 2
eq "unknown route counted as unknown" \
    "$(line 'proviso_advisor_requests_total{method="",route="unknown",status="404"}')" 1
case "$M" in
*secret-in-url*) bad "the raw URL leaks into the metrics" ;;
*) ok "the raw URL stays out of the metrics" ;;
esac
eq "histogram count matches the requests" \
    "$(line 'proviso_advisor_request_duration_seconds_count{method="GET",route="/healthz"}')" 2
eq "+Inf bucket equals the count" \
    "$(line 'proviso_advisor_request_duration_seconds_bucket{method="GET",route="/healthz",le="+Inf"}')" 2
eq "no refusals" "$(line 'proviso_advisor_rejected_total ')" 0
has "TYPE lines" "$M" "# TYPE proviso_advisor_requests_total counter"
# Every sample line is NAME{LABELS} VALUE or NAME VALUE (Prometheus text 0.0.4).
badl=$(printf '%s\n' "$M" | grep -v '^#' | grep -Evc '^proviso_advisor_[a-z_]+(\{[^}]*\})? [0-9.]+$')
eq "every sample line is well formed" "$badl" 0

stop_advisor
eq "SIGTERM: exit 0" "$ADV_RC" 0
finish
