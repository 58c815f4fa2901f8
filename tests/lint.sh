#!/bin/sh
# lint.sh [SRCDIR [BUILDDIR]] - `make lint`: the static checks .ci/run runs.
#
#  1. checksrc.sh: banned functions and // comments; check-longfn.sh: no
#     function over 100 lines outside tests without a "/* long: WHY */"
#     comment right above it;
#     check-deps.sh: each folder includes and each program links only
#     the system dependencies tests/deps.allowed grants it;
#     check-advisor-calls.sh: no call cycle in advisor/, and no call from
#     a lower room of it to a higher one (nm on the built objects);
#  2. cppcheck (warning, portability, performance) over every source folder
#     of the build; a false positive is suppressed inline, on its line, with
#     the reason (`cppcheck-suppress ID ; why`);
#  3. clang-format --dry-run --Werror against .clang-format, for every .c
#     and .h file.
#
# The folders come from Makefile.am's include lines, as check-layering.sh
# and checksrc.sh take them, so a new folder is linted without editing this.
set -u
top=$(cd "${1:-${PV_SRCDIR:-.}}" && pwd) || exit 1
bld=$(cd "${2:-${PV_BUILDDIR:-.}}" && pwd) || exit 1
cd "$top" || exit 1
status=0

for tool in cppcheck clang-format; do
    command -v "$tool" >/dev/null 2>&1 || { echo "lint: $tool is not installed (./bootstrap installs it)"; exit 1; }
done

echo "lint: checksrc"
sh "$top/tests/checksrc.sh" "$top" || status=1

echo "lint: long functions"
sh "$top/tests/check-longfn.sh" "$top" || status=1

echo "lint: system headers and libraries (tests/deps.allowed)"
PV_BUILDDIR="$bld" sh "$top/tests/check-deps.sh" "$top" || status=1

echo "lint: the advisor's rooms: no call cycle, no call up (built objects)"
PV_BUILDDIR="$bld" sh "$top/tests/check-advisor-calls.sh"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1

folders=$(sed -n 's/^include \$(srcdir)\/\([a-z0-9_-]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "lint: no folders found in Makefile.am"; exit 1; }
src_folders=
for f in $folders; do
    case "$f" in tests | contrib) ;; *) src_folders="$src_folders $f" ;; esac
done

# Generated sources (BUILT_SOURCES: embedded data) are not linted; an
# in-tree build puts them next to the hand-written ones.
built=$(echo $(sed -n 's/^BUILT_SOURCES += //p' Makefile.am */local.mk))
ignore=
for f in $built; do
    ignore="$ignore -i $f"
done

echo "lint: cppcheck$src_folders"
# config.h comes from the build directory.
if ! cppcheck -q --std=c11 --enable=warning,portability,performance --inline-suppr \
    --error-exitcode=1 -D__GNUC__ -I "$top" -I "$bld" \
    --template='{file}:{line}:{column}: {severity}: {message} [{id}]' $ignore $src_folders; then
    echo "lint: cppcheck found the problems above"
    status=1
fi

echo "lint: clang-format"
files=
for f in $(find $folders -name '*.[ch]' -not -path '*/node_modules/*' | sort); do
    case " $built " in *" $f "*) ;; *) files="$files $f" ;; esac
done
if ! clang-format --dry-run --Werror $files; then
    echo "lint: run 'clang-format -i' on the files above"
    status=1
fi

[ $status -eq 0 ] && echo "lint: ok"
exit $status
