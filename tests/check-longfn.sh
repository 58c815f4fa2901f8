#!/bin/sh
# check-longfn.sh [SRCDIR] - no function over 100 lines outside tests,
# unless a comment says why, and no source file over 1,200 lines
# (PV_MAX_FILE_LINES) unless its first 40 lines hold a "long file: WHY"
# comment.
#
# A function is the text from the first line of its signature to its
# closing brace; clang-format (.clang-format) puts a function body's braces
# alone in column 0, and nothing else, so brace counting needs no parser:
# a line "{" opens a body, the next line "}" closes it, and the signature
# is the run of non-blank, non-comment lines above the "{". A function
# longer than the limit (PV_MAX_FN_LINES, default 100) fails unless the
# comment block right above its signature holds a line starting
# "/* long: " followed by the reason, e.g.
#
#     /* long: one switch over every setting; splitting it hides the table */
#     static pv_result settings_apply(...)
#
# Folders come from Makefile.am's include lines (as in checksrc.sh);
# tests/ and contrib/ are skipped, and so are generated sources
# (BUILT_SOURCES). With -l it lists every function over the limit, exempt
# or not, with its length, longest first.
set -u
list=0
if [ "${1:-}" = "-l" ]; then
    list=1
    shift
fi
top=${1:-${PV_SRCDIR:-.}}
max=${PV_MAX_FN_LINES:-100}
cd "$top" || exit 1
folders=$(sed -n 's/^include \$(srcdir)\/\([a-z0-9_-]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "check-longfn: no folders found in Makefile.am"; exit 1; }
built=$(echo $(sed -n 's/^BUILT_SOURCES += //p' Makefile.am */local.mk))
files=
for d in $folders; do
    case "$d" in tests | contrib) continue ;; esac
    for f in $(find "$d" -name '*.c' -not -path '*/node_modules/*' | sort); do
        case " $built " in *" $f "*) ;; *) files="$files $f" ;; esac
    done
done
[ -n "$files" ] || { echo "check-longfn: no source files"; exit 1; }

# One line per function over the limit: LENGTH FILE:LINE NAME EXEMPT(0/1)
found=$(awk -v max="$max" '
function reset_sig() { sig = 0; exempt_seen = 0 }
FNR == 1 { depth = 0; reset_sig(); incomment = 0; cblock = 0; cexempt = 0 }
{
    line = $0
    if (depth == 0) {
        if (line == "{") {
            depth = 1
            start = sig ? sigline : FNR
            name = signame
            exempt = sigexempt
            next
        }
        if (line ~ /^[ \t]*$/) { reset_sig(); cblock = 0; cexempt = 0; next }
        if (incomment || line ~ /^[ \t]*\/\*/) {
            if (!incomment) { if (!cblock) { cexempt = 0 } cblock = 1 }
            if (line ~ /^[ \t]*\/\* long: [^*[:space:]]/) { cexempt = 1 }
            incomment = (line !~ /\*\//)
            reset_sig()
            next
        }
        if (line ~ /^#/) { reset_sig(); cblock = 0; cexempt = 0; next }
        if (line ~ /;[ \t]*$/) {
            # the end of a declaration; a prototype passes its comment on
            # to the definition right below it
            if (!sig) { sigtext = ""; sigexempt = cblock && cexempt }
            sigtext = sigtext " " line
            keep = sigexempt && sigtext ~ /\(/ && sigtext !~ /=/
            reset_sig()
            cblock = keep
            cexempt = keep
            next
        }
        if (!sig) {
            sig = 1
            sigline = FNR
            sigexempt = cblock && cexempt
            signame = "?"
            sigtext = ""
            cblock = 0
            cexempt = 0
        }
        sigtext = sigtext " " line
        if (signame == "?" && match(line, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
            signame = substr(line, RSTART, RLENGTH)
            sub(/[ \t]*\($/, "", signame)
        }
        next
    }
    if (line == "}") {
        depth = 0
        len = FNR - start + 1
        if (len > max) {
            printf "%d %s:%d %s %d\n", len, FILENAME, start, name, exempt
        }
        reset_sig()
        cblock = 0
        cexempt = 0
    }
}' $files)

if [ $list -eq 1 ]; then
    [ -n "$found" ] && echo "$found" | sort -rn | awk '{ printf "%5d %s %s%s\n", $1, $2, $3, $4 ? " (long: exempt)" : "" }'
    exit 0
fi
maxf=${PV_MAX_FILE_LINES:-1200}
bigfiles=0
for f in $files $(for d in $folders; do
    case "$d" in tests | contrib) continue ;; esac
    find "$d" -name '*.h' -not -path '*/node_modules/*' | sort
done); do
    n=$(wc -l <"$f")
    if [ "$n" -gt "$maxf" ] && ! head -n 40 "$f" | grep -q 'long file: '; then
        echo "$f: $n lines (over $maxf): split it, or say why in a \"long file: WHY\" comment near its top"
        bigfiles=1
    fi
done
bad=$(echo "$found" | awk '$4 == 0 && NF' | sort -rn)
[ $bigfiles -eq 0 ] || [ -n "$bad" ] || exit 1
if [ -n "$bad" ]; then
    echo "$bad" | awk -v max="$max" '{ printf "%s: %s() is %d lines (over %d): split it, or say why in a \"/* long: WHY */\" comment right above it\n", $2, $3, $1, max }'
    exit 1
fi
exit 0
