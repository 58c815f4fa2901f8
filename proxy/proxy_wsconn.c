/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_wsconn.c - a WebSocket session on an inspected route
 *
 * An allowed RFC 6455 upgrade (decided as a GET on its path and query) goes
 * upstream without Sec-WebSocket-Extensions, so no extension (and no
 * compression) is ever negotiated; the upstream's 101 must carry the right
 * Sec-WebSocket-Accept and no extension, or the client gets a 502 instead.
 * After the 101 both directions are parsed frame by frame (proxy_ws.c):
 *
 *  - client text messages are reassembled and decided whole as
 *    WEBSOCKET_TEXT on the upgrade's path and query, against the pinned
 *    policy version and the connected address, before any of their bytes
 *    goes upstream; an allowed one is re-framed as one masked frame with a
 *    fresh random key, a denied one ends the session (1008 to the client, a
 *    close to the upstream); one decision line per message, never its
 *    payload;
 *  - binary frames, pings, pongs and closes are relayed as received once
 *    their framing is checked; server frames likewise;
 *  - a protocol violation by either side closes both with the code it
 *    earns (1002, 1007, 1009) and a note after the upgrade's decision line.
 *
 * docs/proxy.md#websocket.
 */
#include "config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy/proxy_ws.h"

struct proxy_ws_conn {
    char key[25];    /* the client's Sec-WebSocket-Key */
    char accept[29]; /* what the 101 must answer */
    bool active;     /* the 101 was relayed: frames flow */
    bool client_closed;
    bool server_closed;
    struct proxy_ws_parser from_client;
    struct proxy_ws_parser from_server;
    struct proxy_ws_keys keys; /* mask keys of the frames the proxy writes upstream */
    bool graphql; /* the upgrade's endpoint has GraphQL rules: messages are graphql-ws */
    /* the endpoint that granted the upgrade, in the pinned version (updated
     * when a reload re-pins the session); borrowed */
    const struct model_endpoint *endpoint;
    /* the upgrade was allowed only by audit mode: lifecycle messages, which
     * take the upgrade's verdict, get no credential values either */
    bool upgrade_audit;
};

static void ws_finish(struct proxy_conn *c);
static bool endpoint_has_graphql(const struct model_endpoint *e);
static bool endpoint_gql_allow(const struct model_endpoint *e);

void proxy_ws_conn_free(struct proxy_ws_conn *w)
{
    if (w == NULL) {
        return;
    }
    proxy_ws_parser_clear(&w->from_client);
    proxy_ws_parser_clear(&w->from_server);
    free(w);
}

bool proxy_ws_begin(struct proxy_conn *c, const char **why)
{
    struct proxy_ws_conn *w;
    char key[25];

    *why = proxy_ws_check_upgrade(c->cur.req, c->cur.head, key);
    if (*why != NULL) {
        return false;
    }
    w = pv_calloc(1, sizeof(*w));
    if (w == NULL) {
        *why = "out of memory";
        return false;
    }
    memcpy(w->key, key, sizeof(w->key));
    if (!proxy_ws_accept_for(w->key, w->accept)) {
        free(w);
        *why = "cannot compute Sec-WebSocket-Accept";
        return false;
    }
    proxy_ws_conn_free(c->ws);
    c->ws = w;
    return true;
}

/* ---------------------------------------------------------------------------
 * Writing frames
 * ------------------------------------------------------------------------- */

static bool fresh_mask(struct proxy_conn *c, unsigned char key[4])
{
    return proxy_ws_mask_key(&c->ws->keys, key);
}

/* A close frame towards the client (unmasked) or the upstream (masked). */
static void send_close(struct proxy_conn *c, bool to_client, uint16_t code, const char *reason)
{
    unsigned char f[PROXY_WS_MAX_HEAD + PROXY_WS_MAX_CONTROL];
    unsigned char key[4] = {0, 0, 0, 0};
    struct bufferevent *to = to_client ? c->c : c->u;
    size_t n;

    if (to == NULL) {
        return;
    }
    if (!to_client) {
        (void)fresh_mask(c, key); /* on failure the zero key: a close carries no secret */
    }
    n = proxy_ws_close_frame(f, code, reason, to_client ? NULL : key);
    evbuffer_add(bufferevent_get_output(to), f, n);
}

