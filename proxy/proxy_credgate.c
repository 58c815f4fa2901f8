/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_credgate.c - credential placeholders on a connection's requests
 *
 * The glue between the pure rewriter (proxy_cred.c) and the request path
 * (proxy_relay.c, proxy_tunnel.c): a target holding a placeholder is
 * decided and logged in its redacted form; after an allowing decision and
 * before its decision line, the gate rewrites the target and the header
 * fields for the upstream, or refuses the request with exactly one
 * decision line and the reference's credential body; bodies of endpoints
 * with request_body_credential_rewrite (and small text bodies elsewhere,
 * to refuse placeholders in them) are buffered and rewritten before the
 * head goes, so no byte reaches the upstream before the verdict.
 */
#include "config.h"

#include <event2/buffer.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "proxy/proxy_int.h"

/* ===========================================================================
 * Requests on a connection (proxy_relay.c and proxy_tunnel.c call these)
 * ========================================================================= */

void proxy_cred_req_free(struct proxy_cred_req *q)
{
    if (q == NULL) {
        return;
    }
    for (size_t i = 0; i < PROXY_MAX_HEADERS; i++) {
        if (q->hdr[i] != NULL) {
            OPENSSL_cleanse(q->hdr[i], q->hlen[i]);
            free(q->hdr[i]);
        }
    }
    if (q->target != NULL) {
        OPENSSL_cleanse(q->target, strlen(q->target));
        free(q->target);
    }
    if (q->out_target != NULL) {
        OPENSSL_cleanse(q->out_target, strlen(q->out_target));
        free(q->out_target);
    }
    if (q->bodybuf != NULL) {
        evbuffer_free(q->bodybuf);
    }
    free(q->line_path);
    free(q);
}

static struct proxy_cred_req *req_of(struct proxy_conn *c)
{
    if (c->cur.cred == NULL) {
        c->cur.cred = pv_calloc(1, sizeof(*c->cur.cred));
    }
    return c->cur.cred;
}

/* Before the decision: a target with placeholders is decided (and logged)
 * in its redacted form; the form with values waits for the gate. */
void proxy_cred_prepare_target(struct proxy_conn *c)
{
    struct pv_dynbuf up;
    struct pv_dynbuf red;
    struct proxy_cred_result r;
    struct proxy_cred_req *q;
    enum proxy_cred_status st;

    if (c->cur.target == NULL || !proxy_cred_has_marker(c->cur.target, c->cur.target_len)) {
        return;
    }
    pv_dynbuf_init(&up, c->cur.target_len + PROXY_CRED_GROWTH);
    pv_dynbuf_init(&red, c->cur.target_len + PROXY_CRED_GROWTH);
    st =
        proxy_cred_target(c->srv->creds, c->nhost, c->cur.target, c->cur.target_len, &up, &red, &r);
    q = req_of(c);
    if (q == NULL || red.failed || red.buf == NULL) {
        if (q != NULL) {
            q->any = true;
            q->target_st.st = PROXY_CRED_TOOBIG;
            snprintf(q->target_st.why, sizeof(q->target_st.why), "out of memory");
        }
        if (up.buf != NULL) {
            OPENSSL_cleanse(up.buf, up.len);
        }
        pv_dynbuf_free(&up);
        pv_dynbuf_free(&red);
        return;
    }
    q->any = true;
    q->target_st = r;
    if (st == PROXY_CRED_NONE) {
        /* has_marker saw what the rewriter did not: never forward it */
        q->target_st.st = PROXY_CRED_UNAVAILABLE;
        snprintf(q->target_st.why, sizeof(q->target_st.why), "unresolvable credential marker");
    }
    free(c->cur.target);
    c->cur.target_len = red.len;
    c->cur.target = pv_dynbuf_take(&red, NULL);
    if (st == PROXY_CRED_REWRITTEN) {
        q->target = pv_dynbuf_take(&up, NULL);
    } else if (up.buf != NULL) {
        OPENSSL_cleanse(up.buf, up.len);
    }
    pv_dynbuf_free(&up);
}

