#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cli_cred_store.sh - make check: the proxy's credentials store (values
# included) is a credentials file for `proviso prove --credentials`: it loads,
# its targets make hosts credentialed (findings appear), and no value ever
# reaches the output, the JSON, the shorthand or an error message.
. "$(dirname "$0")/cli_lib.sh"
SECRET=ghp_s3cr3tVALUEnever
cp "$tmp/base.yaml" "$tmp/wide.yaml"
cat >>"$tmp/wide.yaml" <<'Y'
          - allow:
              method: DELETE
              path: /repos/**
Y
cat >"$tmp/store.yaml" <<Y
credentials:
  - name: github-pat
    type: github-pat
    scopes: [repo]
    injected_via: header
    target_hosts: [api.github.com]
    env: GITHUB_TOKEN
    value: $SECRET
  - name: npm
    target_hosts: [registry.npmjs.org]
    env: NPM_TOKEN
    value_file: /nonexistent/npm.secret
Y
chmod 600 "$tmp/store.yaml"

for fmt in text json shorthand; do
    "$pv" prove --baseline "$tmp/base.yaml" --candidate "$tmp/wide.yaml" \
        --credentials "$tmp/store.yaml" --format "$fmt" >"$tmp/out.$fmt" 2>"$tmp/err.$fmt"
    rc=$?
    if [ "$rc" -le 1 ]; then ok "$fmt: the store loads (exit $rc)"; else bad "$fmt: exit $rc"; cat "$tmp/err.$fmt"; fi
    hasnt "$tmp/out.$fmt" "$SECRET" "$fmt: no value in the output"
    hasnt "$tmp/err.$fmt" "$SECRET" "$fmt: no value on stderr"
    hasnt "$tmp/err.$fmt" "no-credentials" "$fmt: the store counts as credentials"
done
has "$tmp/out.json" "capability_expansion" "a new method on a credentialed host is a finding"
has "$tmp/out.json" "github-pat" "the finding names the credential"

# a malformed secret: the error names the field, never its text
cat >"$tmp/bad.yaml" <<Y
- name: a
  env: K
  value: [$SECRET]
  target_hosts: [api.github.com]
Y
"$pv" prove --baseline "$tmp/base.yaml" --candidate "$tmp/wide.yaml" \
    --credentials "$tmp/bad.yaml" >"$tmp/out.bad" 2>"$tmp/err.bad"
rc=$?
[ "$rc" -eq 2 ] && ok "malformed value: exit 2" || bad "malformed value: exit $rc (want 2)"
cat "$tmp/out.bad" >>"$tmp/err.bad"
has "$tmp/err.bad" "credential value must be a non-empty string" "malformed value: the field is named"
hasnt "$tmp/err.bad" "$SECRET" "malformed value: the value is not printed"
# a value without its key
printf -- '- {name: a, value: %s}\n' "$SECRET" >"$tmp/nokey.yaml"
"$pv" prove --baseline "$tmp/base.yaml" --candidate "$tmp/wide.yaml" \
    --credentials "$tmp/nokey.yaml" >"$tmp/out.nokey" 2>&1
has "$tmp/out.nokey" "needs env" "a value without env is refused"
hasnt "$tmp/out.nokey" "$SECRET" "and not printed"

echo "cli_cred_store.sh: $fails failures"
[ "$fails" -eq 0 ]
