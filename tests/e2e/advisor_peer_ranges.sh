#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# advisor_peer_ranges.sh - what a peer may register (docs/advisor.md#peers):
# the peer_address_ranges setting bounds the addresses a sandbox's token can
# move its peers' target_sandbox rules to, and every move is recorded.
#   - validation: a list of canonical CIDRs, the settings' message style;
#   - unset: any address the registration otherwise accepts (compatible);
#   - set: a registration with any address outside answers 400 naming the
#     address and the ranges, and writes nothing (no event, no revision);
#     inside, it is accepted; the admin token is bounded the same way;
#   - every move: CONFIG:REGISTERED with addresses and previous_addresses,
#     and CONFIG:RESOLVED for each dependent naming the peer, old and new;
#   - narrowing the ranges drops the registered addresses they no longer
#     admit (recorded, pushed); global wins over the sandbox's value;
#   - deleting the peer records CONFIG:RESOLVED with no addresses.
# The advisor runs with --test-allow-loopback so loopback peers register.
. "$(dirname "$0")/advisor_lib.sh"

APP='version: 1
network_policies:
  to_db:
    endpoints:
      - target_sandbox: db
        ports: [5432]
    binaries:
      - path: /usr/bin/psql
'
start_advisor "$WORK/data" --test-allow-loopback || exit 1
create_sandbox app "$APP"
eq "create app" "$STATUS" 201
create_sandbox db 'version: 1'
eq "create db" "$STATUS" 201
DB=$SB_TOKEN
create_sandbox other 'version: 1'
OTHER=$SB_TOKEN
RANGES=/v1/sandboxes/db/settings/peer_address_ranges

# events KIND SANDBOX: the records of that kind for that sandbox (JSON list)
events() {
    api GET '/v1/events?since=0&limit=10000'
    printf '%s' "$BODY" | jq -c --arg k "$1" --arg s "$2" \
        '[.events[] | select(.kind == $k and .sandbox == $s)]'
}
nevents() { api GET '/v1/events?since=0&limit=10000'; jf '.events | length'; }
db_addrs() { api GET /v1/sandboxes/db; jf '.addresses | tostring'; }
app_rev() { api GET /v1/sandboxes/app/policy; jf .revision; }
register() { api PUT /v1/sandboxes/db/addresses "{\"addresses\":$1}" "${2:-$DB}"; }

# --- unset: today's behaviour --------------------------------------------------------
api GET /v1/sandboxes/db/settings
eq "unset by default" "$(jf '.peer_address_ranges | "\(.value) \(.resolved_from)"')" "null default"
register '["127.0.0.6"]'
eq "unset: any accepted address registers" "$STATUS" 200
eq "db at 127.0.0.6" "$(db_addrs)" '["127.0.0.6"]'
ev=$(events CONFIG:REGISTERED db)
eq "the first registration: new and previous addresses" \
    "$(printf '%s' "$ev" | jq -c 'last.record | [.addresses, .previous_addresses, .by]')" \
    '[["127.0.0.6"],[],"sandbox"]'
ev=$(events CONFIG:RESOLVED app)
eq "app resolved once, naming db, old and new" \
    "$(printf '%s' "$ev" | jq -c '[length, (last.record | .peer, .addresses, .previous_addresses)]')" \
    '[1,"db",["127.0.0.6"],[]]'

# --- validation: the settings' message style --------------------------------------
bad_value() {
    api PUT "$1" "{\"value\":$2}"
    eq "$2 is refused (400)" "$STATUS" 400
    eq "$2: the message" "$(jf .detail)" "$3"
}
P="setting 'peer_address_ranges'"
bad_value "$RANGES" '"127.0.0.0/24"' "$P expects list value"
bad_value "$RANGES" '["db.internal"]' \
    "$P expects a list of canonical CIDRs; got 'db.internal' (invalid IP address)"