/* Flush both directions, then close the connection. */
static void ws_finish(struct proxy_conn *c)
{
    bool empty = true;

    c->state = PROXY_ST_CLOSING;
    if (c->c != NULL) {
        bufferevent_disable(c->c, EV_READ);
        bufferevent_setwatermark(c->c, EV_WRITE, 0, 0);
        bufferevent_enable(c->c, EV_WRITE);
        empty = evbuffer_get_length(bufferevent_get_output(c->c)) == 0;
    }
    if (c->u != NULL) {
        bufferevent_disable(c->u, EV_READ);
        bufferevent_setwatermark(c->u, EV_WRITE, 0, 0);
        bufferevent_enable(c->u, EV_WRITE);
        empty = empty && evbuffer_get_length(bufferevent_get_output(c->u)) == 0;
    }
    if (empty) {
        proxy_conn_kill(c);
    }
}

/* ---------------------------------------------------------------------------
 * The handshake's answer
 * ------------------------------------------------------------------------- */

/* Best effort: put a close frame on the upstream socket now (the refusal
 * below drops the upstream at once, before its buffer would flush). */
static void close_upstream_now(struct proxy_conn *c, uint16_t code)
{
    unsigned char f[PROXY_WS_MAX_HEAD + PROXY_WS_MAX_CONTROL];
    unsigned char key[4] = {0, 0, 0, 0};
    size_t n;

    if (c->u == NULL || evbuffer_get_length(bufferevent_get_output(c->u)) != 0) {
        return;
    }
    (void)fresh_mask(c, key);
    n = proxy_ws_close_frame(f, code, "proxy: handshake refused", key);
    if (c->u_tls) {
        SSL *ssl = bufferevent_openssl_get_ssl(c->u);
        if (ssl != NULL) {
            (void)SSL_write(ssl, f, (int)n);
        }
        return;
    }
    (void)send(bufferevent_getfd(c->u), f, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void proxy_ws_upgraded(struct proxy_conn *c, size_t head_len)
{
    struct evbuffer *in = bufferevent_get_input(c->u);
    const char *head = (const char *)evbuffer_pullup(in, (ssize_t)head_len);
    struct proxy_ws_conn *w = c->ws;
    bool ext = false;
    const char *why = proxy_ws_check_101(head, head_len, w->accept, &ext);
    char detail[300];

    if (why != NULL) {
        snprintf(detail, sizeof(detail), "WebSocket handshake with %s:%u failed: %s", c->host,
                 (unsigned)c->port, why);
        /* the upstream answered 101: to it the session is open */
        close_upstream_now(c, PROXY_WS_CLOSE_PROTOCOL);
        proxy_conn_outcome(c, PROXY_OUT_UPSTREAM_FAILED, NULL, detail, NULL);
        return;
    }
    evbuffer_remove_buffer(in, bufferevent_get_output(c->c), head_len);
    w->active = true;
    c->resp_started = true;
    c->state = PROXY_ST_WS;
    proxy_ws_parser_init(&w->from_client, PROXY_WS_FROM_CLIENT, true);
    proxy_ws_parser_init(&w->from_server, PROXY_WS_FROM_SERVER, false);
    bufferevent_set_timeouts(c->c, NULL, NULL);
    bufferevent_set_timeouts(c->u, NULL, NULL);
    bufferevent_setwatermark(c->u, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_setwatermark(c->c, EV_WRITE, RELAY_HWM / 2, 0);
    bufferevent_enable(c->c, EV_READ | EV_WRITE);
    bufferevent_enable(c->u, EV_READ | EV_WRITE);
    if (proxy_conn_stale(c)) {
        /* a reload came while the upgrade waited for its 101: the session
         * never ends at a response boundary, so it adopts (or is refused
         * by) the current version now, before any message is decided */
        proxy_ws_policy_changed(c);
        if (c->dead || c->state != PROXY_ST_WS) {
            return;
        }
    }
    /* frames may have arrived with the 101, or before it from the client */
    proxy_ws_pump(c, false);
    if (!c->dead && c->state == PROXY_ST_WS) {
        proxy_ws_pump(c, true);
    }
}

/* ---------------------------------------------------------------------------
 * Client text messages
 * ------------------------------------------------------------------------- */

/* The one place an allowed client text message can be changed before it is
 * forwarded (every allowed message passes here: plain WEBSOCKET_TEXT,
 * GraphQL operations and graphql-ws lifecycle messages alike): '*msg'
 * ('*len' bytes, unmasked, owned by the parser) may be replaced by a buffer
 * the function owns until its next call; 'v' is the message's verdict, whose
 * 'endpoint' is the endpoint that granted it (for a lifecycle message, the
 * upgrade's). Credential placeholders are rewritten here
 * (websocket_credential_rewrite; proxy_credgate.c). False refuses the
 * message: the session ends with 1008 and the DENIED line carries v->detail. */
static bool outbound_text(struct proxy_conn *c, struct proxy_verdict *v, unsigned char **msg,
                          size_t *len)
{
    return proxy_cred_ws_text(c, v, msg, len, v->detail, sizeof(v->detail));
}

/* Re-frame an allowed message as one FIN text frame with a fresh mask. */
static bool forward_text(struct proxy_conn *c, unsigned char *msg, size_t len)
{
    unsigned char head[PROXY_WS_MAX_HEAD];
    unsigned char key[4];
    size_t hl;
    struct evbuffer *out = bufferevent_get_output(c->u);

    if (!fresh_mask(c, key)) {
        return false;
    }
    hl = proxy_ws_frame_head(head, PROXY_WS_OP_TEXT, len, key);
    proxy_ws_mask(msg, len, key, 0);
    return evbuffer_add(out, head, hl) == 0 && evbuffer_add(out, msg, len) == 0;
}

/* A refusal that is not the model's (a graphql-ws message that is not an
 * operation, or a document the reader refuses): a verdict in the same
 * shape, so that it leaves the same decision line. */
static void refuse(struct proxy_conn *c, struct proxy_verdict *v, const char *what, const char *why)
{
    memset(v, 0, sizeof(*v));
    v->reason = MODEL_REASON_L7_NOT_PERMITTED;
    v->route = MODEL_ROUTE_INSPECTED;
    v->grant = true; /* the connection is granted: the policy names the rule below */
    v->policy = c->policy_key[0] != '\0' ? c->policy_key : "-";
    v->binary = c->id != NULL && c->id->n > 0 ? c->id->path[0] : "-";
    snprintf(v->detail, sizeof(v->detail), "%s%s", what, why);
}

/* The verdict of one graphql-ws message (docs/semantics.md#graphql-ws):
 * lifecycle messages pass undecided (false: no decision line), operations
 * are read and decided as WEBSOCKET_TEXT carrying the operation, anything
 * else is refused. */
static bool decide_graphql(struct proxy_conn *c, const unsigned char *msg, size_t len,
                           struct proxy_verdict *v, struct model_gql_op *opp)
{
    struct proxy_ws_gql g;
    struct model_gql_op op;
    struct proxy_decide_opts o = c->srv->opts;
    char err[160];

    if (!proxy_ws_gql_classify((const char *)msg, len, &g)) {
        refuse(c, v, "", "out of memory");
        return true;
    }
    switch (g.kind) {
    case PROXY_WS_GQL_CONTROL:
        proxy_ws_gql_clear(&g);
        if (!endpoint_gql_allow(c->ws->endpoint)) {
            /* GraphQL deny rules only: the endpoint grants by its method
             * rules, and a lifecycle message is the plain text message it
             * was before the deny rule (docs/semantics.md#graphql-ws-rules) */
            proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, "WEBSOCKET_TEXT",
                              c->cur.target, c->cur.target_len, &c->u_ip, &c->srv->opts, v);
            return true;
        }
        memset(v, 0, sizeof(*v));
        v->allow = true;
        return false;
    case PROXY_WS_GQL_INVALID:
        refuse(c, v, "GraphQL-over-WebSocket message refused: ", g.why);
        proxy_ws_gql_clear(&g);
        return true;
    case PROXY_WS_GQL_OPERATION:
        break;
    }
    memset(&op, 0, sizeof(op));
    if (g.query != NULL) {
        if (!pv_ok(model_gql_read(g.query, g.query_len, g.operation_name, &op, err, sizeof(err)))) {
            /* the reader may quote the token it found: never a byte of the
             * message in the log, so only "line:col: expected X" is kept */
            char *found = strstr(err, ", found ");
            if (found != NULL) {
                *found = '\0';
            }
            refuse(c, v, "GraphQL document refused: ", err);
            model_gql_op_clear(&op);
            proxy_ws_gql_clear(&g);
            return true;
        }
    } else {
        op.persisted_id = g.persisted_id; /* steals */
        g.persisted_id = NULL;
    }
    /* the caller keeps the operation until the decision line names it
     * (proxy_verdict.gql_op) and clears it */
    *opp = op;
    o.gql = opp;
    proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, "WEBSOCKET_TEXT",
                      c->cur.target, c->cur.target_len, &c->u_ip, &o, v);
    proxy_ws_gql_clear(&g);
    return true;
}

/* Decide one complete client text message; false when the session ended. */
static bool decide_text(struct proxy_conn *c, unsigned char *msg, size_t len)
{
    struct proxy_verdict v;
    char path[CANON_MAX];
    char reason[PROXY_WS_MAX_CONTROL];
    bool decided = true;
    struct model_gql_op op;

    memset(&op, 0, sizeof(op));
    if (c->ws->graphql) {
        decided = decide_graphql(c, msg, len, &v, &op);
    } else {
        proxy_decide_dest(c->pol, c->id, c->host, strlen(c->host), c->port, "WEBSOCKET_TEXT",
                          c->cur.target, c->cur.target_len, &c->u_ip, &c->srv->opts, &v);
    }
    if (v.allow && v.endpoint == NULL) {
        /* a lifecycle message: the upgrade's endpoint and audit flag */
        v.endpoint = c->ws->endpoint;
        v.audit = c->ws->upgrade_audit;
    }
    if (v.allow) {
        char before[sizeof(v.detail)];
        memcpy(before, v.detail, sizeof(before));
        if (!outbound_text(c, &v, &msg, &len)) {
            v.allow = false;
            v.audit = false;
            if (memcmp(before, v.detail, sizeof(before)) == 0) {
                snprintf(v.detail, sizeof(v.detail), "message refused before forwarding");
            }
            decided = true;
        }
    }
    proxy_conn_cur_path(c, path, sizeof(path));
    if (decided) {
        /* one line per decided message; graphql-ws lifecycle messages are
         * not decided and leave none (their payload is never logged) */
        proxy_conn_log_verdict(c, &v, "l7", "WEBSOCKET_TEXT", path, "websocket");
    }
    v.gql_op = NULL;
    model_gql_op_clear(&op);
    if (v.allow) {
        if (!forward_text(c, msg, len)) {
            send_close(c, true, PROXY_WS_CLOSE_INTERNAL, "proxy: internal error");
            send_close(c, false, PROXY_WS_CLOSE_INTERNAL, "proxy: internal error");
            ws_finish(c);
            return false;
        }
        return true;
    }
    snprintf(reason, sizeof(reason), "policy denied WEBSOCKET_TEXT on %.80s", path);
    send_close(c, true, PROXY_WS_CLOSE_POLICY, reason);
    send_close(c, false, PROXY_WS_CLOSE_GOING_AWAY, "proxy: session ended");
    ws_finish(c);
    return false;
}

/* A binary message on a GraphQL-over-WebSocket session: graphql-ws servers
 * read a binary frame's bytes as a text message, so an operation sent that
 * way would reach them undecided. Such a session carries text only; the
 * first binary frame ends it with 1008 and a DENIED line
 * (docs/semantics.md#ws-graphql). */
static void refuse_binary(struct proxy_conn *c)
{
    struct proxy_verdict v;
    char path[CANON_MAX];

    refuse(c, &v, "GraphQL-over-WebSocket message refused: ",
           "a binary message (graphql-ws messages are text)");
    proxy_conn_cur_path(c, path, sizeof(path));
    proxy_conn_log_verdict(c, &v, "l7", "WEBSOCKET_BINARY", path, "websocket");
    send_close(c, true, PROXY_WS_CLOSE_POLICY,
               "policy denied a binary message on a GraphQL session");
    send_close(c, false, PROXY_WS_CLOSE_GOING_AWAY, "proxy: session ended");
    ws_finish(c);
}

/* ---------------------------------------------------------------------------
 * Relay
 * ------------------------------------------------------------------------- */

static void protocol_error(struct proxy_conn *c, bool client_side, const struct proxy_ws_event *ev)
{
    char reason[PROXY_WS_MAX_CONTROL];

    proxy_log_note(c->srv->log, "websocket %s:%u: %s protocol error, closed with %u: %s", c->host,
                   (unsigned)c->port, client_side ? "client" : "upstream", (unsigned)ev->code,
                   ev->why);
    proxy_server_log_touch(c->srv);
    snprintf(reason, sizeof(reason), "proxy: %s", ev->why);
    send_close(c, true, ev->code, reason);
    send_close(c, false, ev->code, reason);
    ws_finish(c);
}

void proxy_ws_pump(struct proxy_conn *c, bool client_side)
{
    struct proxy_ws_conn *w = c->ws;
    struct bufferevent *from = client_side ? c->c : c->u;
    struct bufferevent *to = client_side ? c->u : c->c;
    struct proxy_ws_parser *p = client_side ? &w->from_client : &w->from_server;
    struct evbuffer *in;
    struct evbuffer *out;

    if (c->dead || c->state != PROXY_ST_WS || from == NULL || to == NULL) {
        return;
    }
    in = bufferevent_get_input(from);
    out = bufferevent_get_output(to);
    while (evbuffer_get_length(in) > 0) {
        struct proxy_ws_event ev;
        size_t avail = evbuffer_get_length(in);
        size_t n = avail < PROXY_WS_MAX_HEAD ? avail : PROXY_WS_MAX_HEAD;
        const unsigned char *buf;
        enum proxy_ws_kind k;

        if (evbuffer_get_length(out) >= RELAY_HWM) {
            bufferevent_disable(from, EV_READ); /* released by the write callback */
            return;
        }
        buf = evbuffer_pullup(in, (ssize_t)n);
        k = proxy_ws_parse(p, buf, n, &ev);
        if (k == PROXY_WS_MORE && ev.need > n) {
            if (avail < ev.need) {
                return; /* the rest of the frame is on its way */
            }
            buf = evbuffer_pullup(in, (ssize_t)ev.need);
            k = proxy_ws_parse(p, buf, ev.need, &ev);
        }
        switch (k) {
        case PROXY_WS_MORE:
            return;
        case PROXY_WS_ERROR:
            protocol_error(c, client_side, &ev);
            return;
        case PROXY_WS_TEXT:
            if (client_side) {
                evbuffer_drain(in, ev.frame_len);
                if (!decide_text(c, p->msg, ev.payload_len)) {
                    return;
                }
                continue;
            }
            break;
        case PROXY_WS_FRAGMENT:
            if (client_side && ev.text) {
                /* held until the message is complete and decided */
                evbuffer_drain(in, ev.frame_len);
                continue;
            }
            if (client_side && w->graphql && ev.opcode == PROXY_WS_OP_BINARY) {
                refuse_binary(c);
                return;
            }
            break;
        case PROXY_WS_CONTROL:
            if (ev.opcode == PROXY_WS_OP_CLOSE) {
                *(client_side ? &w->client_closed : &w->server_closed) = true;
            }
            break;
        }
        /* relayed as received */
        evbuffer_remove_buffer(in, out, ev.frame_len);
        if (w->client_closed && w->server_closed) {
            ws_finish(c); /* the close handshake is complete */
            return;
        }
    }
}

void proxy_ws_side_closed(struct proxy_conn *c, bool client_side)
{
    struct proxy_ws_conn *w = c->ws;

    proxy_ws_pump(c, client_side);
    if (c->dead || c->state != PROXY_ST_WS) {
        return;
    }
    /* the side went away without (or after) its close: tell the other one */
    if (!(client_side ? w->client_closed : w->server_closed)) {
        send_close(c, !client_side, PROXY_WS_CLOSE_GOING_AWAY, "proxy: peer went away");
    }
    if (client_side) {
        c->c_eof = true;
    }
    ws_finish(c);
}

/* After a reload: the session lives on if the current version still allows
 * its upgrade on an inspected route (and then decides its messages), else
 * it ends with 1008. */
void proxy_ws_policy_changed(struct proxy_conn *c)
{
    struct proxy_verdict v;
    struct proxy_decide_opts o = c->srv->opts;

    proxy_decide_dest(c->srv->policy, c->id, c->host, strlen(c->host), c->port, "GET",
                      c->cur.target, c->cur.target_len, &c->u_ip, &o, &v);
    if (v.allow && v.route == MODEL_ROUTE_INSPECTED) {
        proxy_policy_unref(c->pol);
        c->pol = proxy_policy_ref(c->srv->policy);
        c->ws->graphql = endpoint_has_graphql(v.endpoint);
        c->ws->endpoint = v.endpoint;
        c->ws->upgrade_audit = v.audit;
        return;
    }
    proxy_log_note(c->srv->log, "websocket %s:%u: closed after policy reload: %s", c->host,
                   (unsigned)c->port, v.detail);
    proxy_server_log_touch(c->srv);
    send_close(c, true, PROXY_WS_CLOSE_POLICY, "policy changed");
    send_close(c, false, PROXY_WS_CLOSE_GOING_AWAY, "proxy: session ended");
    ws_finish(c);
}

/* Does endpoint 'e' (borrowed) take graphql-ws messages: a websocket
 * endpoint with a GraphQL rule among its allow or deny rules
 * (docs/semantics.md#graphql-ws), or a graphql endpoint, whose GET query
 * can grant an upgrade: its session is read as graphql-ws too, so a binary
 * message there is refused rather than relayed undecided? */
static bool endpoint_has_graphql(const struct model_endpoint *e)
{
    struct model_endpoint_view ev;
    struct model_l7rule_view rv;

    if (e == NULL) {
        return false;
    }
    model_endpoint_view(e, &ev);
    if (ev.proto == MODEL_PROTO_GRAPHQL) {
        return true;
    }
    if (ev.proto != MODEL_PROTO_WEBSOCKET) {
        return false;
    }
    for (size_t i = 0; i < ev.nallow; i++) {
        model_endpoint_allow_rule(e, i, &rv);
        if (rv.has_other) {
            return true;
        }
    }
    for (size_t i = 0; i < ev.ndeny; i++) {
        model_endpoint_deny_rule(e, i, &rv);
        if (rv.has_other) {
            return true;
        }
    }
    return false;
}

/* Does endpoint 'e' (borrowed) grant operations by GraphQL allow rules: a
 * graphql endpoint, or a websocket endpoint with a GraphQL allow rule? One
 * with GraphQL deny rules only grants every message by its method rules
 * (docs/semantics.md#graphql-ws-rules). */
static bool endpoint_gql_allow(const struct model_endpoint *e)
{
    struct model_endpoint_view ev;
    struct model_l7rule_view rv;

    if (e == NULL) {
        return false;
    }
    model_endpoint_view(e, &ev);
    if (ev.proto == MODEL_PROTO_GRAPHQL) {
        return true;
    }
    for (size_t i = 0; ev.proto == MODEL_PROTO_WEBSOCKET && i < ev.nallow; i++) {
        model_endpoint_allow_rule(e, i, &rv);
        if (rv.has_other) {
            return true;
        }
    }
    return false;
}

/* An upgrade on an inspected route whose GET the policy allows: a valid
 * WebSocket handshake goes on (true); any other upgrade is refused as
 * before, and an invalid handshake with its reason (false: the outcome is
 * written). */
bool proxy_ws_admit(struct proxy_conn *c, struct proxy_verdict *v, enum proxy_outcome o)
{
    const char *why = NULL;

    if (!proxy_ws_is_upgrade(c->cur.req, c->cur.head)) {
        proxy_tunnel_deny_upgrade(c, v, o);
        return false;
    }
    if (!proxy_ws_begin(c, &why)) {
        v->allow = false;
        v->loopback_exception = false;
        v->reason = MODEL_REASON_L7_UNSUPPORTED;
        snprintf(v->detail, sizeof(v->detail), "invalid WebSocket upgrade: %s", why);
        proxy_conn_outcome(c, o, v, v->detail, NULL);
        return false;
    }
    c->ws->graphql = endpoint_has_graphql(v->endpoint);
    c->ws->endpoint = v->endpoint;
    c->ws->upgrade_audit = v->audit;
    return true;
}
