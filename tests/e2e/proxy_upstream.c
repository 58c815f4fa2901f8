/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_upstream.c - the origin server behind proviso-proxy in e2e tests
 *
 *   proxy_upstream --port-file FILE [--cert CRT --key KEY] [--log FILE]
 *                  [--strict-port-file FILE --strict-log LOG] [--bind 127.X.Y.Z]
 *
 * Listens on 127.0.0.1 (or --bind, another loopback address; free ports) with plain HTTP and, given a certificate,
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
 * with Connection: close, /status/NNN answers with that status, /echo-body
 * also echoes the body ("body: BYTES").
 *
 * With --strict-port-file FILE --strict-log LOG it also runs a hand-written
 * origin that frames requests the way nginx does (every line, chunk-size
 * lines included, ends at LF; a CR before it is optional; chunk extensions
 * are skipped up to that LF) and appends one line per complete request it
 * saw to LOG, so tests judge the proxy by what an upstream actually parsed:
 *
 *   REQ METHOD TARGET host=HOST body=N sha=XXXXXXXX
 *
 * (sha: FNV-1a of the decoded body). FILE gets "PLAIN_PORT TLS_PORT".
 * Targets /resp/NAME answer a canned response instead (strict_canned): odd
 * or malformed framing, to check what the proxy relays back.
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
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/listener.h>

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
static const char *bind_addr = "127.0.0.1"; /* the HTTP servers' address */

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
    if (path != NULL && strcmp(path, "/echo-body") == 0) {
        /* the body as received, for tests that check rewritten bodies */
        struct evbuffer *ib = evhttp_request_get_input_buffer(req);
        size_t bl = evbuffer_get_length(ib);
        evbuffer_add_printf(b, "body: ");
        evbuffer_add(b, evbuffer_pullup(ib, -1), bl);
        evbuffer_add_printf(b, "\n");
    }
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

/* ---------------------------------------------------------------------------
 * The strict (nginx-like) origin
 * ------------------------------------------------------------------------- */

static FILE *strict_log;

struct strict_conn {
    int phase; /* 0 head, 1 CL body, 2 chunk size, 3 chunk data, 4 trailers */
    char method[64];
    char target[1024];
    char host[256];
    uint64_t cl;
    bool chunked;
    uint64_t left;
    uint64_t body;
    uint32_t sha;
    bool first_line;
};

/* One LF-terminated line (CR before LF dropped), NULL if incomplete. */
static char *strict_line(struct evbuffer *in)
{
    size_t n = 0;
    char *l = evbuffer_readln(in, &n, EVBUFFER_EOL_LF);

    if (l != NULL && n > 0 && l[n - 1] == '\r') {
        l[n - 1] = '\0';
    }
    return l;
}

/* Canned responses: name, bytes. */
static const char *const strict_canned[][2] = {
    {"/resp/ext-bare-lf", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "5;a\nhello\r\n0\r\n\r\n"},
    {"/resp/head-bare-lf", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"},
    {"/resp/obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\nok"},
    {"/resp/te-and-cl", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n"
                        "\r\n0\r\n\r\n"},
    {"/resp/data-lf", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "2\r\nok\n0\r\n\r\n"},
    /* a lenient client would read a second response out of this body */
    {"/resp/inject", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "2;\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nINJECTED"
                     "\r\n0\r\n\r\n"},
    {"/resp/ok-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "5;a=\"b\"\r\nhello\r\n0\r\nX-T: v\r\n\r\n"},
    {"/resp/interim", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 7\r\n"
                      "\r\ninterim"},
};

static void strict_done(struct bufferevent *bev, struct strict_conn *sc)
{
    struct evbuffer *out = bufferevent_get_output(bev);
    char body[1600];
    int n;

    fprintf(strict_log, "REQ %s %s host=%s body=%llu sha=%08x\n", sc->method, sc->target, sc->host,
            (unsigned long long)sc->body, sc->sha);
    fflush(strict_log);
    for (size_t i = 0; i < sizeof(strict_canned) / sizeof(strict_canned[0]); i++) {
        if (strcmp(sc->target, strict_canned[i][0]) == 0) {
            evbuffer_add(out, strict_canned[i][1], strlen(strict_canned[i][1]));
            memset(sc, 0, sizeof(*sc));
            sc->first_line = true;
            sc->sha = 2166136261u;
            return;
        }
    }
    n = snprintf(body, sizeof(body), "strict: %s %s host=%s body=%llu\n", sc->method, sc->target,
                 sc->host, (unsigned long long)sc->body);
    evbuffer_add_printf(out,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                        "Content-Length: %d\r\n\r\n%s",
                        n, body);
    memset(sc, 0, sizeof(*sc));
    sc->first_line = true;
    sc->sha = 2166136261u;
}

static void strict_bad(struct bufferevent *bev, struct strict_conn *sc, const char *why)
{
    fprintf(strict_log, "BAD %s\n", why);
    fflush(strict_log);
    free(sc);
    bufferevent_free(bev);
}

static void strict_body(struct strict_conn *sc, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sc->sha = (sc->sha ^ p[i]) * 16777619u;
    }
    sc->body += n;
}

