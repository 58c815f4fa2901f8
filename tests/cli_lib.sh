# SPDX-License-Identifier: Apache-2.0
# cli_lib.sh - sourced by the `proviso prove` tests (cli_prove.sh,
# cli_cred_store.sh): the built CLI in $pv, a temporary directory in $tmp
# (removed at exit), the checks ok/bad/has/hasnt/rc_is counting failures in
# $fails, and $tmp/base.yaml, the read-only GitHub policy both start from.
set -u
bld=${PV_BUILDDIR:-.}
pv="$bld/proviso"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }
# has FILE TEXT NAME: FILE contains the fixed string TEXT
has() { if grep -qF -- "$2" "$1"; then ok "$3"; else bad "$3"; sed 's/^/     | /' "$1"; fi; }
hasnt() { if grep -qF -- "$2" "$1"; then bad "$3"; sed 's/^/     | /' "$1"; else ok "$3"; fi; }
rc_is() { if [ "$1" -eq "$2" ]; then ok "$3"; else bad "$3 (exit $1, want $2)"; fi; }

cat >"$tmp/base.yaml" <<'Y'
version: 1
network_policies:
  gh:
    binaries:
      - path: /bin/sh
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow:
              method: GET
              path: /repos/**
Y
