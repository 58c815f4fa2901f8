#!/bin/sh
# layering_guard.sh - tests/check-layering.sh refuses a proxy core that
# reaches advisor mode by name (an include of a proxy/advisor/ header, or a
# call of a function that header declares) or includes the HTTP client
# (hclient/, advisor mode's), names the file and the rule,
# and accepts the core that goes through hooks and the project as it is.
#
# Trees are built in a temporary directory: a Makefile.am naming proxy/,
# a small advisor-mode header and core files that do or do not use it.
set -u
top=$(cd "${PV_SRCDIR:-$(dirname "$0")/..}" && pwd)
guard="$top/tests/check-layering.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layering.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
fail=0

tree() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/proxy/advisor"
    echo 'include $(srcdir)/proxy/local.mk' >"$tmp/t/Makefile.am"
    cat >"$tmp/t/proxy/advisor/proxy_advisor.h" <<'H'
/* comment naming proxy_advisor_new(x) is not a declaration */
struct proxy_advisor *proxy_advisor_new(struct proxy_server *srv);
bool proxy_local_serve(struct proxy_local *l, struct proxy_conn *c, const char *rest,
                       size_t len);
H
    printf '#include "proxy/advisor/proxy_advisor.h"\nint f(void) { return 0; }\n' \
        >"$tmp/t/proxy/advisor/proxy_advisor.c"
    printf '#include "proxy/proxy_int.h"\nint g(struct proxy_hooks *h) { return h != 0; }\n' \
        >"$tmp/t/proxy/proxy_server.c"
}

# expect NAME WANT_RC [GREP]
expect() {
    n=$((n + 1))
    out=$(PV_BUILDDIR="$tmp/none" sh "$guard" "$tmp/t" 2>&1)
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

tree
expect "a core on hooks passes" 0

tree
printf '#include "proxy/advisor/proxy_advisor.h"\n' >"$tmp/t/proxy/proxy_conn.c"
expect "the core including an advisor-mode header fails" 1 \
    "proxy/proxy_conn.c: the proxy's core includes an advisor-mode header"

tree
printf '#include "proxy/advisor/proxy_advisor.h"\n' >"$tmp/t/proxy/proxy_int.h"
expect "a core header including it fails too" 1 \
    "proxy/proxy_int.h: the proxy's core includes an advisor-mode header"

tree
printf 'void h(struct proxy_conn *c) { proxy_local_serve(0, c, "/", 1); }\n' \
    >"$tmp/t/proxy/proxy_relay.c"
expect "the core calling advisor mode fails" 1 \
    "proxy/proxy_relay.c: the proxy's core names advisor mode's proxy_local_serve"

tree
printf 'void h(void) { (void)proxy_advisor_new(0); }\n' >"$tmp/t/proxy/proxy_main2.c"
expect "a declaration's first line is read" 1 "names advisor mode's proxy_advisor_new"

tree
printf 'void h(void) { proxy_local_serve_other(); }\n' >"$tmp/t/proxy/proxy_relay.c"
expect "a longer name is not a match" 0

tree
printf '#include "hclient/hclient.h"\n' >"$tmp/t/proxy/proxy_server.c"
expect "the core including hclient fails" 1 \
    "proxy/proxy_server.c: the proxy's core includes hclient/ (only proxy/advisor/ may)"
printf '#include "hclient/hclient.h"\n' >>"$tmp/t/proxy/advisor/proxy_advisor.c"
rm "$tmp/t/proxy/proxy_server.c"
expect "advisor mode including hclient passes" 0

n=$((n + 1))
if out=$(PV_BUILDDIR="$tmp/none" sh "$guard" "$top" 2>&1); then
    echo "ok the project as it is passes"
else
    echo "FAIL the project as it is: $out"
    fail=$((fail + 1))
fi
echo "layering_guard.sh: $n checks, $fail failures"
[ "$fail" -eq 0 ]
