#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs_eval_options.sh - every option of `proviso eval --help` is named in
# docs/cli.md#eval: an option added to cli/cmd_eval.c and not documented
# fails here.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
pv=${PV_BUILDDIR:-.}/proviso
section=$(sed -n '/^## proviso eval: one request {#eval}/,/^## /p' "$src/docs/cli.md")
[ -n "$section" ] || { echo "FAIL: no #eval section in docs/cli.md"; exit 1; }
opts=$("$pv" eval --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u | grep -v -x -- '--help')
[ -n "$opts" ] || { echo "FAIL: proviso eval --help names no option"; exit 1; }
fails=0
for o in $opts; do
    if printf '%s\n' "$section" | grep -qE -- "(^|[^a-z-])$o([^a-z-]|\$)"; then
        echo "ok   $o is in docs/cli.md#eval"
    else
        echo "FAIL $o (proviso eval --help) is not in docs/cli.md#eval"
        fails=$((fails + 1))
    fi
done
[ "$fails" -eq 0 ]