static bool refuse_req(struct proxy_conn *c, enum proxy_cred_status st, const char *why)
{
    bool mismatch = st == PROXY_CRED_MISMATCH;

    proxy_conn_outcome(c, mismatch ? PROXY_OUT_CRED_MISMATCH : PROXY_OUT_CRED_UNAVAILABLE, NULL,
                       mismatch ? "Credential is not authorized for this request endpoint"
                                : "Credential placeholder could not be resolved",
                       why);
    return false;
}

/* Forwarded fields the gate looks at: hop-by-hop ones, Host and framing
 * fields never reach the upstream (write_head). */
static bool forwarded(const struct proxy_request *r, const char *h, size_t i)
{
    const struct proxy_header *f = &r->hdr[i];
    const char *n = h + f->name.off;

    return !f->hop && (int)i != r->host && !proxy_http_name_is(n, f->name.len, "content-length") &&
           !proxy_http_name_is(n, f->name.len, "transfer-encoding");
}

static size_t slashes(const char *p, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; p != NULL && i < n; i++) {
        k += p[i] == '/';
    }
    return k;
}

static bool body_rewritable(const struct proxy_request *r, const char *h)
{
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        if (proxy_http_name_is(h + f->name.off, f->name.len, "content-type")) {
            return proxy_cred_body_type(h + f->value.off, f->value.len);
        }
    }
    return false;
}

/* long: the placeholder gate in order: find placeholders, refuse where no value may go, then
 * rewrite headers, target and body */
