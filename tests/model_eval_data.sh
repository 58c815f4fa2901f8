#!/bin/sh
# model_eval_data.sh - make check: show that check_model_eval fails when its
# data (tests/eval/) is wrong, lost or unreadable, and names the row. Each
# case runs the program on a mutated copy of the folder (PV_EVAL_DIR), so a
# runner that passed everything, skipped a file or ignored a key could not
# pass this test. Only the program's data test case runs (CK_RUN_CASE=data),
# in one process (CK_FORK=no): the other cases read no data.
set -u
CK_RUN_CASE=data
CK_FORK=no
export CK_RUN_CASE CK_FORK
src=${PV_SRCDIR:-$(dirname "$0")/..}
bld=${PV_BUILDDIR:-.}
prog="$bld/tests/check_model_eval"
data="$src/tests/eval"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

copy() { # NAME: a writable copy of the data in $tmp/NAME
    rm -rf "${tmp:?}/$1"
    cp -R "$data" "$tmp/$1" && chmod -R u+w "$tmp/$1"
}

# NAME TEXT: the program fails on $tmp/NAME and its output holds TEXT
fails() {
    if PV_EVAL_DIR="$tmp/$1" "$prog" >"$tmp/$1.out" 2>&1; then
        echo "FAIL $1: passed"; cat "$tmp/$1.out"; status=1
    elif ! grep -qF -- "$2" "$tmp/$1.out"; then
        echo "FAIL $1: the output lacks '$2':"; cat "$tmp/$1.out"; status=1
    else
        echo "ok $1 is caught"
    fi
}

mutate() { # NAME FILE SED-EXPRESSION TEXT
    copy "$1"
    sed "$3" "$data/$2" >"$tmp/$1/$2"
    if cmp -s "$data/$2" "$tmp/$1/$2"; then
        echo "FAIL $1: the mutation changed nothing"; status=1; return
    fi
    fails "$1" "$4"
}

line_of() { # FILE ROW-NAME: the line of the row's "- name:"
    grep -n "^  - name: $2\$" "$data/$1" | cut -d: -f1
}

# The unchanged copy passes and says how many rows it ran.
copy same
if PV_EVAL_DIR="$tmp/same" "$prog" >"$tmp/same.out" 2>&1 &&
    grep -q '^check_model_eval: [0-9][0-9]* data rows from [0-9][0-9]* files$' "$tmp/same.out"; then
    echo "ok the unchanged copy passes: $(head -n 1 "$tmp/same.out")"
else
    echo "FAIL the unchanged copy:"; cat "$tmp/same.out"; status=1
fi

# Wrong expectations: the message is FILE:LINE: NAME: what differs.
l=$(line_of 01-reach.yaml 'V3 wrong port')
mutate reason 01-reach.yaml "$((l + 6))s/reason: no_endpoint/reason: no_policy/" \
    "reach.yaml:$l: V3 wrong port: reason no_endpoint, want no_policy"
l=$(line_of 01-reach.yaml 'V1 exact host allowed')
mutate allow 01-reach.yaml "$((l + 3))s/allow: true/allow: false/" \
    "reach.yaml:$l: V1 exact host allowed: allow 1, want 0"
mutate route 01-reach.yaml "$((l + 3))s/route: opaque/route: inspected/" \
    "V1 exact host allowed: route opaque, want inspected"
mutate rule 01-reach.yaml "$((l + 3))s/rule: api/rule: apx/" \
    "V1 exact host allowed: rule api, want apx"
mutate detail 01-reach.yaml "$((l + 3))s/detail: \"\"/detail: \"x\"/" \
    "V1 exact host allowed: detail '' lacks 'x'"
# The request changes the decision: a port no endpoint has.
mutate port 01-reach.yaml "$((l + 2))s/port: 443/port: 444/" \
    "V1 exact host allowed: allow 0, want 1"
# A load error the policy does not produce, and a policy that must load.
mutate load_error 11-load-errors.yaml 's|allowed_ips: \[127.0.0.0/8\]|allowed_ips: [10.0.0.0/8]|' \
    "policy 'allowed_ips_loopback' loads, want an error with 'always-blocked'"
mutate policy 06-audit.yaml 's/^            enforcement: audit$/            enforcement: Audit/' \
    "policy 'audit' (line 5) does not load"

# The data itself: read whole, or the run fails.
copy lost
rm "$tmp/lost/06-audit.yaml"
fails lost "fewer than"
copy empty
: >"$tmp/empty/06-audit.yaml"
fails empty "06-audit.yaml: no rows"
mutate unparseable 06-audit.yaml '3s/$/\n  - [unclosed/' "06-audit.yaml:"
mutate unknown_key 01-reach.yaml 's/request: {host: api.example.com, port: 80}/request: {hots: a, host: api.example.com, port: 80}/' \
    "request: unknown key 'hots'"
mutate row_key 01-reach.yaml 's/^    policy: api$/    policy: api\n    expected: 1/' \
    "row: unknown key 'expected'"
mutate no_policy 01-reach.yaml '0,/^    policy: api$/s//    policy: apx/' "no policy 'apx' in this file"
mutate unused 01-reach.yaml 's/^policies:$/policies:\n  spare: |\n    version: 1/' \
    "policy 'spare' is used by no row"
mutate reason_name 01-reach.yaml 's/reason: no_endpoint/reason: no-endpoint/' \
    "reason: unknown name 'no-endpoint'"
mutate incomplete 01-reach.yaml "$((l + 3))s/reason: allowed, //" "expect needs allow and reason"
mutate same_name 02-binaries.yaml '0,/^  - name: .*$/s//  - name: V1 exact host allowed/' \
    "row name 'V1 exact host allowed' is also at"
copy stray
echo 'rows: []' >"$tmp/stray/12-new.yml"
fails stray "12-new.yml: not a .yaml data file"
exit $status
