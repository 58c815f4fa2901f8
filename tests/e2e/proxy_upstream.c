/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_upstream.c - the origin server behind proviso-proxy in e2e tests
 *
 *   proxy_upstream --port-file FILE [--cert CRT --key KEY] [--log FILE]
 *
 * Listens on 127.0.0.1 (free ports) with plain HTTP and, given a certificate,
 * HTTPS; writes "HTTP_PORT HTTPS_PORT\n" to FILE when ready. Every request
 * is answered 200 with a text body that echoes what arrived, so tests can
 * assert the bytes the proxy sent upstream:
 *
 *   upstream: plain|tls
 *   request: METHOD URI
 *   header: Name: value          (one line per field, in order)
 *   body-bytes: N
 *
 * With --log every request also appends "METHOD URI\n" to FILE (what the
 * upstream received, for tests that must prove a request never arrived).
 *
 * Special paths: /bulk?n=N streams N bytes (Content-Length), /close answers
 * with Connection: close, /status/NNN answers with that status.
 * SIGTERM exits 0.
 */
#include "config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <getopt.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "common/pv.h"

#define BULK_CHUNK (256u * 1024u)

static char zeros[BULK_CHUNK];

struct bulk {
    struct evhttp_request *req;
    uint64_t left;
};

static const char *method_name(enum evhttp_cmd_type t)
{
    switch (t) {
    case EVHTTP_REQ_GET:
        return "GET";
    case EVHTTP_REQ_POST:
        return "POST";
    case EVHTTP_REQ_HEAD:
        return "HEAD";
    case EVHTTP_REQ_PUT:
        return "PUT";
    case EVHTTP_REQ_DELETE:
        return "DELETE";
    case EVHTTP_REQ_OPTIONS:
        return "OPTIONS";
    case EVHTTP_REQ_TRACE:
        return "TRACE";
    case EVHTTP_REQ_CONNECT:
        return "CONNECT";
    case EVHTTP_REQ_PATCH:
        return "PATCH";
    default:
        return "OTHER";
    }
}

static void bulk_next(struct evhttp_connection *conn, void *arg)
{
    struct bulk *b = arg;
    struct evbuffer *out;
    size_t n;

    (void)conn;
    if (b->left == 0) {
        evhttp_send_reply_end(b->req);
        free(b);
        return;
    }
    n = b->left < BULK_CHUNK ? (size_t)b->left : BULK_CHUNK;
    b->left -= n;
    out = evbuffer_new();
    if (out == NULL) {
        evhttp_send_reply_end(b->req);
        free(b);
        return;
    }
    evbuffer_add_reference(out, zeros, n, NULL, NULL);
    evhttp_send_reply_chunk_with_cb(b->req, out, bulk_next, b);
    evbuffer_free(out);
}

static FILE *req_log;

static void handle(struct evhttp_request *req, void *arg)
{
    const char *kind = arg;
    const char *uri = evhttp_request_get_uri(req);
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    struct evkeyvalq *outh = evhttp_request_get_output_headers(req);
    struct evbuffer *b;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));

    if (req_log != NULL) {
        fprintf(req_log, "%s %s\n", method_name(evhttp_request_get_command(req)), uri);
        fflush(req_log);
    }
    if (path != NULL && strcmp(path, "/bulk") == 0) {
        struct bulk *bk = calloc(1, sizeof(*bk));
        char cl[32];
        uint64_t n = 0;
        if (bk == NULL || query == NULL || strncmp(query, "n=", 2) != 0 ||
            !pv_ok(pv_parse_u64(query + 2, strlen(query + 2), UINT64_C(1) << 40, &n))) {
            free(bk);
            evhttp_send_error(req, 400, "bad n");
            return;
        }
        snprintf(cl, sizeof(cl), "%llu", (unsigned long long)n);
        evhttp_add_header(outh, "Content-Length", cl);
        evhttp_add_header(outh, "Content-Type", "application/octet-stream");
        bk->req = req;
        bk->left = n;
        evhttp_send_reply_start(req, 200, "OK");
        bulk_next(NULL, bk);
        return;
    }
    b = evbuffer_new();
    if (b == NULL) {
        evhttp_send_error(req, 500, NULL);
        return;
    }
    evbuffer_add_printf(b, "upstream: %s\nrequest: %s %s\n", kind,
                        method_name(evhttp_request_get_command(req)), uri);
    for (struct evkeyval *kv = in->tqh_first; kv != NULL; kv = kv->next.tqe_next) {
        evbuffer_add_printf(b, "header: %s: %s\n", kv->key, kv->value);
    }
    evbuffer_add_printf(b, "body-bytes: %zu\n",
                        evbuffer_get_length(evhttp_request_get_input_buffer(req)));
    evhttp_add_header(outh, "Content-Type", "text/plain");
    evhttp_add_header(outh, "X-Upstream", kind);
    if (path != NULL && strcmp(path, "/close") == 0) {
        evhttp_add_header(outh, "Connection", "close");
    }
    if (path != NULL && strncmp(path, "/status/", 8) == 0) {
        uint64_t st = 0;
        if (pv_ok(pv_parse_u64(path + 8, strlen(path + 8), 599, &st)) && st >= 200) {
            evhttp_send_reply(req, (int)st, "Status", b);
            evbuffer_free(b);
            return;
        }
    }
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static struct bufferevent *tls_bev(struct event_base *base, void *arg)
{
    SSL_CTX *ctx = arg;
    SSL *ssl = SSL_new(ctx);

    if (ssl == NULL) {
        return NULL;
    }
    return bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                          BEV_OPT_CLOSE_ON_FREE);
}

