#!/bin/sh
# check-deps.sh [SRCDIR] - each folder includes, and each program links,
# only the system dependencies tests/deps.allowed grants it.
#
# Headers: every "#include <...>" of every .c and .h file of the folders
# Makefile.am includes (tests/ and contrib/ excepted) must belong to a group
# the folder's row names (a subfolder with its own row, e.g. proxy/advisor,
# is held to that row instead); a folder without a row fails, so a new folder
# cannot slip past. Libraries: every DT_NEEDED entry of each built program
# (PV_BUILDDIR, when it is there) must belong to a group of one of the
# folders the program is built from. Each failure names the file, the
# header or library, its group and what the folder may use.
set -u
top=${1:-${PV_SRCDIR:-.}}
build=${PV_BUILDDIR:-$top}
table=${PV_DEPS_TABLE:-$top/tests/deps.allowed}
cd "$top" || exit 1
[ -r "$table" ] || { echo "check-deps: cannot read $table"; exit 1; }
folders=$(sed -n 's/^include \$(srcdir)\/\([a-z0-9_-]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "check-deps: no folders found in Makefile.am"; exit 1; }
# A subfolder with a row of its own ("folder proxy/advisor ...") is held to
# that row, and its parent's files to the parent's row without it.
# A subfolder that is not there (a partial tree) has nothing to check.
subs=$(awk '$1 == "folder" && $2 ~ /\// { print $2 }' "$table" | while read -r s; do
    [ -d "$s" ] && echo "$s"
done)
fail=0

# group_of KIND NAME: the group whose headers (KIND=h) or libraries (KIND=l)
# match NAME, or nothing.
group_of() {
    awk -v kind="$1" -v name="$2" '
    $1 == "group" {
        side = "h"
        for (i = 3; i <= NF; i++) {
            if ($i == ":") { side = "l"; continue }
            if (side != kind) continue
            pat = $i
            gsub(/\./, "\\.", pat)
            gsub(/\*/, ".*", pat)
            if (name ~ ("^" pat "$")) { print $2; exit }
        }
    }' "$table"
}

# row KIND NAME: the words after "KIND NAME" (folder groups, binary folders);
# "?" when there is no such row.
row() {
    awk -v kind="$1" -v name="$2" '
    $1 == kind && $2 == name { found = 1; for (i = 3; i <= NF; i++) printf "%s ", $i }
    END { if (!found) print "?" }' "$table"
}

for dir in $folders $subs; do
    case "$dir" in tests | contrib) continue ;; esac
    allowed=$(row folder "$dir")
    if [ "$allowed" = "?" ]; then
        echo "$dir/: no 'folder $dir' row in tests/deps.allowed"
        fail=1
        continue
    fi
    prune=
    for s in $subs; do
        case "$s" in "$dir"/*) prune="$prune -path $s -prune -o" ;; esac
    done
    # shellcheck disable=SC2086 # $prune is a list of find operands
    for f in $(find "$dir" $prune -name '*.[ch]' -print | sort); do
        for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f" | sort -u); do
            g=$(group_of h "$h")
            if [ -z "$g" ]; then
                echo "$f: includes <$h>, which is in no group of tests/deps.allowed"
                fail=1
                continue
            fi
            case " $allowed " in
            *" $g "*) ;;
            *)
                echo "$f: includes <$h> ($g), which $dir/ may not use (allowed: ${allowed% }; tests/deps.allowed)"
                fail=1
                ;;
            esac
        done
    done
done

for bin in $(awk '$1 == "binary" { print $2 }' "$table"); do
    [ -f "$build/$bin" ] || continue
    command -v readelf >/dev/null 2>&1 || { echo "check-deps: readelf is not installed"; exit 1; }
    groups=
    for dir in $(row binary "$bin"); do
        groups="$groups $(row folder "$dir")"
    done
    for lib in $(readelf -d "$build/$bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
        g=$(group_of l "$lib")
        if [ -z "$g" ]; then
            echo "$bin: links $lib, which is in no group of tests/deps.allowed"
            fail=1
            continue
        fi
        case " $groups " in
        *" $g "*) ;;
        *)
            echo "$bin: links $lib ($g), which none of its folders ($(echo $(row binary "$bin"))) may use (tests/deps.allowed)"
            fail=1
            ;;
        esac
    done
done
exit $fail
