#!/bin/sh
# checksrc.sh - banned functions and C++ comments in project sources.
set -u
top=${1:-${PV_SRCDIR:-.}}
cd "$top" || exit 1
# every source folder of the build (the include lines of Makefile.am)
folders=$(sed -n 's/^include \$(srcdir)\/\([a-z]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "checksrc: no folders found in Makefile.am"; exit 1; }
files=$(find $folders -name '*.[ch]' 2>/dev/null)
bad=0
if grep -nE '\b(strcpy|strcat|sprintf|strtok|atoi|sscanf|strtol|strncpy|gets)\s*\(' $files; then
    echo "checksrc: banned function"; bad=1
fi
if grep -nE '^\s*//' $files; then
    echo "checksrc: use /* */ comments"; bad=1
fi
exit $bad
