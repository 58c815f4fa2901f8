#!/bin/sh
# deps_guard.sh - tests/check-deps.sh refuses what tests/deps.allowed does
# not grant, with a message that names the file, the header or library and
# the rule, and accepts the project as it is.
#
# Source trees are built in a temporary directory with the real table; the
# link check runs on copies of the built programs under other names (the
# prover's binary posing as the proxy links Z3, which the proxy may not).
set -u
top=$(cd "${PV_SRCDIR:-$(dirname "$0")/..}" && pwd)
build=$(cd "${PV_BUILDDIR:-$top}" && pwd)
guard="$top/tests/check-deps.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/deps.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
fail=0

tree() {
    rm -rf "$tmp/t" "$tmp/b"
    mkdir -p "$tmp/t/tests" "$tmp/b"
    cp "$top/tests/deps.allowed" "$tmp/t/tests/"
    : >"$tmp/t/Makefile.am"
    for d in "$@" tests; do
        mkdir -p "$tmp/t/$d"
        echo "include \$(srcdir)/$d/local.mk" >>"$tmp/t/Makefile.am"
    done
}

# expect NAME WANT_RC [GREP]
expect() {
    n=$((n + 1))
    out=$(PV_BUILDDIR="$tmp/b" PV_DEPS_TABLE= sh "$guard" "$tmp/t" 2>&1)
    rc=$?
    if [ "$rc" -ne "$2" ]; then
        echo "FAIL $1: exit $rc, want $2: $out"
        fail=$((fail + 1))
        return
    fi
    if [ -n "${3:-}" ] && ! printf '%s\n' "$out" | grep -qF -- "$3"; then
        echo "FAIL $1: output lacks '$3': $out"
        fail=$((fail + 1))
        return
    fi
    echo "ok $1"
}

tree model
printf '#include <stdio.h>\n#include <sys/stat.h>\n#include <yaml.h>\n#include <jansson.h>\n' >"$tmp/t/model/a.c"
expect "model/ with libc, yaml and jansson passes" 0

tree model
printf '#include <stdio.h>\n#include <curl/curl.h>\n' >"$tmp/t/model/a.c"
expect "model/ including curl fails" 1 'model/a.c: includes <curl/curl.h> (curl), which model/ may not use'

tree model
printf '#include <microhttpd.h>\n' >"$tmp/t/model/a.h"
expect "a header file is checked too" 1 'model/a.h: includes <microhttpd.h> (mhd), which model/ may not use'

tree model
printf '#  include   <curl/easy.h>\n' >"$tmp/t/model/a.c"
expect "an indented include is read" 1 'includes <curl/easy.h> (curl)'

tree proxy
printf '#include <z3.h>\n' >"$tmp/t/proxy/a.c"
expect "proxy/ including Z3 fails" 1 'proxy/a.c: includes <z3.h> (z3), which proxy/ may not use'

# proxy/advisor/ has a row of its own: advisor mode may use curl, the
# proxy's core may not
tree proxy
mkdir -p "$tmp/t/proxy/advisor"
printf '#include <curl/curl.h>\n#include <event2/event.h>\n' >"$tmp/t/proxy/advisor/a.c"
printf '#include <event2/event.h>\n' >"$tmp/t/proxy/a.c"
expect "proxy/advisor/ including curl passes" 0
printf '#include <curl/curl.h>\n' >"$tmp/t/proxy/b.c"
expect "the proxy's core including curl fails" 1 \
    'proxy/b.c: includes <curl/curl.h> (curl), which proxy/ may not use'
rm "$tmp/t/proxy/b.c"
printf '#include <sqlite3.h>\n' >"$tmp/t/proxy/advisor/b.c"
expect "proxy/advisor/ is held to its own row" 1 \
    'proxy/advisor/b.c: includes <sqlite3.h> (sqlite), which proxy/advisor/ may not use'

tree model
printf '#include <zlib.h>\n' >"$tmp/t/model/a.c"
expect "a header in no group fails" 1 'model/a.c: includes <zlib.h>, which is in no group'

tree newdir
printf '#include <stdio.h>\n' >"$tmp/t/newdir/a.c"
expect "a folder without a row fails" 1 "newdir/: no 'folder newdir' row"

tree model
printf '#include <stdio.h>\n' >"$tmp/t/model/a.c"
printf '#include <check.h>\n#include <curl/curl.h>\n' >"$tmp/t/tests/check_a.c"
expect "tests/ may include anything" 0

tree model
printf '/* #include <curl/curl.h> would be refused */\n#include "model/model.h"\n' >"$tmp/t/model/a.c"
expect "quoted includes and prose are not system headers" 0

if [ -f "$build/proviso-prover" ] && [ -f "$build/proviso-proxy" ] && command -v readelf >/dev/null 2>&1; then
    tree model
    cp "$build/proviso-proxy" "$tmp/b/proviso-proxy"
    expect "the real proxy links only what its folders may" 0

    tree model
    cp "$build/proviso-prover" "$tmp/b/proviso-proxy"
    expect "a proxy linking libz3 fails" 1 'proviso-proxy: links libz3'

    tree model
    cp "$build/proviso-advisor" "$tmp/b/proviso"
    expect "a CLI linking the HTTP server library fails" 1 'proviso: links libmicrohttpd'
else
    echo "skip the link checks: no built programs in $build"
fi

n=$((n + 1))
if PV_BUILDDIR="$build" sh "$guard" "$top" >/dev/null 2>&1; then
    echo "ok the project as it is passes"
else
    PV_BUILDDIR="$build" sh "$guard" "$top"
    echo "FAIL the project as it is"
    fail=$((fail + 1))
fi

echo "deps_guard.sh: $n checks, $fail failures"
[ "$fail" -eq 0 ]