bool proxy_cred_gate(struct proxy_conn *c, const struct proxy_verdict *v)
{
    const struct proxy_request *r = c->cur.req;
    const char *h = c->cur.head;
    const struct proxy_creds *s = c->srv->creds;
    struct proxy_cred_req *q = c->cur.cred;
    bool any = q != NULL && q->any;
    bool typed = r->framing != PROXY_BODY_NONE && body_rewritable(r, h);
    /* audit mode lets through what the rules deny: no value goes there */
    bool body = v->body_cred_rewrite && typed && !v->audit;
    /* without the flag a store still looks at small text bodies on
     * inspected routes: a placeholder there is refused, not forwarded */
    bool scan = !body && s != NULL && typed && v->route == MODEL_ROUTE_INSPECTED &&
                r->framing == PROXY_BODY_LENGTH && r->content_length > 0 &&
                r->content_length <= PROXY_CRED_BODY_MAX;

    /* a method is a token: the alias marker fits in one, and a method is
     * never rewritten, so it would reach the upstream as written */
    if (c->cur.method != NULL && proxy_cred_has_marker(c->cur.method, strlen(c->cur.method))) {
        return refuse_req(c, PROXY_CRED_UNAVAILABLE,
                          "credential marker in the request method (a method is never rewritten)");
    }
    for (size_t i = 0; i < r->nhdr && !any; i++) {
        const struct proxy_header *f = &r->hdr[i];
        any = forwarded(r, h, i) && proxy_cred_header_has_marker(h + f->name.off, f->name.len,
                                                                 h + f->value.off, f->value.len);
    }
    if (!any && !body && !scan) {
        return true;
    }
    if (any && v->audit) {
        return refuse_req(c, PROXY_CRED_MISMATCH,
                          "credential placeholders are not rewritten in requests allowed only "
                          "by audit mode");
    }
    if (any && v->route != MODEL_ROUTE_INSPECTED) {
        return refuse_req(c, PROXY_CRED_MISMATCH,
                          "credential placeholders are rewritten only on inspected routes; this "
                          "request's route is opaque");
    }
    q = req_of(c);
    if (q == NULL) {
        return refuse_req(c, PROXY_CRED_TOOBIG, "out of memory");
    }
    if (q->target_st.st != PROXY_CRED_NONE && q->target_st.st != PROXY_CRED_REWRITTEN) {
        return refuse_req(c, q->target_st.st, q->target_st.why);
    }
    for (size_t i = 0; i < r->nhdr; i++) {
        const struct proxy_header *f = &r->hdr[i];
        struct pv_dynbuf out;
        struct proxy_cred_result res;
        enum proxy_cred_status st;
        if (!forwarded(r, h, i) || !proxy_cred_header_has_marker(h + f->name.off, f->name.len,
                                                                 h + f->value.off, f->value.len)) {
            continue;
        }
        pv_dynbuf_init(&out, f->value.len + PROXY_CRED_GROWTH);
        st = proxy_cred_header(s, c->nhost, h + f->name.off, f->name.len, h + f->value.off,
                               f->value.len, false, &out, &res);
        if (st != PROXY_CRED_REWRITTEN) {
            if (out.buf != NULL) {
                OPENSSL_cleanse(out.buf, out.len);
            }
            pv_dynbuf_free(&out);
            if (st == PROXY_CRED_NONE) {
                return refuse_req(c, PROXY_CRED_UNAVAILABLE, "unresolvable credential marker");
            }
            return refuse_req(c, st, res.why);
        }
        q->hlen[i] = out.len;
        q->hdr[i] = pv_dynbuf_take(&out, NULL);
    }
    if (q->target != NULL) {
        char canon[CANON_MAX];
        size_t cl = 0;
        const char *qs = NULL;
        size_t ql = 0;
        bool slash = false;
        enum model_target_status ts = model_path_canonicalize(q->target, strlen(q->target), canon,
                                                              sizeof(canon), &cl, &qs, &ql, &slash);
        const char *qm = strchr(q->target, '?');
        if ((ts != MODEL_TARGET_OK && ts != MODEL_TARGET_ENCODED_SLASH) || cl >= sizeof(canon)) {
            OPENSSL_cleanse(canon, sizeof(canon));
            return refuse_req(c, PROXY_CRED_UNAVAILABLE,
                              "the request-target with the credential does not canonicalise");
        }
        /* the upstream must get the path that was decided: a value that
         * canonicalises into another shape (a "." or ".." segment) is
         * refused */
        if (slashes(canon, cl) != slashes(c->cur.out_target, c->cur.canon_len)) {
            OPENSSL_cleanse(canon, sizeof(canon));
            return refuse_req(c, PROXY_CRED_UNAVAILABLE,
                              "the credential value changes the request path's segments");
        }
        q->out_target = pv_malloc(cl + (qm != NULL ? strlen(qm) : 0) + 1);
        if (q->out_target == NULL) {
            OPENSSL_cleanse(canon, sizeof(canon));
            return refuse_req(c, PROXY_CRED_TOOBIG, "out of memory");
        }
        memcpy(q->out_target, canon, cl);
        snprintf(q->out_target + cl, (qm != NULL ? strlen(qm) : 0) + 1, "%s", qm != NULL ? qm : "");
        OPENSSL_cleanse(canon, sizeof(canon));
    }
    if (body) {
        if (r->framing == PROXY_BODY_CHUNKED) {
            return refuse_req(c, PROXY_CRED_MISMATCH,
                              "chunked request bodies are not buffered for credential rewrite "
                              "(send Content-Length)");
        }
        if (r->content_length > PROXY_CRED_BODY_MAX) {
            return refuse_req(c, PROXY_CRED_MISMATCH,
                              "request body over 262144 bytes on an endpoint with "
                              "request_body_credential_rewrite");
        }
        q->body = r->content_length > 0;
        q->body_rewrite = true;
    }
    q->body = q->body || scan;
    return true;
}

bool proxy_cred_defer_line(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                           const char *method, const char *path, const char *stage)
{
    struct proxy_cred_req *q = c->cur.cred;

    if (q == NULL || !q->body || q->line_done || q->line_held || !v->allow) {
        return false;
    }
    q->line_path = path != NULL ? pv_strdup(path) : NULL;
    if (path != NULL && q->line_path == NULL) {
        return false; /* no memory: write it now */
    }
    q->line_held = true;
    q->line_v = *v;
    q->line_engine = engine;
    q->line_stage = stage;
    q->line_method = method;
    return true;
}

