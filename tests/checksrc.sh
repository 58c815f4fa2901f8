#!/bin/sh
# checksrc.sh - banned functions, raw allocations and C++ comments in project sources.
set -u
top=${1:-${PV_SRCDIR:-.}}
cd "$top" || exit 1
# every source folder of the build (the include lines of Makefile.am)
folders=$(sed -n 's/^include \$(srcdir)\/\([a-z0-9_-]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "checksrc: no folders found in Makefile.am"; exit 1; }
files=$(find $folders -name '*.[ch]' -not -path '*/node_modules/*' 2>/dev/null)
[ -n "$files" ] || { echo "checksrc: no source files under: $folders"; exit 1; }
bad=0
# grep: 0 a match (a finding), 1 none, anything else an error (never "clean")
grep -nE '\b(strcpy|strcat|sprintf|strtok|atoi|sscanf|strtol|strncpy|gets)\s*\(' $files
case $? in
0) echo "checksrc: banned function"; bad=1 ;;
1) ;;
*) echo "checksrc: grep failed"; exit 1 ;;
esac
# Raw allocations: every allocation of the project's sources goes through
# pv_malloc, pv_calloc, pv_realloc, pv_strdup or pv_strndup (common/pv.h),
# which test builds can fail on the Nth call (PV_FAIL_ALLOC=N,
# tests/fail_alloc.sh); a raw call would escape the failure injection.
# Only the wrappers themselves call the C library. Libraries' own
# allocators (OPENSSL_malloc, sqlite3_malloc, ...) are not ours to wrap.
# Test sources (tests/) may allocate as they like.
alloc_ok="common/pv_error.c"
src=
for f in $files; do
    case "$f" in tests/*) continue ;; esac
    case " $alloc_ok " in *" $f "*) continue ;; esac
    src="$src $f"
done
if [ -n "$src" ]; then
    hits=$(grep -nE '(^|[^_A-Za-z0-9.>])(malloc|calloc|realloc|reallocarray|strdup|strndup)[[:space:]]*\(' $src)
    case $? in
    0 | 1) ;;
    *) echo "checksrc: grep failed"; exit 1 ;;
    esac
    # comment lines (" * ... malloc(" in prose) are not calls
    hits=$(printf '%s\n' "$hits" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*/?\*')
    if [ -n "$hits" ]; then
        printf '%s\n' "$hits"
        echo "checksrc: raw allocation: use pv_malloc, pv_calloc, pv_realloc, pv_strdup or pv_strndup (common/pv.h), which PV_FAIL_ALLOC can fail"
        bad=1
    fi
fi
grep -nE '^\s*//' $files
case $? in
0) echo "checksrc: use /* */ comments"; bad=1 ;;
1) ;;
*) echo "checksrc: grep failed"; exit 1 ;;
esac
exit $bad
