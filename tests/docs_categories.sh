#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs_categories.sh - the finding categories of the one table
# (PROVER_CATEGORIES in prover/prover.h) and the rows of the findings table
# of docs/semantics.md#findings are the same set, in the same order: a
# category added to (or dropped from) the code without its definition fails
# here, and so does a definition left behind.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
code=$(sed -n '/^#define PROVER_CATEGORIES(X)/,/^$/s/.*X([A-Z0-9_]*, "\([a-z0-9_]*\)".*/\1/p' \
    "$src/prover/prover.h")
docs=$(sed -n '/^## What the prover reports {#findings}/,/^## /s/^| `\([a-z0-9_]*\)` |.*/\1/p' \
    "$src/docs/semantics.md")
fails=0
n=0
[ -n "$code" ] || { echo "FAIL: no PROVER_CATEGORIES rows in prover/prover.h"; exit 1; }
[ -n "$docs" ] || { echo "FAIL: no category rows under #findings in docs/semantics.md"; exit 1; }
for c in $code; do
    n=$((n + 1))
    if printf '%s\n' "$docs" | grep -qx "$c"; then
        echo "ok   $c is defined in docs/semantics.md#findings"
    else
        echo "FAIL $c (prover/prover.h) has no row in docs/semantics.md#findings"
        fails=$((fails + 1))
    fi
done
for d in $docs; do
    n=$((n + 1))
    if printf '%s\n' "$code" | grep -qx "$d"; then
        echo "ok   $d is a category of prover/prover.h"
    else
        echo "FAIL $d (docs/semantics.md#findings) is no category of prover/prover.h"
        fails=$((fails + 1))
    fi
done
n=$((n + 1))
if [ "$(printf '%s\n' $code)" = "$(printf '%s\n' $docs)" ]; then
    echo "ok   the docs list the categories in report order"
else
    echo "FAIL docs/semantics.md#findings lists the categories in another order than prover/prover.h"
    fails=$((fails + 1))
fi
echo "docs_categories.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ]