bad_value /v1/settings/peer_address_ranges '["db.internal"]' \
    "$P expects a list of canonical CIDRs; got 'db.internal' (invalid IP address)"
bad_value "$RANGES" '["127.0.0.1/24"]' \
    "$P expects a list of canonical CIDRs; got '127.0.0.1/24' (host bits set)"
bad_value "$RANGES" '["10.0.0.0/33"]' \
    "$P expects a list of canonical CIDRs; got '10.0.0.0/33' (invalid prefix length)"
bad_value "$RANGES" '["010.0.0.0/8"]' \
    "$P expects a list of canonical CIDRs; got '010.0.0.0/8' (invalid IP address)"
bad_value "$RANGES" '["2001:DB8::/32"]' \
    "$P expects a list of canonical CIDRs; got '2001:DB8::/32' (not canonical, write '2001:db8::/32')"
bad_value "$RANGES" '["::ffff:10.0.0.0/104"]' \
    "$P expects a list of canonical CIDRs; got '::ffff:10.0.0.0/104' (not canonical, write '10.0.0.0/8')"
bad_value "$RANGES" '["10.0.0.0/8","10.0.0.0/8"]' \
    "$P expects a list of canonical CIDRs; got '10.0.0.0/8' twice"
bad_value "$RANGES" '[5]' "$P expects a list of CIDR strings; entry 0 is not a string"
bad_value "$RANGES" "$(jq -cn '[range(65) | "10.0.\(.).0/24"]')" "$P expects at most 64 CIDRs; got 65"
api GET /v1/sandboxes/db/settings
eq "nothing was written" "$(jf '.peer_address_ranges.resolved_from')" default
api PUT "$RANGES" '{"value":["127.0.0.0/24"]}' "$DB"
eq "the sandbox's own token cannot set its ranges" "$STATUS" 403

# --- bounded: 127.0.0.0/24 for db -----------------------------------------------------
n0=$(nevents)
api PUT "$RANGES" '{"value":["127.0.0.0/24","fd00::/8","10.9.8.7"]}'
eq "set db's ranges" "$STATUS" 200
eq "resolved from the sandbox" "$(jf '.peer_address_ranges | "\(.value | join(",")) \(.resolved_from)"')" \
    "127.0.0.0/24,fd00::/8,10.9.8.7 sandbox"
eq "127.0.0.6 is within: not dropped" "$(db_addrs)" '["127.0.0.6"]'
eq "the setting is one event (nothing dropped)" "$(nevents)" $((n0 + 1))

n0=$(nevents)
rev0=$(app_rev)
register '["127.0.1.5"]'
eq "127.0.1.5 is outside: 400" "$STATUS" 400
eq "the message names the address and the ranges" "$(jf .detail)" \
    '127.0.1.5 is outside the addresses sandbox db may register: peer_address_ranges ["127.0.0.0/24","fd00::/8","10.9.8.7"] (sandbox)'
register '["127.0.0.8","127.0.1.5"]'
eq "one address outside refuses the whole registration" "$STATUS" 400
has "naming that address" "$(jf .detail)" "127.0.1.5 is outside"
api PUT /v1/sandboxes/db/addresses '{"addresses":["10.66.66.66"]}'
eq "the admin token is bounded too" "$STATUS" 400
register '["127.0.0.6"]'
eq "the same registration again, within: 200" "$STATUS" 200
eq "and changes nothing" "$(jf .changed)" false
eq "nothing written: addresses" "$(db_addrs)" '["127.0.0.6"]'
eq "nothing written: no event" "$(nevents)" "$n0"
eq "nothing written: app's revision" "$(app_rev)" "$rev0"

