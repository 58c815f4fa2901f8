# shellcheck shell=bash
# advisor_proxy_lib.sh - helpers for the scripts that run proviso-advisor and
# proviso-proxy in advisor mode together (sourced after proxy_lib.sh):
# start_advisor, adm (admin calls), sandbox, start_aproxy, via (curl through
# a proxy), wait_log, and rule (a one-rule policy.local proposal).
ADVISOR_BIN=$BUILD/proviso-advisor
JQ=$(command -v jq) || { echo "SKIP: jq is not installed"; exit 77; }
[ -x "$ADVISOR_BIN" ] || { echo "SKIP: build proviso-advisor first"; exit 77; }

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

# start_advisor NAME [ARGS...]: sets ${NAME}_PORT, ${NAME}_PID
start_advisor() {
    n=$1
    shift
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/$n.admin"
    # A restart gets a new log file. With the old one in place the wait
    # below could read the previous run's "listening" line before the
    # shell that starts the advisor has truncated the file (the redirection
    # happens in the child, after '&' has returned), and then find the
    # port missing from the emptied file: "advisor ADV did not start" with
    # an empty log, while the advisor came up a moment later. And a process
    # of the previous run that still holds the old file (its prover child,
    # between the parent's death and its own) writes at its own offset.
    [ -e "$T/$n.log" ] && mv "$T/$n.log" "$T/$n.log.$(date +%s%N)"
    ${ADVISOR_WRAPPER:-} "$ADVISOR_BIN" --data-dir "$T/$n.d" --port 0 --token-file "$T/$n.admin" \
        --test-allow-loopback "$@" >"$T/$n.log" 2>&1 &
    eval "${n}_PID=$!"
    PIDS="$PIDS $!"
    pid=$!
    # PV_START_TRIES / 20 seconds of wall-clock time (60 s by default: on
    # a loaded CI machine several PostgreSQL clusters fsync at once).
    # The port is taken from the same read that finds the line.
    start=$SECONDS
    p=
    while [ $((SECONDS - start)) -lt $((${PV_START_TRIES:-1200} / 20)) ]; do
        p=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9][0-9]*\).*/\1/p' "$T/$n.log" \
            2>/dev/null | head -n 1)
        [ -n "$p" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$p" ]; then
        echo "advisor $n did not start within $((SECONDS - start)) s"
        if kill -0 "$pid" 2>/dev/null; then
            echo "  it is still running; its threads (state, kernel wait, syscall):"
            for t in /proc/"$pid"/task/*; do
                echo "    $(awk '{print $2, $3}' "$t/stat" 2>/dev/null)" \
                    "$(cat "$t/wchan" 2>/dev/null) $(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
            done
            if [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/sock/server.log" ]; then
                echo "  the PostgreSQL server's log ends:"
                tail -n 20 "$PG_DIR/sock/server.log"
            fi
        else
            wait "$pid"
            echo "  it exited with status $?"
        fi
        echo "  its log ($(wc -c <"$T/$n.log") bytes):"
        tr -d '\000' <"$T/$n.log"
        exit 1
    fi
    eval "${n}_PORT=$p"
}

# adm ADVISOR METHOD PATH [JSON]: admin call, prints body then "|CODE"
adm() {
    port=$(eval echo "\$${1}_PORT")
    if [ $# -ge 4 ]; then
        "$CURL" -s --max-time 30 -X "$2" -H "Authorization: Bearer $(cat "$T/$1.admin")" \
            -H 'Content-Type: application/json' -d "$4" -w '|%{http_code}' \
            "http://127.0.0.1:$port$3"
    else
        "$CURL" -s --max-time 30 -X "$2" -H "Authorization: Bearer $(cat "$T/$1.admin")" \
            -w '|%{http_code}' "http://127.0.0.1:$port$3"
    fi
}

# sandbox ADVISOR NAME POLICY-FILE: creates it, token in $T/NAME.token
sandbox() {
    body=$("$JQ" -n --arg n "$2" --rawfile p "$3" '{name:$n,policy:$p}')
    out=$(adm "$1" POST /v1/sandboxes "$body")
    printf '%s' "${out%|*}" | "$JQ" -r .token >"$T/$2.token"
    expect_eq "create sandbox $2" 201 "${out##*|}"
}

# start_aproxy NAME ADVISOR SANDBOX [ARGS...]: proxy in advisor mode; sets ${NAME}_PX
start_aproxy() {
    port=$(eval echo "\$${2}_PORT")
    name=$1 sb=$3
    shift 3
    set -- "$name" "$port" "$sb" "$@"
    rm -f "$T/$1.port"
    ${PROXY_WRAPPER:-} "$PROXY_BIN" --advisor "http://127.0.0.1:$2" --sandbox "$3" \
        --token-file "$T/$3.token" --skill-dir "$T/$1.skills" --port 0 --admin-port 0 \
        --port-file "$T/$1.port" --data-dir "$T/$1.data" --log "$T/$1.log" \
        --test-allow-loopback "${@:4}" 2>>"$T/$1.err" &
    eval "${1}_PID=$!"
    PIDS="$PIDS $!"
    wait_file "$T/$1.port" || { echo "proxy $1 did not start"; cat "$T/$1.err"; exit 1; }
    read -r p _ <"$T/$1.port"
    eval "${1}_PX=$p"
}

# wait_log FILE NEEDLE [TRIES]: poll (20 ms) for a line
wait_log() {
    i=0
    while [ $i -lt "${3:-250}" ]; do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.02
        i=$((i + 1))
    done
    return 1
}

# via PROXY ARGS...: curl through that proxy; body then "|CODE"
via() {
    px=$(eval echo "\$${1}_PX")
    shift
    "$CURL" -s --max-time 40 -x "http://127.0.0.1:$px" -w '|%{http_code}' "$@"
}
body() { printf '%s' "${1%|*}"; }
code() { printf '%s' "${1##*|}"; }
jget() { body "$1" | "$JQ" -r "$2" 2>/dev/null; }

# rule NAME HOST PORT METHOD PATH: an addRule proposal for /usr/bin/curl
rule() {
    "$JQ" -cn --arg n "$1" --arg h "$2" --argjson p "$3" --arg m "$4" --arg path "$5" '{
        intent_summary: ("let curl " + $m + " " + $path),
        operations: [{addRule: {ruleName: $n, rule: {
            endpoints: [{host: $h, port: $p, protocol: "rest", enforcement: "enforce",
                         rules: [{allow: {method: $m, path: $path}}]}],
            binaries: [{path: "/usr/bin/curl"}]}}}]}'
}

up_got() { grep -qxF -- "$1" "$T/up.log" 2>/dev/null; }


# start_upstream_base PATH: a logging upstream on loopback ($T/up.log, its
# port in UP) and $T/base.yaml, a policy whose one endpoint is that
# upstream and allows curl a GET of PATH (enforced REST)
start_upstream_base() {
    "$UPSTREAM_BIN" --port-file "$T/up.port" --log "$T/up.log" 2>"$T/up.err" &
    PIDS="$PIDS $!"
    wait_file "$T/up.port" || { echo "upstream did not start"; exit 1; }
    read -r UP _ <"$T/up.port"
    cat >"$T/base.yaml" <<YAML
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: $1}
    binaries:
      - path: /usr/bin/curl
YAML
}

# now_ms: the clock in milliseconds
now_ms() { date +%s%3N; }

# token_on PORT NAME TRIES PAUSE: ask the advisor (replica) on PORT for
# sandbox NAME's policy with its token ($T/NAME.token) until it answers 200,
# at most TRIES more times PAUSE seconds apart; the last status in $c.
token_on() {
    i=0
    while :; do
        c=$("$CURL" -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/$2.token")" \
            "http://127.0.0.1:$1/v1/sandboxes/$2/policy")
        [ "$c" = 200 ] || [ $i -ge "$3" ] && break
        i=$((i + 1))
        sleep "$4"
    done
}
