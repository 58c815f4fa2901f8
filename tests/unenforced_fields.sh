#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# unenforced_fields.sh - make check: every row of the table in
# docs/reference-compat.md#unenforced (the schema fields proviso accepts and
# does not enforce) does what the row says, checked on the file its last
# column names:
#   refused  - a corpus/invalid case, which must pass (its exact located
#              message is in the case);
#   warned   - a policy that must load (exit 0) with a located `not-enforced`
#              warning naming the field;
#   enforced - a policy that must load without any warning (--strict) and
#              hold the field.
# The rows come from the doc, so a row added without a file, or with a
# file that does not show what it says, fails here.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
bld=${PV_BUILDDIR:-.}
pv="$bld/proviso"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); printf 'ok   %s\n' "$1"; }
bad() { n=$((n + 1)); printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

sed -n '/^## .*{#unenforced}/,/^## /p' "$src/docs/reference-compat.md" |
    grep '^| `' >"$tmp/rows"
[ -s "$tmp/rows" ] || { echo "FAIL: no table under #unenforced in docs/reference-compat.md"; exit 1; }

while IFS= read -r row; do
    # | FIELD ... | VERDICT: why | FILE(S) |
    field=$(printf '%s\n' "$row" | cut -d'|' -f2 | grep -o '`[^`]*`' | head -1 | tr -d '`')
    name=${field##*.}
    name=${name%%\[*}
    verdict=$(printf '%s\n' "$row" | cut -d'|' -f3 | sed 's/^ *//' | cut -d' ' -f1 | tr -d ':')
    files=$(printf '%s\n' "$row" | awk -F'|' '{print $(NF-1)}' | grep -o '`[^`]*`' | tr -d '`')
    if [ -z "$files" ]; then
        bad "$field: the row names no file"
        continue
    fi
    for f in $files; do
        if [ ! -f "$src/$f" ]; then
            bad "$field: $f does not exist"
            continue
        fi
        if ! grep -q "$name" "$src/$f"; then
            bad "$field: $f does not hold '$name'"
            continue
        fi
        case "$verdict" in
        refused)
            if grep -q '^  verdict: invalid$' "$src/$f" &&
                "$pv" corpus run "$src/$f" >"$tmp/out" 2>&1; then
                ok "$field: refused ($f)"
            else
                bad "$field: $f is not a passing invalid case"
                sed 's/^/     | /' "$tmp/out"
            fi
            ;;
        warned)
            "$pv" validate "$src/$f" >"$tmp/out" 2>&1
            rc=$?
            if [ $rc -eq 0 ] && grep ':[0-9]*:[0-9]*: warning: ' "$tmp/out" |
                grep '\[not-enforced\]$' | grep -q "$name"; then
                ok "$field: warned ($f)"
            else
                bad "$field: no located not-enforced warning naming '$name' (exit $rc)"
                sed 's/^/     | /' "$tmp/out"
            fi
            ;;
        enforced)
            "$pv" validate --strict "$src/$f" >"$tmp/out" 2>&1
            rc=$?
            if [ $rc -eq 0 ] && ! grep -q 'warning:' "$tmp/out"; then
                ok "$field: loads without a warning ($f)"
            else
                bad "$field: $f does not load cleanly (exit $rc)"
                sed 's/^/     | /' "$tmp/out"
            fi
            ;;
        *)
            bad "$field: the row says '$verdict', not refused, warned or enforced"
            ;;
        esac
    done
done <"$tmp/rows"

echo "unenforced_fields.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ] && [ "$n" -gt 0 ]