register '["127.0.0.7","10.9.8.7"]'
eq "within the ranges: accepted" "$STATUS" 200
eq "changed" "$(jf '"\(.changed) \(.updated | length)"')" "true 1"
eq "db moved" "$(db_addrs)" '["10.9.8.7","127.0.0.7"]'
eq "app got a revision" "$(app_rev)" $((rev0 + 1))
ev=$(events CONFIG:REGISTERED db)
eq "CONFIG:REGISTERED: old and new addresses, who, the ranges" \
    "$(printf '%s' "$ev" | jq -c 'last.record | [.addresses, .previous_addresses, .by, .peer_address_ranges]')" \
    '[["10.9.8.7","127.0.0.7"],["127.0.0.6"],"sandbox",["127.0.0.0/24","fd00::/8","10.9.8.7"]]'
has "and its line" "$(printf '%s' "$ev" | jq -r 'last.line')" \
    'sandbox db registered addresses ["10.9.8.7","127.0.0.7"] (previously ["127.0.0.6"])'
ev=$(events CONFIG:RESOLVED app)
eq "CONFIG:RESOLVED for app: the peer, old and new" \
    "$(printf '%s' "$ev" | jq -c 'last.record | [.peer, .addresses, .previous_addresses, .version]')" \
    "[\"db\",[\"10.9.8.7\",\"127.0.0.7\"],[\"127.0.0.6\"],$((rev0 + 1))]"
has "and its line" "$(printf '%s' "$ev" | jq -r 'last.line')" \
    'resolved target_sandbox db again: ["10.9.8.7","127.0.0.7"] (previously ["127.0.0.6"])'
# the sealed audit record carries the same facts (docs/audit.md: data)
api GET '/v1/audit/export?since=0'
eq "the audit chain's CONFIG:REGISTERED data: old and new" \
    "$(printf '%s\n' "$BODY" | jq -sc '[.[] | select(.kind == "CONFIG:REGISTERED")] | last
        | .data | [.addresses, .previous_addresses, .by]')" \
    '[["10.9.8.7","127.0.0.7"],["127.0.0.6"],"sandbox"]'
eq "the audit chain's CONFIG:RESOLVED data: the peer, old and new" \
    "$(printf '%s\n' "$BODY" | jq -sc '[.[] | select(.kind == "CONFIG:RESOLVED")] | last
        | .data | [.peer, .addresses, .previous_addresses]')" \
    '["db",["10.9.8.7","127.0.0.7"],["127.0.0.6"]]'
api PUT /v1/sandboxes/db/addresses '{"addresses":["127.0.0.7"]}'
eq "the admin within the ranges: accepted" "$STATUS" 200
ev=$(events CONFIG:REGISTERED db)
eq "recorded as the admin's move" "$(printf '%s' "$ev" | jq -r 'last.record.by')" admin
has "and its line says so" "$(printf '%s' "$ev" | jq -r 'last.line')" \
    'gateway registered addresses ["127.0.0.7"] for sandbox db (previously ["10.9.8.7","127.0.0.7"])'
# the ranges of db bound db only
api PUT /v1/sandboxes/other/addresses '{"addresses":["10.1.2.3"]}' "$OTHER"
eq "another sandbox's registrations are not bounded by db's ranges" "$STATUS" 200

# --- narrowing drops what the new ranges do not admit -------------------------------
rev0=$(app_rev)
api PUT "$RANGES" '{"value":["127.0.0.6/31"]}'
eq "narrow db's ranges" "$STATUS" 200
eq "127.0.0.7 is still admitted" "$(db_addrs)" '["127.0.0.7"]'
api PUT "$RANGES" '{"value":["127.0.0.8/29"]}'
eq "narrow again: 127.0.0.7 is outside" "$STATUS" 200
eq "the outside address is dropped" "$(db_addrs)" '[]'
ev=$(events CONFIG:REGISTERED db)
eq "the drop is a recorded move, by the setting" \
    "$(printf '%s' "$ev" | jq -c 'last.record | [.addresses, .previous_addresses, .by, .peer_address_ranges]')" \
    '[[],["127.0.0.7"],"setting",["127.0.0.8/29"]]'
