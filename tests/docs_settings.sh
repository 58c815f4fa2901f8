#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs_settings.sh - every key of the settings table (PV_SETTINGS in
# common/pv_settings.h) is described in docs/advisor.md#settings and named
# in the man page of proviso(1), and the docs' settings table names no key
# the code does not have: a setting added, renamed or dropped on one side
# only fails here.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
code=$(sed -n '/^#define PV_SETTINGS(X)/,/^$/s/.*X([A-Z0-9_]*, "\([a-z0-9_]*\)".*/\1/p' \
    "$src/common/pv_settings.h")
section=$(sed -n '/^## Settings {#settings}/,/^## /p' "$src/docs/advisor.md")
docs=$(printf '%s\n' "$section" | grep '^| `' | grep -o '`[a-z0-9_]*`' | tr -d '`' | sort -u)
fails=0
n=0
[ -n "$code" ] || { echo "FAIL: no PV_SETTINGS rows in common/pv_settings.h"; exit 1; }
[ -n "$docs" ] || { echo "FAIL: no settings table under #settings in docs/advisor.md"; exit 1; }
for k in $code; do
    n=$((n + 1))
    if printf '%s\n' "$docs" | grep -qx "$k"; then
        echo "ok   $k is in docs/advisor.md#settings"
    else
        echo "FAIL $k (common/pv_settings.h) is not in the table of docs/advisor.md#settings"
        fails=$((fails + 1))
    fi
    n=$((n + 1))
    if grep -q "$k" "$src/man/proviso.1.in"; then
        echo "ok   $k is in man/proviso.1.in"
    else
        echo "FAIL $k (common/pv_settings.h) is not in man/proviso.1.in"
        fails=$((fails + 1))
    fi
done
# The table's first column names keys; the other columns may quote values.
for d in $(printf '%s\n' "$section" | sed -n 's/^| \(`[^|]*\) |.*/\1/p' | grep -o '`[a-z0-9_]*`' | tr -d '`'); do
    n=$((n + 1))
    if printf '%s\n' "$code" | grep -qx "$d"; then
        echo "ok   $d is a key of common/pv_settings.h"
    else
        echo "FAIL $d (docs/advisor.md#settings) is no key of common/pv_settings.h"
        fails=$((fails + 1))
    fi
done
echo "docs_settings.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ]
