#!/bin/sh
# checksrc.sh - banned functions and C++ comments in project sources.
set -u
top=${1:-${PV_SRCDIR:-.}}
cd "$top" || exit 1
# every source folder of the build (the include lines of Makefile.am)
folders=$(sed -n 's/^include \$(srcdir)\/\([a-z0-9_-]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "checksrc: no folders found in Makefile.am"; exit 1; }
files=$(find $folders -name '*.[ch]' 2>/dev/null)
[ -n "$files" ] || { echo "checksrc: no source files under: $folders"; exit 1; }
bad=0
# grep: 0 a match (a finding), 1 none, anything else an error (never "clean")
grep -nE '\b(strcpy|strcat|sprintf|strtok|atoi|sscanf|strtol|strncpy|gets)\s*\(' $files
case $? in
0) echo "checksrc: banned function"; bad=1 ;;
1) ;;
*) echo "checksrc: grep failed"; exit 1 ;;
esac
grep -nE '^\s*//' $files
case $? in
0) echo "checksrc: use /* */ comments"; bad=1 ;;
1) ;;
*) echo "checksrc: grep failed"; exit 1 ;;
esac
exit $bad