/* The body passed: the held line goes out, before anything is forwarded. */
static void release_line(struct proxy_conn *c, struct proxy_cred_req *q)
{
    if (!q->line_held || q->line_done) {
        return;
    }
    q->line_done = true;
    proxy_conn_log_verdict(c, &q->line_v, q->line_engine, q->line_method, q->line_path,
                           q->line_stage);
}

/* The buffered body is complete: rewrite it; then the head (with the new
 * Content-Length) and the body go upstream together. False after a
 * refusal. */
bool proxy_cred_body_ready(struct proxy_conn *c, struct pv_dynbuf *out)
{
    struct proxy_cred_req *q = c->cur.cred;
    size_t n = evbuffer_get_length(q->bodybuf);
    const char *b = (const char *)evbuffer_pullup(q->bodybuf, -1);
    struct proxy_cred_result r;
    enum proxy_cred_status st;

    if (!q->body_rewrite) {
        /* scanned only: a marker is refused, anything else goes unchanged */
        if (proxy_cred_has_marker(b != NULL ? b : "", n)) {
            return refuse_req(c, PROXY_CRED_MISMATCH,
                              "credential placeholder in a request body on an endpoint without "
                              "request_body_credential_rewrite");
        }
        pv_dynbuf_put(out, b != NULL ? b : "", n);
        if (out->failed) {
            return refuse_req(c, PROXY_CRED_TOOBIG, "out of memory");
        }
        release_line(c, q);
        return true;
    }
    st = proxy_cred_body(c->srv->creds, c->nhost, b != NULL ? b : "", n, out, &r);
    if (st != PROXY_CRED_NONE && st != PROXY_CRED_REWRITTEN) {
        if (out->buf != NULL) {
            OPENSSL_cleanse(out->buf, out->len);
        }
        return refuse_req(c, st, r.why);
    }
    release_line(c, q);
    return true;
}

/* A client WebSocket text message on an allowed session. The rewritten
 * message lives in one buffer of the event loop until the next call (the
 * relay frames it at once). */
bool proxy_cred_ws_text(struct proxy_conn *c, const struct proxy_verdict *v, unsigned char **msg,
                        size_t *len, char *why, size_t wl)
{
    static struct pv_dynbuf out;
    struct proxy_cred_result r;
    enum proxy_cred_status st;

    if (out.buf != NULL) {
        OPENSSL_cleanse(out.buf, out.len);
    }
    pv_dynbuf_free(&out);
    if (!proxy_cred_has_marker((const char *)*msg, *len)) {
        return true;
    }
    if (v->audit) {
        snprintf(why, wl,
                 "credential placeholders are not rewritten in messages allowed only by audit "
                 "mode");
        return false;
    }
    /* the granting endpoint's flag (a lifecycle message: the upgrade's) */
    if (!v->ws_cred_rewrite && !model_endpoint_ws_cred_rewrite(v->endpoint)) {
        snprintf(why, wl,
                 "credential placeholder in a WebSocket text message on an endpoint without "
                 "websocket_credential_rewrite");
        return false;
    }
    pv_dynbuf_init(&out, *len + PROXY_CRED_GROWTH);
    st = proxy_cred_rewrite(c->srv->creds, c->nhost, (const char *)*msg, *len, false, &out, &r);
    if (st != PROXY_CRED_REWRITTEN) {
        snprintf(why, wl, "%s", st == PROXY_CRED_NONE ? "unresolvable credential marker" : r.why);
        if (out.buf != NULL) {
            OPENSSL_cleanse(out.buf, out.len);
        }
        pv_dynbuf_free(&out);
        return false;
    }
    *msg = (unsigned char *)out.buf;
    *len = out.len;
    return true;
}
