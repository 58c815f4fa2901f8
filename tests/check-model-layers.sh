#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-model-layers.sh - the layering inside model/, from the built
# objects: which file's functions each file calls (nm: a file's undefined
# model_* symbols, each attributed to the object that defines it).
#
# Stated layering (docs/architecture.md#model-layers):
#  - the base, model_diag.c (diagnostics) and model_policy.c (the types'
#    free, clear and accessors), calls nothing that reaches the loader
#    (model_load.c), and no base file is on a call cycle;
#  - the loader, model_load.c, is on no call cycle: the readers, the schema
#    walker, the validator and the compiler it coordinates never call it.
# Skips (77) when the objects are not built.
set -u
build=${PV_BUILDDIR:-.}
dir=$build/model
base="model_diag model_policy"
top="model_load"
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm is not installed"; exit 77; }
ls "$dir"/libmodel_la-model_load.o >/dev/null 2>&1 || { echo "SKIP: model/ is not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$dir"/libmodel_la-*.o; do
    f=${o##*/libmodel_la-}
    f=${f%.o}
    nm --defined-only -g "$o" | awk -v f="$f" '$3 ~ /^model_/ { print "D", $3, f }'
    nm -u "$o" | awk -v f="$f" '$2 ~ /^model_/ { print "U", $2, f }'
done >"$tmp/syms"
# edges "caller callee", one per pair of files
awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[NR] = $2 " " $3 }
     END { for (i in use) { split(use[i], a, " "); d = def[a[1]];
           if (d != "" && d != a[2]) print a[2], d } }' "$tmp/syms" | sort -u >"$tmp/edges"
# reach F: every file F's calls reach, F excluded unless on a cycle
reach() {
    awk -v start="$1" '{ adj[$1] = adj[$1] " " $2 }
    END {
        n = split(adj[start], q, " "); head = 1
        while (head <= n) {
            x = q[head++]
            if (x in seen) continue
            seen[x] = 1; print x
            m = split(adj[x], nx, " ")
            for (j = 1; j <= m; j++) q[++n] = nx[j]
        }
    }' "$tmp/edges"
}
fails=0
n=0
for f in $base $top; do
    n=$((n + 1))
    if reach "$f" | grep -qx "$f"; then
        echo "FAIL $f.c is on a call cycle within model/"
        fails=$((fails + 1))
    else
        echo "ok   $f.c is on no call cycle"
    fi
done
for f in $base; do
    n=$((n + 1))
    if reach "$f" | grep -qx "$top"; then
        echo "FAIL $f.c (the base) reaches $top.c"
        fails=$((fails + 1))
    else
        echo "ok   $f.c (the base) does not reach $top.c"
    fi
done
echo "check-model-layers.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ]