eq "app got a revision" "$(app_rev)" $((rev0 + 1))
api GET /v1/sandboxes/app/policy
eq "app's peer rule is unresolved again" "$(jf '.policy_yaml | contains("resolved_ips")')" false
ev=$(events CONFIG:RESOLVED app)
eq "CONFIG:RESOLVED for the drop" \
    "$(printf '%s' "$ev" | jq -c 'last.record | [.peer, .addresses, .previous_addresses]')" \
    '["db",[],["127.0.0.7"]]'

# --- global wins; an empty list admits nothing --------------------------------------
api PUT /v1/settings/peer_address_ranges '{"value":["10.0.0.0/8"]}'
eq "a global value" "$STATUS" 200
api GET /v1/sandboxes/db/settings
eq "wins over db's" "$(jf '.peer_address_ranges | "\(.value | join(",")) \(.resolved_from)"')" \
    "10.0.0.0/8 global"
eq "other's 10.1.2.3 is within the global ranges" \
    "$(api GET /v1/sandboxes/other; jf '.addresses | tostring')" '["10.1.2.3"]'
register '["127.0.0.8"]'
eq "db's own ranges no longer apply" "$STATUS" 400
has "the message says global" "$(jf .detail)" '["10.0.0.0/8"] (global)'
register '["10.66.66.66"]'
eq "within the global ranges" "$STATUS" 200
api PUT "$RANGES" '{"value":["127.0.0.0/24"]}'
eq "a sandbox value under a global one: 409" "$STATUS" 409
api PUT /v1/settings/peer_address_ranges '{"value":[]}'
eq "an empty list" "$STATUS" 200
eq "drops every registered address" "$(db_addrs)" '[]'
eq "of every sandbox" "$(api GET /v1/sandboxes/other; jf '.addresses | tostring')" '[]'
register '["10.66.66.66"]'
eq "and admits none" "$STATUS" 400
register '[]'
eq "registering no address is always accepted" "$STATUS" 200
api DELETE /v1/settings/peer_address_ranges
eq "delete the global value" "$STATUS" 200
api GET /v1/sandboxes/db/settings
eq "db's own value applies again" "$(jf '.peer_address_ranges.resolved_from')" sandbox
api DELETE "$RANGES"
register '["127.0.1.5"]'
eq "unset again: any accepted address" "$STATUS" 200

# --- the CLI sets a list -------------------------------------------------------------
CLI=$PV_BUILDDIR/proviso
if [ -x "$CLI" ]; then
    out=$("$CLI" settings set peer_address_ranges '["127.0.0.0/24"]' --sandbox db \
        --advisor "$ADV" --token-file "$ADMIN_FILE" 2>&1)
    eq "proviso settings set KEY '[...]'" "$?" 0
    has "shows the list" "$out" '["127.0.0.0/24"]'
    eq "and it bounded db: 127.0.1.5 dropped" "$(db_addrs)" '[]'
    out=$("$CLI" settings set peer_address_ranges db.internal --sandbox db \
        --advisor "$ADV" --token-file "$ADMIN_FILE" 2>&1)
    eq "a name: refused" "$?" 1
    has "with the reason" "$out" "expects list value"
fi
# --- deleting the peer is a move to nothing ------------------------------------------
register '["127.0.0.5"]'
eq "db registers once more" "$STATUS" 200
api DELETE /v1/sandboxes/db
eq "delete db" "$STATUS" 200
ev=$(events CONFIG:RESOLVED app)
eq "app's CONFIG:RESOLVED: db's addresses gone" \
    "$(printf '%s' "$ev" | jq -c 'last.record | [.peer, .addresses, .previous_addresses]')" \
    '["db",[],["127.0.0.5"]]'

# a clean stop (under ADVISOR_WRAPPER=valgrind ... --error-exitcode, no leak)
stop_advisor
eq "SIGTERM: exit 0" "$ADV_RC" 0
finish
