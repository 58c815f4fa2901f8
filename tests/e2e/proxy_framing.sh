#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_framing.sh - differential framing test: random chunked bodies (sizes,
# extensions, trailers, odd whitespace, one malformation in about a third)
# through the proxy to an origin that frames like nginx; the requests the
# origin framed must be exactly the requests the proxy decided and accepted,
# in order, with the same body bytes, and no pipelined DELETE ever reaches
# it. Fixed seed in make check (PV_FRAMING_SEED / PV_FRAMING_N to vary).
. "$(dirname "$0")/proxy_lib.sh"

SEED=${PV_FRAMING_SEED:-20261123}
N=${PV_FRAMING_N:-200}
DRV=$BUILD/tests/e2e/proxy_framing
[ -x "$DRV" ] || { echo "SKIP: build tests/e2e/proxy_framing first"; exit 77; }
cp "$DRV" "$T/bin/framing"
SLOG=$T/strict.log
: >"$SLOG"
"$UPSTREAM_BIN" --port-file "$T/S.port" --strict-port-file "$T/strict.port" \
    --strict-log "$SLOG" 2>"$T/S.err" &
PIDS="$PIDS $!"
wait_file "$T/S.port" || { echo "upstream did not start"; exit 1; }
read -r SP _ <"$T/strict.port"

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  strict:
    endpoints:
      - host: 127.0.0.1
        port: $SP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: POST, path: /ok}
    binaries:
      - path: $T/bin/framing
EOF
start_proxy

out=$("$T/bin/framing" "$PX" "$SP" "$SEED" "$N" "$T/expected")
rc=$?
echo "$out" | tail -n 5
expect_eq "the proxy answered every case as its strict framing decided (seed $SEED)" "0" "$rc"
sleep 0.3
grep '^REQ' "$SLOG" >"$T/seen"
if cmp -s "$T/expected" "$T/seen"; then
    pass
else
    fail "the origin framed other requests than the proxy decided: $(diff "$T/expected" "$T/seen" | head -5)"
fi
expect_eq "no pipelined DELETE reached the origin" "0" "$(grep -c smuggled "$SLOG")"
expect_eq "the origin never failed to frame what it got" "0" "$(grep -c '^BAD' "$SLOG")"
nok=$(wc -l <"$T/expected")
nbad=$(grep -c 'malformed request body' "$T/proxy.log")
echo "framing: $nok bodies accepted and forwarded, $nbad refused (seed $SEED)"
[ "$nok" -gt $((N / 3)) ] && [ "$nbad" -gt $((N / 10)) ] && pass ||
    fail "the generator should produce both kinds ($nok accepted, $nbad refused)"
finish
