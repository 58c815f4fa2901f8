#!/bin/sh
# check-layering.sh - the folders and which way they may depend.
#
# Every folder the build includes (the "include $(srcdir)/X/local.mk" lines
# of Makefile.am) is checked; a folder missing from the table below fails,
# so a new folder cannot slip past. Rules:
#  - only <folder>/<folder>.h may be included from another folder;
#  - a folder may include only the folders its row names (dependencies
#    point down: common <- model <- prover <- server/cli; common <- httpd);
#  - the proxy's core (proxy/ outside proxy/advisor/) never includes or
#    calls advisor mode, which reaches it through hooks, nor hclient/;
#  - the proxy and the advisor never include Z3 or the prover, and the
#    built advisor and proxy binaries never link libz3;
#  - the proviso command (cli/) links neither the HTTP server library nor
#    the advisor's store: it is an HTTP client of the advisor;
#  - advisor/ is rooms, one folder per layer (docs/architecture.md#advisor):
#    a room includes its own headers and, of a room below it, only that
#    room's header (advisor/ROOM/ROOM.h), never a room above it nor another
#    room's *_int.h; and only the folders its row in room_allowed names.
set -u
top=${1:-${PV_SRCDIR:-.}}
build=${PV_BUILDDIR:-$top}
cd "$top" || exit 1

allowed() {
    case "$1" in
    common) echo "" ;;
    model) echo "common" ;;
    prover) echo "common model" ;;
    httpd) echo "common" ;;
    hclient) echo "common" ;;
    audit) echo "common" ;;
    server) echo "common model prover httpd" ;;
    proxy) echo "common model hclient" ;;
    advisor) echo "common model httpd audit hclient" ;;
    sandbox) echo "common model" ;;
    cli) echo "common model prover audit hclient sandbox" ;;
    tests) echo "*" ;;
    contrib) echo "" ;; # data only: man pages, units, completion (no C)
    *) echo "?" ;;
    esac
}

# advisor/'s rooms, bottom first, and what each may include: the rooms
# below it and our folders (tests/check-advisor-calls.sh holds the calls to
# the same order).
room_allowed() {
    case "$1" in
    store) echo "common" ;;
    core) echo "store common model httpd audit hclient" ;;
    life) echo "core store common model httpd" ;;
    inputs) echo "life core store common model httpd" ;;
    http) echo "inputs life core store common model httpd audit" ;;
    proc) echo "http inputs life core store common model httpd audit hclient" ;;
    *) echo "?" ;;
    esac
}

fail=0
folders=$(sed -n 's/^include \$(srcdir)\/\([a-z0-9_-]*\)\/local.mk$/\1/p' Makefile.am)
[ -n "$folders" ] || { echo "no folders found in Makefile.am"; exit 1; }
for dir in $folders; do
    deps=$(allowed "$dir")
    if [ "$deps" = "?" ]; then
        echo "$dir/: not in tests/check-layering.sh's table"
        fail=1
        continue
    fi
    [ "$deps" = "*" ] && continue
    for f in $(find "$dir" -name '*.[ch]' -not -path '*/node_modules/*'); do
        for inc in $(grep -o '#include "[a-z]*/[a-z_0-9/]*\.h"' "$f" | sed 's/#include "//; s/"$//'); do
            folder=${inc%%/*}
            base=${inc#*/}
            [ "$folder" = "$dir" ] && continue
            if [ "$base" != "$folder.h" ] && [ "$folder" != common ]; then
                echo "$f: includes internal header $inc"
                fail=1
            fi
            case " $deps " in
            *" $folder "*) ;;
            *) echo "$f: $dir/ may not depend on $folder/ ($inc)"; fail=1 ;;
            esac
        done
    done
done
if [ -d advisor ]; then
    for f in $(find advisor -name '*.[ch]' | sort); do
        rel=${f#advisor/}
        case "$rel" in
        advisor_data.c) continue ;; # generated (embed.sh): data only
        */*) room=${rel%%/*} ;;
        *)
            echo "$f: not in a room (advisor/ROOM/, docs/architecture.md#advisor)"
            fail=1
            continue
            ;;
        esac
        deps=$(room_allowed "$room")
        if [ "$deps" = "?" ]; then
            echo "advisor/$room/: not a room of tests/check-layering.sh's room_allowed"
            fail=1
            continue
        fi
        for inc in $(grep -o '#include "[a-z]*/[a-z_0-9/]*\.h"' "$f" | sed 's/#include "//; s/"$//'); do
            folder=${inc%%/*}
            if [ "$folder" = advisor ]; then
                r2=${inc#advisor/}
                r2=${r2%%/*}
                [ "$r2" = "$room" ] && continue
                case " $deps " in
                *" $r2 "*)
                    if [ "$inc" != "advisor/$r2/$r2.h" ]; then
                        echo "$f: includes advisor/$r2/'s internal header $inc"
                        fail=1
                    fi
                    ;;
                *)
                    echo "$f: advisor/$room/ may not include advisor/$r2/ ($inc): not a room below it"
                    fail=1
                    ;;
                esac
                continue
            fi
            case " $deps " in
            *" $folder "*) ;;
            *) echo "$f: advisor/$room/ may not depend on $folder/ ($inc)"; fail=1 ;;
            esac
        done
    done
fi
for dir in proxy advisor; do
    [ -d "$dir" ] || continue
    if grep -rl 'z3.h\|prover/prover.h' "$dir" 2>/dev/null; then
        echo "$dir/ must not include Z3 or the prover"
        fail=1
    fi
done
for bin in proviso-proxy proviso-advisor; do
    [ -x "$build/$bin" ] || continue
    if ldd "$build/$bin" 2>/dev/null | grep -q libz3; then
        echo "$bin links libz3: it must reach the prover over HTTP only"
        fail=1
    fi
done
# The reviewer CLI reaches the advisor over HTTP only: no server library,
# no store.
if [ -x "$build/proviso" ] && ldd "$build/proviso" 2>/dev/null | grep -q 'libmicrohttpd\|libsqlite3'; then
    echo "proviso links libmicrohttpd or libsqlite3: it must reach the advisor over HTTP only"
    fail=1
fi
# proxy/advisor/ (advisor mode) sits on the proxy's core; the core reaches
# it only through the hooks advisor mode registers (proxy/proxy_int.h,
# struct proxy_hooks): no file of the core includes an advisor-mode header
# or names a function one declares.
if [ -d proxy/advisor ]; then
    core=$(find proxy -path proxy/advisor -prune -o -name '*.[ch]' -print | sort)
    for f in $(grep -l '#include "proxy/advisor/' $core); do
        echo "$f: the proxy's core includes an advisor-mode header (proxy/advisor/)"
        fail=1
    done
    # only advisor mode talks HTTP to another service
    for f in $(grep -l '#include "hclient/' $core); do
        echo "$f: the proxy's core includes hclient/ (only proxy/advisor/ may)"
        fail=1
    done
    names=$(sed -n 's/^[a-z].*[ *]\(proxy_[a-z0-9_]*\)(.*/\1/p' proxy/advisor/*.h | sort -u)
    [ -n "$names" ] || { echo "proxy/advisor/: no functions found in its header"; fail=1; }
    for n in $names; do
        for f in $(grep -lw "$n" $core); do
            echo "$f: the proxy's core names advisor mode's $n (register a hook instead)"
            fail=1
        done
    done
fi
exit $fail