static void strict_read(struct bufferevent *bev, void *arg)
{
    struct strict_conn *sc = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    for (;;) {
        char *l = NULL;
        if (sc->phase == 0 || sc->phase == 2 || sc->phase == 4) {
            l = strict_line(in);
            if (l == NULL) {
                return;
            }
        }
        switch (sc->phase) {
        case 0:
            if (sc->first_line) {
                char *sp1 = strchr(l, ' ');
                char *sp2 = sp1 != NULL ? strchr(sp1 + 1, ' ') : NULL;
                if (sp2 == NULL) {
                    free(l);
                    strict_bad(bev, sc, "request line");
                    return;
                }
                snprintf(sc->method, sizeof(sc->method), "%.*s", (int)(sp1 - l), l);
                snprintf(sc->target, sizeof(sc->target), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
                sc->first_line = false;
            } else if (l[0] == '\0') {
                sc->phase = sc->chunked ? 2 : 1;
                sc->left = sc->cl;
            } else if (strncasecmp(l, "host:", 5) == 0) {
                const char *v = l + 5;
                while (*v == ' ' || *v == '\t') {
                    v++;
                }
                snprintf(sc->host, sizeof(sc->host), "%s", v);
            } else if (strncasecmp(l, "content-length:", 15) == 0) {
                const char *v = l + 15;
                while (*v == ' ') {
                    v++;
                }
                if (!pv_ok(pv_parse_u64(v, strlen(v), UINT64_C(1) << 40, &sc->cl))) {
                    free(l);
                    strict_bad(bev, sc, "content-length");
                    return;
                }
            } else if (strncasecmp(l, "transfer-encoding:", 18) == 0) {
                sc->chunked = strstr(l + 18, "chunked") != NULL;
            }
            break;
        case 2: {
            /* nginx-like: hex digits, then anything up to the LF */
            uint64_t v = 0;
            size_t i = 0;
            for (; l[i] != '\0'; i++) {
                int h = (l[i] >= '0' && l[i] <= '9')   ? l[i] - '0'
                        : (l[i] >= 'a' && l[i] <= 'f') ? l[i] - 'a' + 10
                        : (l[i] >= 'A' && l[i] <= 'F') ? l[i] - 'A' + 10
                                                       : -1;
                if (h < 0) {
                    break;
                }
                v = v * 16 + (uint64_t)h;
            }
            if (i == 0) {
                free(l);
                strict_bad(bev, sc, "chunk size");
                return;
            }
            sc->left = v;
            sc->phase = v == 0 ? 4 : 3;
            break;
        }
        case 4:
            if (l[0] == '\0') {
                free(l);
                strict_done(bev, sc);
                continue;
            }
            break;
        case 1:
        case 3: {
            size_t avail = evbuffer_get_length(in);
            size_t n = (uint64_t)avail < sc->left ? avail : (size_t)sc->left;
            unsigned char tmp[4096];
            while (n > 0) {
                size_t k = n < sizeof(tmp) ? n : sizeof(tmp);
                evbuffer_remove(in, tmp, k);
                strict_body(sc, tmp, k);
                sc->left -= k;
                n -= k;
            }
            if (sc->left > 0) {
                return;
            }
            if (sc->phase == 1) {
                strict_done(bev, sc);
                continue;
            }
            /* the CRLF after chunk data (a bare LF passes, as in nginx) */
            l = strict_line(in);
            if (l == NULL) {
                sc->phase = 5;
                return;
            }
            sc->phase = 2;
            break;
        }
        case 5:
            l = strict_line(in);
            if (l == NULL) {
                return;
            }
            sc->phase = 2;
            break;
        default:
            break;
        }
        free(l);
    }
}

static void strict_event(struct bufferevent *bev, short what, void *arg)
{
    if ((what & BEV_EVENT_CONNECTED) != 0) {
        return; /* TLS handshake done */
    }
    free(arg);
    bufferevent_free(bev);
}

static void strict_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                          int salen, void *arg)
{
    SSL_CTX *ctx = arg;
    struct event_base *base = evconnlistener_get_base(l);
    struct strict_conn *sc = calloc(1, sizeof(*sc));
    struct bufferevent *bev;

    (void)sa;
    (void)salen;
    if (sc == NULL) {
        evutil_closesocket(fd);
        return;
    }
    sc->first_line = true;
    sc->sha = 2166136261u;
    if (ctx != NULL) {
        SSL *ssl = SSL_new(ctx);
        bev = ssl != NULL ? bufferevent_openssl_socket_new(base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                           BEV_OPT_CLOSE_ON_FREE)
                          : NULL;
    } else {
        bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    }
    if (bev == NULL) {
        free(sc);
        evutil_closesocket(fd);
        return;
    }
    bufferevent_setcb(bev, strict_read, NULL, strict_event, sc);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static struct evconnlistener *strict_listen(struct event_base *base, SSL_CTX *ctx, unsigned *port)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    struct evconnlistener *l;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l = evconnlistener_new_bind(base, strict_accept, ctx, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                64, (struct sockaddr *)&sa, sizeof(sa));
    if (l == NULL || getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&sa, &sl) != 0) {
        *port = 0;
        return l;
    }
    *port = ntohs(sa.sin_port);
    return l;
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
    evhttp_set_gencb(h, handle, PV_UNCONST(kind));
    if (ctx != NULL) {
        evhttp_set_bevcb(h, tls_bev, ctx);
    }
    *port = bound_port(evhttp_bind_socket_with_handle(h, bind_addr, 0));
    return h;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"port-file", required_argument, NULL, 'f'},
        {"cert", required_argument, NULL, 'c'},
        {"key", required_argument, NULL, 'k'},
        {"log", required_argument, NULL, 'L'},
        {"strict-port-file", required_argument, NULL, 's'},
        {"strict-log", required_argument, NULL, 'l'},
        {"bind", required_argument, NULL, 'b'},
        {NULL, 0, NULL, 0},
    };
    const char *port_file = NULL;
    const char *cert = NULL;
    const char *key = NULL;
    const char *strict_port_file = NULL;
    const char *strict_log_path = NULL;
    struct evconnlistener *sl1 = NULL;
    struct evconnlistener *sl2 = NULL;
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
        case 'L':
            req_log = fopen(optarg, "ae");
            if (req_log == NULL) {
                return 2;
            }
            break;
        case 's':
            strict_port_file = optarg;
            break;
        case 'l':
            strict_log_path = optarg;
            break;
        case 'b':
            /* tests stay on loopback: only 127.0.0.0/8 */
            if (strncmp(optarg, "127.", 4) != 0) {
                fprintf(stderr, "proxy_upstream: --bind takes a 127.0.0.0/8 address\n");
                return 2;
            }
            bind_addr = optarg;
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
    if (strict_port_file != NULL && strict_log_path != NULL) {
        unsigned s1 = 0;
        unsigned s2 = 0;
        strict_log = fopen(strict_log_path, "a");
        sl1 = strict_listen(base, NULL, &s1);
        if (ctx != NULL) {
            sl2 = strict_listen(base, ctx, &s2);
        }
        if (strict_log == NULL || s1 == 0 || (ctx != NULL && s2 == 0)) {
            fprintf(stderr, "proxy_upstream: cannot start the strict origin\n");
            return 1;
        }
        snprintf(tmp, sizeof(tmp), "%s.tmp", strict_port_file);
        f = fopen(tmp, "w");
        if (f == NULL) {
            return 1;
        }
        fprintf(f, "%u %u\n", s1, s2);
        fclose(f);
        if (rename(tmp, strict_port_file) != 0) {
            return 1;
        }
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
    if (sl1 != NULL) {
        evconnlistener_free(sl1);
    }
    if (sl2 != NULL) {
        evconnlistener_free(sl2);
    }
    if (strict_log != NULL) {
        fclose(strict_log);
    }
    evhttp_free(plain);
    if (tls != NULL) {
        evhttp_free(tls);
    }
    SSL_CTX_free(ctx);
    event_base_free(base);
    return 0;
}
