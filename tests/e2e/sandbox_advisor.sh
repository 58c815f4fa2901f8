#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sandbox_advisor.sh - `proviso sandbox run NAME` with proviso-advisor
# (docs/sandbox.md): an existing sandbox run with its own token follows the
# advisor's revision (the base's allowed path reaches the upstream, another
# does not); the skill is readable inside at the path the deny body names,
# not a host path; policy.local answers from inside; a proposal made from
# inside through policy.local is approved (auto mode) and the retried
# request reaches the upstream; a sandbox made for the run (--policy with
# the admin token) exists while it runs and is deleted after a normal end
# and after SIGKILL of proviso. Needs root; skipped (77) otherwise.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare --net true 2>/dev/null; then
    echo "SKIP: sandbox_advisor.sh needs root and namespaces"
    exit 77
fi
id sandbox >/dev/null 2>&1 ||
    useradd --system --user-group --home-dir /sandbox --shell /usr/sbin/nologin sandbox || exit 1
chmod 755 "$T"

start_upstream_base /allowed
cat >>"$T/base.yaml" <<EOF
filesystem_policy:
  include_workdir: false
  read_only: [/usr, /lib, /lib64, /etc, /proc, /dev/urandom, $T/ro]
  read_write: [/tmp, /dev/null]
EOF
mkdir -p "$T/ro"
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"
start_advisor ADV --config "$T/quiet.yaml"
sandbox ADV one "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "sandbox one auto" 200 "$(code "$out")"
URL=http://127.0.0.1:$ADV_PORT

# The agent inside: the base path, a denied path (its deny body names the
# skill), the skill, policy.local, a proposal, its wait, the retry.
rule data 127.0.0.1 "$UP" GET /data >"$T/ro/proposal.json"
cat >"$T/ro/agent.sh" <<EOF
#!/bin/sh
curl -s -m 10 -o /dev/null -w 'allowed %{http_code}\n' http://127.0.0.1:$UP/allowed
curl -s -m 10 http://127.0.0.1:$UP/data >/tmp/deny.json
echo "denied \$(grep -o '"error":"[a-z_]*"' /tmp/deny.json)"
skill=\$(grep -o '"path":"[^"]*policy_advisor.md"' /tmp/deny.json | head -1 | cut -d'"' -f4)
echo "skill-path \$skill"
echo "skill-env \$PROVISO_SKILL_FILE"
[ -r "\$skill" ] && echo "skill-readable yes"
curl -s -m 10 -o /dev/null -w 'policy.local %{http_code}\n' http://policy.local/v1/policy/current
id=\$(curl -s -m 20 -X POST -H 'Content-Type: application/json' --data @$T/ro/proposal.json \
    http://policy.local/v1/proposals | grep -o '"accepted_chunk_ids":\["[^"]*"' | cut -d'"' -f4)
echo "proposal \$id"
curl -s -m 40 "http://policy.local/v1/proposals/\$id/wait?timeout=30" >/tmp/wait.json
echo "wait \$(grep -o '"status":"[a-z_]*"' /tmp/wait.json | head -1)"
for i in 1 2 3 4 5 6 7 8 9 10; do
    code=\$(curl -s -m 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:$UP/data)
    [ "\$code" = 200 ] && break
    sleep 0.3
done
echo "retry \$code"
EOF
chmod 755 "$T/ro/agent.sh"
out=$("$BUILD/proviso" sandbox run one --advisor "$URL" --sandbox-token "$T/one.token" \
    --test-allow-loopback --log "$T/sb1.log" -- /bin/sh "$T/ro/agent.sh" 2>"$T/sb1.err")
rc=$?
echo "$out" | sed 's/^/    /'
expect_eq "the run's status" 0 "$rc"
expect_has "base path allowed inside" "allowed 200" "$out"
expect_has "other path denied" 'denied "error":"policy_denied"' "$out"
expect_has "deny body names the skill inside" "skill-path /.proviso/skills/policy_advisor.md" "$out"
expect_has "PROVISO_SKILL_FILE names it too" "skill-env /.proviso/skills/policy_advisor.md" "$out"
expect_has "the skill is readable inside" "skill-readable yes" "$out"
expect_has "policy.local answers from inside" "policy.local 200" "$out"
expect_has "the proposal from inside is approved" 'wait "status":"approved"' "$out"
expect_has "the retried request passes" "retry 200" "$out"
if up_got "GET /allowed"; then pass; else fail "the upstream never got /allowed"; fi
if up_got "GET /data"; then pass; else fail "the upstream never got /data after the approval"; fi
expect_has "identity inside the sandbox" "/usr/bin/curl(" "$(cat "$T/sb1.log")"

# A sandbox made for the run: exists while it runs, deleted after.
"$BUILD/proviso" sandbox run two --advisor "$URL" --token-file "$T/ADV.admin" \
    --policy "$T/base.yaml" --test-allow-loopback --log "$T/sb2.log" -- \
    /bin/sh -c 'curl -s -m 10 -o /dev/null -w "%{http_code}" http://127.0.0.1:'"$UP"'/allowed' \
    >"$T/two.out" 2>"$T/two.err"
expect_eq "made for the run: its request passes" 200 "$(cat "$T/two.out")"
out=$(adm ADV GET /v1/sandboxes/two)
expect_eq "made for the run: deleted after a normal end" 404 "$(code "$out")"

"$BUILD/proviso" sandbox run three --advisor "$URL" --token-file "$T/ADV.admin" \
    --policy "$T/base.yaml" --log "$T/sb3.log" -- /bin/sh -c 'sleep 303' 2>"$T/three.err" &
RUN=$!
for _ in $(seq 200); do
    [ "$(code "$(adm ADV GET /v1/sandboxes/three)")" = 200 ] && break
    sleep 0.05
done
expect_eq "made for the run: exists while it runs" 200 "$(code "$(adm ADV GET /v1/sandboxes/three)")"
kill -KILL "$RUN"
wait "$RUN" 2>/dev/null
for _ in $(seq 200); do
    [ "$(code "$(adm ADV GET /v1/sandboxes/three)")" = 404 ] && break
    sleep 0.05
done
expect_eq "made for the run: deleted after SIGKILL of proviso" 404 \
    "$(code "$(adm ADV GET /v1/sandboxes/three)")"
for _ in $(seq 40); do pgrep -f "sleep 303" >/dev/null || break; sleep 0.05; done
if pgrep -f "sleep 303" >/dev/null; then fail "the command outlived proviso"; else pass; fi

finish
