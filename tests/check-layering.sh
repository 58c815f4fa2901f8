#!/bin/sh
# check-layering.sh - only <folder>/<folder>.h may be included across folders,
# and the proxy never includes the prover or Z3.
set -u
top=${1:-${PV_SRCDIR:-.}}
cd "$top" || exit 1
fail=0
for dir in model prover proxy advisor cli tests common; do
    [ -d "$dir" ] || continue
    for f in $(find "$dir" -name '*.[ch]'); do
        grep -o '#include "[a-z]*/[a-z_0-9]*\.h"' "$f" | sed 's/#include "//; s/"$//' |
        while read -r inc; do
            folder=${inc%%/*}
            base=${inc#*/}
            [ "$folder" = "$dir" ] && continue
            [ "$folder" = common ] && continue
            [ "$dir" = tests ] && continue
            if [ "$base" != "$folder.h" ]; then
                echo "$f: includes internal header $inc"
                echo x >> /tmp/pv-layering.$$
            fi
        done
    done
done
if grep -rl 'z3.h\|prover/prover.h' proxy 2>/dev/null; then
    echo "proxy/ must not include Z3 or the prover"
    fail=1
fi
if [ -e /tmp/pv-layering.$$ ]; then rm -f /tmp/pv-layering.$$; fail=1; fi
exit $fail
