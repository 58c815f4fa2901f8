/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_outcome.c - what every refused or failed connection outcome means
 *
 * One row per (phase, reason): the HTTP status, the error code of the body,
 * the body kind, and the engine and stage of its decision log line. The
 * connection code never spells a status or a stage itself: every outcome
 * goes through conn_outcome() (proxy_conn.c), which reads this table, writes
 * the log line first and then the reply, so no outcome can skip its line.
 *
 * Rows whose 'log' is false are failures, not decisions: the upstream
 * failed after an ALLOWED line for the same request, or the destination
 * did not resolve (stage "dns"); they write an operational note instead of
 * a decision line and count in /metrics as failures. A NULL engine marks
 * rows the reference's engine field has no value for.
 *
 * A policy denial that a rule could lift (no endpoint for the host and port,
 * or a destination the rule does not admit) names its 'missing' type: with
 * proposals on, its JSON body then tells the agent what to ask for
 * (rule_missing, next_steps, agent_guidance), as the L7 body always does.
 */
#include "config.h"

#include "proxy/proxy_int.h"

#define ROW(o, st, err, kind, eng, stage, log)      \
    {                                               \
        o, #o, st, err, kind, eng, stage, log, NULL \
    }
/* a policy denial whose JSON body names what is missing (rule_missing) */
#define ROW_MISSING(o, st, err, kind, eng, stage, missing) \
    {                                                      \
        o, #o, st, err, kind, eng, stage, true, missing    \
    }

static const struct proxy_outcome_row rows[] = {
    /* request heads */
    ROW(PROXY_OUT_HEAD_TOOBIG, 431, NULL, PROXY_REPLY_BARE, "http-parser", "http-parser", true),
    ROW(PROXY_OUT_HEAD_BAD, 400, NULL, PROXY_REPLY_BARE, "http-parser", "http-parser", true),
    ROW(PROXY_OUT_HEAD_TIMEOUT, 408, NULL, PROXY_REPLY_BARE, "http-parser", "http-parser", true),
    ROW(PROXY_OUT_BODY_BAD, 400, NULL, PROXY_REPLY_BARE, "http-parser", "http-parser", true),
    ROW(PROXY_OUT_INTERNAL, 500, NULL, PROXY_REPLY_BARE, NULL, "internal", true),
    ROW(PROXY_OUT_CONN_LIMIT, 503, NULL, PROXY_REPLY_BARE, NULL, "connection-limit", true),
    /* CONNECT */
    ROW(PROXY_OUT_CONNECT_TARGET, 400, NULL, PROXY_REPLY_BARE, "http-parser", "connect", true),
    ROW_MISSING(PROXY_OUT_CONNECT_DENIED, 403, "policy_denied", PROXY_REPLY_JSON, "policy",
                "connect", "endpoint"),
    /* forward requests */
    ROW(PROXY_OUT_FORWARD_URI, 400, NULL, PROXY_REPLY_BARE, "http-parser",
        "forward-parse-rejection", true),
    ROW(PROXY_OUT_FORWARD_HTTPS, 400, NULL, PROXY_REPLY_TEXT, "http-parser",
        "forward-parse-rejection", true),
    ROW(PROXY_OUT_FORWARD_SCHEME, 400, "unsupported_proxy_scheme", PROXY_REPLY_JSON, "http-parser",
        "forward-parse-rejection", true),
    ROW(PROXY_OUT_POLICY_LOCAL_PORT, 400, "invalid_policy_local_scheme", PROXY_REPLY_JSON, "policy",
        "forward", true),
    ROW(PROXY_OUT_POLICY_LOCAL, 404, "feature_disabled", PROXY_REPLY_JSON, "policy", "forward",
        true),
    ROW_MISSING(PROXY_OUT_FORWARD_DENIED, 403, "policy_denied", PROXY_REPLY_JSON, "policy",
                "forward", "endpoint"),
    ROW(PROXY_OUT_FORWARD_TARGET, 400, "invalid_request_target", PROXY_REPLY_JSON, "l7",
        "forward-l7-parse-rejection", true),
    ROW(PROXY_OUT_FORWARD_L7_DENIED, 403, "policy_denied", PROXY_REPLY_L7, "l7", "forward-l7-deny",
        true),
    ROW(PROXY_OUT_FORWARD_UNSUPPORTED, 403, "unsupported_l7_protocol", PROXY_REPLY_L7, "l7",
        "forward-l7-deny", true),
    /* destinations and upstreams */
    ROW_MISSING(PROXY_OUT_SSRF, 403, "ssrf_denied", PROXY_REPLY_JSON, "ssrf", "ssrf",
                "destination"),
    /* not a policy decision: its own error and stage, a note (no DENIED line) */
    ROW(PROXY_OUT_DNS, 502, "dns_resolution_failed", PROXY_REPLY_JSON, NULL, "dns", false),
    ROW(PROXY_OUT_UPSTREAM_FAILED, 502, "upstream_unreachable", PROXY_REPLY_JSON, "policy",
        "upstream", false),
    /* inspected tunnels */
    ROW(PROXY_OUT_TUNNEL_PROTOCOL, 403, "unsupported_l7_protocol", PROXY_REPLY_JSON, "l7",
        "connect-l7-parse-rejection", true),
    ROW(PROXY_OUT_TUNNEL_HEAD_BAD, 400, NULL, PROXY_REPLY_BARE, "l7", "connect-l7-parse-rejection",
        true),
    ROW(PROXY_OUT_TUNNEL_AUTHORITY, 403, "request_authority_mismatch", PROXY_REPLY_AUTHORITY, "l7",
        "l7", true),
    ROW(PROXY_OUT_TUNNEL_TARGET, 400, "invalid_request_target", PROXY_REPLY_JSON, "l7",
        "connect-l7-parse-rejection", true),
    ROW_MISSING(PROXY_OUT_TUNNEL_SSRF, 403, "ssrf_denied", PROXY_REPLY_JSON, "ssrf", "ssrf",
                "destination"),
    ROW(PROXY_OUT_TUNNEL_L7_DENIED, 403, "policy_denied", PROXY_REPLY_L7, "l7", "l7", true),
    ROW(PROXY_OUT_TUNNEL_UNSUPPORTED, 403, "unsupported_l7_protocol", PROXY_REPLY_L7, "l7", "l7",
        true),
    ROW(PROXY_OUT_TUNNEL_UPSTREAM, 502, "upstream_unreachable", PROXY_REPLY_JSON, "l7", "upstream",
        true),
    /* reloads */
    ROW(PROXY_OUT_RELOAD_CLOSED, 0, NULL, PROXY_REPLY_NONE, "policy", "policy_stale", true),
    /* credential placeholders (proxy_cred.c): refused before the upstream sees a byte */
    ROW(PROXY_OUT_CRED_MISMATCH, 403, "credential_endpoint_mismatch", PROXY_REPLY_MESSAGE,
        "credentials", "credentials", true),
    ROW(PROXY_OUT_CRED_UNAVAILABLE, 500, "credential_unavailable", PROXY_REPLY_MESSAGE,
        "credentials", "credentials", true),
};

const struct proxy_outcome_row *proxy_outcome_row(enum proxy_outcome o)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(rows); i++) {
        if (rows[i].outcome == o) {
            return &rows[i];
        }
    }
    return NULL;
}

size_t proxy_outcome_count(void)
{
    return PV_ARRAY_LEN(rows);
}

const struct proxy_outcome_row *proxy_outcome_at(size_t i)
{
    return i < PV_ARRAY_LEN(rows) ? &rows[i] : NULL;
}
