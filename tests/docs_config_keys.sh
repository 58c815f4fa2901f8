#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs_config_keys.sh - every key proviso-advisor's --config accepts (the
# config_keys[] table of advisor/proc/advisor_main.c) is named in
# docs/operations.md#advisor, so an operator finds it where the others are.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
keys=$(sed -n '/^} config_keys\[\] = {/,/^};/s/^ *{"\([a-z_]*\)".*/\1/p' "$src/advisor/proc/advisor_main.c")
[ -n "$keys" ] || { echo "FAIL: no config_keys[] in advisor/proc/advisor_main.c"; exit 1; }
fails=0
n=0
for k in $keys; do
    n=$((n + 1))
    if grep -qF "\`$k\`" "$src/docs/operations.md"; then
        echo "ok   $k"
    else
        echo "FAIL $k is not in docs/operations.md"
        fails=$((fails + 1))
    fi
done
echo "docs_config_keys.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ]
