#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-advisor-calls.sh - the advisor's rooms and their one-way doors,
# from the built objects (docs/architecture.md#advisor): which file's
# functions each file calls (nm: a file's undefined advisor_* and store_*
# symbols, each attributed to the object that defines it), as
# check-model-layers.sh reads model/.
#
#  - no file of advisor/ is on a call cycle (a circle of calls between
#    files, however long);
#  - no call goes up: each room (a folder of advisor/) calls only its own
#    files and the rooms below it, in the order of 'rooms' below (the
#    generated advisor_data.c, directly in advisor/, calls nothing);
#  - only the HTTP face answers HTTP: no file below advisor/http/ calls
#    httpd_reply_* (the domain calls return a result, a view or a
#    decision, and the routes map it to a status in one place).
# Skips (77) when the objects are not built.
set -u
build=${PV_BUILDDIR:-.}
dir=$build/advisor
rooms=". store core life inputs http proc" # bottom first
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm is not installed"; exit 77; }
objs=$(find "$dir" -name 'libadvisor_la-*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "SKIP: advisor/ is not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
    rel=${o#"$dir"/}
    sub=${rel%/*}
    [ "$sub" = "$rel" ] && sub=.
    f=${rel##*/libadvisor_la-}
    f=${f%.o}
    [ "$sub" = . ] || f=$sub/$f
    nm --defined-only -g "$o" | awk -v f="$f" '$3 ~ /^(advisor_|store_)/ { print "D", $3, f }'
    nm -u "$o" | awk -v f="$f" '$2 ~ /^(advisor_|store_|httpd_reply)/ { print "U", $2, f }'
done >"$tmp/syms"
# edges "caller callee", one per pair of files
awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[NR] = $2 " " $3 }
     END { for (i in use) { split(use[i], a, " "); d = def[a[1]];
           if (d != "" && d != a[2]) print a[2], d } }' "$tmp/syms" | sort -u >"$tmp/edges"
files=$(awk '$1 == "D" { print $3 }' "$tmp/syms" | sort -u)
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
room_of() {
    case "$1" in */*) echo "${1%%/*}" ;; *) echo . ;; esac
}
rank_of() {
    i=0
    for r in $rooms; do
        [ "$r" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
fails=0
n=0
for f in $files; do
    n=$((n + 1))
    if reach "$f" | grep -qx "$f"; then
        echo "FAIL advisor/$f.c is on a call cycle: $(reach "$f" | while read -r g; do
            reach "$g" | grep -qx "$f" && printf '%s ' "$g"; done)"
        fails=$((fails + 1))
    fi
done
while read -r from to; do
    n=$((n + 1))
    rf=$(rank_of "$(room_of "$from")")
    rt=$(rank_of "$(room_of "$to")")
    if [ "$rf" -lt 0 ]; then
        echo "FAIL advisor/$(room_of "$from")/ is not a room of tests/check-advisor-calls.sh"
        fails=$((fails + 1))
    elif [ "$rt" -gt "$rf" ]; then
        echo "FAIL advisor/$from.c calls up into advisor/$to.c"
        fails=$((fails + 1))
    fi
done <"$tmp/edges"
for f in $files; do
    case "$(room_of "$f")" in http | proc) continue ;; esac
    n=$((n + 1))
    answers=$(awk -v f="$f" '$1 == "U" && $3 == f && $2 ~ /^httpd_reply/ { printf "%s ", $2 }' \
        "$tmp/syms")
    if [ -n "$answers" ]; then
        echo "FAIL advisor/$f.c answers HTTP itself: $answers(return a result; the routes reply)"
        fails=$((fails + 1))
    fi
done
echo "check-advisor-calls.sh: $(echo "$files" | wc -l) files, $n checks, $fails failures"
[ "$fails" -eq 0 ]
