#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# graphql_diff.sh - proviso's GraphQL reader against graphql-core
#
# Runs tests/graphql_diff.py (generated documents, valid and broken) with
# every python3 that can import graphql-core (Debian's python3-graphql-core
# 2.3.2 at /usr/bin/python3; graphql-core 3 where a python3 on PATH has it),
# each against tests/gql_driver. Skips (77) when none can.
set -eu
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${PV_BUILDDIR:-$src}
driver=$build/tests/gql_driver
[ -x "$driver" ] || { echo "graphql_diff: $driver not built"; exit 1; }
count=${GQL_DIFF_COUNT:-3000}

# allocation failure (PV_FAIL_ALLOC=N fails the Nth checked allocation):
# every failure point of a document with fragments, variables and values
# gives "out of memory", never a crash or another answer
doc='{"doc":"query Q($a: Int = 1) { ...F a: b(x: [1, {y: \"s\"}]) } fragment F on Q { ...G c } fragment G on Q { d }","op":"Q"}'
want='{"ok":true,"type":"query","name":"Q","fields":["b","c","d"]}'
got=$(printf '%s\n' "$doc" | "$driver")
[ "$got" = "$want" ] || { echo "graphql_diff: driver answered $got"; exit 1; }
n=1
while :; do
    got=$(printf '%s\n' "$doc" | PV_FAIL_ALLOC=$n "$driver") || { echo "graphql_diff: PV_FAIL_ALLOC=$n: exit $?"; exit 1; }
    [ "$got" = "$want" ] && break
    [ "$got" = '{"ok":false,"error":"out of memory"}' ] || { echo "graphql_diff: PV_FAIL_ALLOC=$n: $got"; exit 1; }
    n=$((n + 1))
    [ $n -lt 1000 ] || { echo "graphql_diff: no end to the allocations"; exit 1; }
done
echo "graphql_diff: allocation failure at each of $((n - 1)) points refused cleanly"
ran=0 seen=""
for py in /usr/bin/python3 python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    v=$("$py" -c 'import graphql; print(graphql.__version__)' 2>/dev/null) || continue
    case " $seen " in *" $v "*) continue ;; esac
    seen="$seen $v"
    "$py" "$src/tests/graphql_diff.py" "$driver" "$count"
    ran=$((ran + 1))
done
if [ "$ran" = 0 ]; then
    echo "graphql_diff: no python3 with graphql-core (apt-get install python3-graphql-core)"
    exit 77
fi