static void term_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopexit(arg, NULL);
}

static unsigned bound_port(struct evhttp_bound_socket *h)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);

    if (h == NULL || getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&sa, &sl) != 0) {
        return 0;
    }
    return ntohs(sa.sin_port);
}

static struct evhttp *server(struct event_base *base, const char *kind, SSL_CTX *ctx,
                             unsigned *port)
{
    struct evhttp *h = evhttp_new(base);

    if (h == NULL) {
        return NULL;
    }
    evhttp_set_allowed_methods(h, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                      EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                                      EVHTTP_REQ_PATCH);
    evhttp_set_max_body_size(h, 64 * 1024 * 1024);
    evhttp_set_gencb(h, handle, (void *)kind);
    if (ctx != NULL) {
        evhttp_set_bevcb(h, tls_bev, ctx);
    }
    *port = bound_port(evhttp_bind_socket_with_handle(h, "127.0.0.1", 0));
    return h;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"port-file", required_argument, NULL, 'f'},
        {"cert", required_argument, NULL, 'c'},
        {"key", required_argument, NULL, 'k'},
        {"log", required_argument, NULL, 'l'},
        {NULL, 0, NULL, 0},
    };
    const char *port_file = NULL;
    const char *cert = NULL;
    const char *key = NULL;
    struct event_base *base;
    struct evhttp *plain;
    struct evhttp *tls = NULL;
    SSL_CTX *ctx = NULL;
    unsigned p1 = 0;
    unsigned p2 = 0;
    struct event *term;
    FILE *f;
    char tmp[4200];
    int ch;

    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            port_file = optarg;
            break;
        case 'c':
            cert = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 'l':
            req_log = fopen(optarg, "ae");
            if (req_log == NULL) {
                return 2;
            }
            break;
        default:
            return 2;
        }
    }
    if (port_file == NULL) {
        fprintf(stderr, "usage: proxy_upstream --port-file FILE [--cert CRT --key KEY]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    base = event_base_new();
    if (base == NULL) {
        return 1;
    }
    if (cert != NULL && key != NULL) {
        ctx = SSL_CTX_new(TLS_server_method());
        if (ctx == NULL || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
            fprintf(stderr, "proxy_upstream: cannot load %s / %s\n", cert, key);
            return 1;
        }
    }
    plain = server(base, "plain", NULL, &p1);
    if (ctx != NULL) {
        tls = server(base, "tls", ctx, &p2);
    }
    if (plain == NULL || p1 == 0 || (ctx != NULL && p2 == 0)) {
        fprintf(stderr, "proxy_upstream: cannot listen\n");
        return 1;
    }
    term = evsignal_new(base, SIGTERM, term_cb, base);
    event_add(term, NULL);
    snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
    f = fopen(tmp, "w");
    if (f == NULL) {
        return 1;
    }
    fprintf(f, "%u %u\n", p1, p2);
    fclose(f);
    if (rename(tmp, port_file) != 0) {
        return 1;
    }
    event_base_dispatch(base);
    event_free(term);
    evhttp_free(plain);
    if (tls != NULL) {
        evhttp_free(tls);
    }
    SSL_CTX_free(ctx);
    event_base_free(base);
    return 0;
}
