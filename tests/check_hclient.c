/* SPDX-License-Identifier: Apache-2.0 */
/* check_hclient.c - unit tests for hclient/: what a loopback server
 * receives (bearer, method, body, headers), the answer cap, refused
 * redirects, discarded answers, unreachable servers and a long-poll that a
 * stop ends at once. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/pv.h"
#include "hclient/hclient.h"
#include "tests/check_net_util.h"

/* A one-connection HTTP server on 127.0.0.1: it reads one request, keeps
 * its bytes, and sends 'reply' (or nothing, with 'hang', until closed). */
struct server {
    int lfd;
    unsigned port;
    const char *reply;
    size_t reply_len;
    bool hang;
    char req[65536];
    size_t req_len;
    pthread_t tid;
};

static size_t content_length(const char *req)
{
    const char *p = strcasestr(req, "\r\nContent-Length:");

    return p != NULL ? (size_t)strtoul(p + 17, NULL, 10) : 0;
}

static void read_request(struct server *s, int fd)
{
    const char *end = NULL;

    while (s->req_len < sizeof(s->req) - 1) {
        ssize_t n = recv(fd, s->req + s->req_len, sizeof(s->req) - 1 - s->req_len, 0);
        if (n <= 0) {
            return;
        }
        s->req_len += (size_t)n;
        s->req[s->req_len] = '\0';
        end = strstr(s->req, "\r\n\r\n");
        if (end != NULL && s->req_len >= (size_t)(end + 4 - s->req) + content_length(s->req)) {
            return;
        }
    }
}

static void *serve(void *arg)
{
    struct server *s = arg;
    int fd = accept(s->lfd, NULL, NULL);
    char sink[256];

    if (fd < 0) {
        return NULL;
    }
    read_request(s, fd);
    if (s->hang) {
        while (recv(fd, sink, sizeof(sink), 0) > 0) {
        }
    } else {
        (void)send(fd, s->reply, s->reply_len, MSG_NOSIGNAL);
    }
    close(fd);
    return NULL;
}

static void server_start(struct server *s, const char *reply, size_t reply_len, bool hang)
{
    memset(s, 0, sizeof(*s));
    s->reply = reply;
    s->reply_len = reply_len;
    s->hang = hang;
    s->lfd = check_net_listen(4, &s->port);
    ck_assert_int_eq(pthread_create(&s->tid, NULL, serve, s), 0);
}

/* Joins the server; the number of further connections it was offered. */
static int server_stop(struct server *s)
{
    int extra = 0;
    int fd;

    pthread_join(s->tid, NULL);
    ck_assert_int_eq(fcntl(s->lfd, F_SETFL, O_NONBLOCK), 0);
    while ((fd = accept(s->lfd, NULL, NULL)) >= 0) {
        extra++;
        close(fd);
    }
    close(s->lfd);
    return extra;
}

static void url_of(const struct server *s, const char *path, char *url, size_t n)
{
    snprintf(url, n, "http://127.0.0.1:%u%s", s->port, path);
}

/* The request carries the bearer, the method, the content type, Accept and
 * the body; the answer's status and body come back. */
START_TEST(request_arrives)
{
    static const char reply[] = "HTTP/1.1 201 Created\r\nConnection: close\r\n"
                                "Content-Length: 11\r\n\r\n{\"ok\":true}";
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    struct hclient_req req = {
        .url = url,
        .method = "PUT",
        .bearer = "s3cret-token",
        .body = "{\"a\":1}",
        .body_len = 7,
        .content_type = "application/json",
        .accept = "application/json",
        .protocols = "http",
        .max_answer = 1024,
        .timeout_ms = 5000,
        .no_proxy = true,
        .no_expect = true,
    };

    ck_assert_ptr_nonnull(c);
    server_start(&s, reply, sizeof(reply) - 1, false);
    url_of(&s, "/v1/x?y=1", url, sizeof(url));
    ck_assert(hclient_perform(c, &req, &res));
    ck_assert_int_eq(server_stop(&s), 0);
    ck_assert_int_eq(res.status, 201);
    ck_assert_uint_eq(res.len, 11);
    ck_assert_str_eq(res.body, "{\"ok\":true}");
    ck_assert_str_eq(res.error, "");
    ck_assert_msg(strncmp(s.req, "PUT /v1/x?y=1 HTTP/1.1\r\n", 24) == 0, "%s", s.req);
    ck_assert_ptr_nonnull(strstr(s.req, "\r\nAuthorization: Bearer s3cret-token\r\n"));
    ck_assert_ptr_nonnull(strstr(s.req, "\r\nContent-Type: application/json\r\n"));
    ck_assert_ptr_nonnull(strstr(s.req, "\r\nAccept: application/json\r\n"));
    ck_assert_ptr_null(strcasestr(s.req, "\r\nExpect:"));
    ck_assert_msg(s.req_len >= 7 && memcmp(s.req + s.req_len - 7, "{\"a\":1}", 7) == 0, "%s",
                  s.req);
    hclient_res_clear(&res);
    hclient_free(c);
}
END_TEST

/* Without a bearer or a body, no Authorization and no Content-Type. */
START_TEST(plain_get)
{
    static const char reply[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n"
                                "Content-Length: 2\r\n\r\nok";
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    struct hclient_req req = {.url = url,
                              .content_type = "text/plain",
                              .max_answer = 16,
                              .timeout_ms = 5000,
                              .no_proxy = true};

    server_start(&s, reply, sizeof(reply) - 1, false);
    url_of(&s, "/healthz", url, sizeof(url));
    ck_assert(hclient_perform(c, &req, &res));
    ck_assert_int_eq(server_stop(&s), 0);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(res.body, "ok");
    ck_assert_msg(strncmp(s.req, "GET /healthz HTTP/1.1\r\n", 23) == 0, "%s", s.req);
    ck_assert_ptr_null(strcasestr(s.req, "Authorization:"));
    ck_assert_ptr_null(strcasestr(s.req, "Content-Type:"));
    hclient_res_clear(&res);
    hclient_free(c);
}
END_TEST

/* An answer past the cap is refused with the one error text; no body. */
START_TEST(answer_cap)
{
    static char reply[20000];
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    struct hclient_req req = {.url = url, .max_answer = 100, .timeout_ms = 5000, .no_proxy = true};
    int n = snprintf(reply, sizeof(reply),
                     "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10000\r\n\r\n");

    memset(reply + n, 'x', 10000);
    server_start(&s, reply, (size_t)n + 10000, false);
    url_of(&s, "/big", url, sizeof(url));
    ck_assert(!hclient_perform(c, &req, &res));
    (void)server_stop(&s);
    ck_assert(res.too_large);
    ck_assert_str_eq(res.error, "the answer is larger than the client accepts");
    ck_assert_ptr_null(res.body);
    /* the client is usable again afterwards */
    {
        static const char ok[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n"
                                 "Content-Length: 1\r\n\r\n1";
        server_start(&s, ok, sizeof(ok) - 1, false);
        url_of(&s, "/again", url, sizeof(url));
        ck_assert(hclient_perform(c, &req, &res));
        ck_assert_int_eq(server_stop(&s), 0);
        ck_assert_str_eq(res.body, "1");
        hclient_res_clear(&res);
    }
    hclient_free(c);
}
END_TEST

/* A redirect is not followed: its status comes back, the token goes
 * nowhere else (the server sees no second connection). */
START_TEST(no_redirect)
{
    static const char reply[] = "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\n"
                                "Connection: close\r\nContent-Length: 0\r\n\r\n";
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    struct hclient_req req = {
        .url = url, .bearer = "t", .max_answer = 64, .timeout_ms = 5000, .no_proxy = true};

    server_start(&s, reply, sizeof(reply) - 1, false);
    url_of(&s, "/start", url, sizeof(url));
    ck_assert(hclient_perform(c, &req, &res));
    usleep(100000);
    ck_assert_int_eq(server_stop(&s), 0);
    ck_assert_int_eq(res.status, 302);
    ck_assert_uint_eq(res.len, 0);
    hclient_res_clear(&res);
    hclient_free(c);
}
END_TEST

/* A cap of 0 discards the answer but keeps the status. */
START_TEST(discard)
{
    static const char reply[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n"
                                "Content-Length: 5\r\n\r\nhello";
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    struct hclient_req req = {.url = url, .timeout_ms = 5000, .no_proxy = true};

    server_start(&s, reply, sizeof(reply) - 1, false);
    url_of(&s, "/", url, sizeof(url));
    ck_assert(hclient_perform(c, &req, &res));
    ck_assert_int_eq(server_stop(&s), 0);
    ck_assert_int_eq(res.status, 200);
    ck_assert_ptr_null(res.body);
    hclient_free(c);
}
END_TEST

/* accept_silently: take one connection, read the request, answer nothing
 * (the connection stays open in 'fd' until the test closes it). */
struct silent {
    int lfd;
    int fd;
};

static void *accept_silently(void *arg)
{
    struct silent *sil = arg;
    char buf[1024];

    sil->fd = accept(sil->lfd, NULL, NULL);
    if (sil->fd >= 0) {
        (void)read(sil->fd, buf, sizeof(buf));
    }
    return NULL;
}

/* listener: a socket on 127.0.0.1 listening with 'backlog'; its URL in
 * 'url'. */
static int listener(int backlog, char *url, size_t urllen)
{
    unsigned port;
    int fd = check_net_listen(backlog, &port);

    snprintf(url, urllen, "http://127.0.0.1:%u/x", port);
    return fd;
}

/* connect_nonblocking: a connect to the port of 'url' begun, not waited for */
static int connect_nonblocking(const char *url)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)strtoul(strrchr(url, ':') + 1, NULL, 10));
    if (fd >= 0) {
        (void)connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    }
    return fd;
}

static bool connected_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int e = 0;
    socklen_t el = sizeof(e);

    return poll(&p, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0;
}

/* Nothing listens: false, status 0, libcurl's reason. */
START_TEST(unreachable)
{
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    struct hclient_req req = {.url = url,
                              .max_answer = 64,
                              .connect_timeout_ms = 2000,
                              .timeout_ms = 5000,
                              .no_proxy = true};
    unsigned port;

    /* a port that was just free */
    server_start(&s, "", 0, false);
    port = s.port;
    shutdown(s.lfd, SHUT_RDWR);
    close(s.lfd);
    pthread_join(s.tid, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/", port);
    ck_assert(!hclient_perform(c, &req, &res));
    ck_assert_int_eq(res.status, 0);
    ck_assert_ptr_null(res.body);
    ck_assert(res.error[0] != '\0');
    ck_assert(!res.too_large);
    ck_assert(res.unsent); /* refused: a write may go to another server */
    ck_assert(!res.timed_out);
    hclient_free(c);
}
END_TEST

/* A listener whose accept queue is full drops the SYN: the connect times
 * out and the request cannot have arrived (unsent). One that accepts,
 * reads the request and never answers times out too, but the request went
 * out (not unsent: a write there may have been done). */
START_TEST(timeouts_unsent_or_not)
{
    struct hclient *c = hclient_new();
    struct hclient_res res;
    char url[64];
    int lfd;
    int fill[32];
    int nfill;
    bool full = false;
    pthread_t tid;
    struct silent sil = {.fd = -1};
    struct hclient_req req = {.url = url,
                              .method = "POST",
                              .body = "{}",
                              .body_len = 2,
                              .max_answer = 64,
                              .connect_timeout_ms = 300,
                              .timeout_ms = 600,
                              .no_proxy = true,
                              .no_expect = true,
                              .fresh = true};

    ck_assert_ptr_nonnull(c);
    lfd = listener(0, url, sizeof(url));
    /* fill the accept queue: connects that complete without accept() */
    for (nfill = 0; nfill < (int)PV_ARRAY_LEN(fill);) {
        fill[nfill] = connect_nonblocking(url);
        ck_assert_int_ge(fill[nfill], 0);
        if (!connected_within(fill[nfill++], 200)) {
            full = true; /* this one hangs: the queue is full */
            break;
        }
    }
    ck_assert_msg(full, "the accept queue never filled");
    ck_assert(!hclient_perform(c, &req, &res));
    ck_assert_msg(res.unsent, "a connect that timed out counts as unsent (%s)", res.error);
    ck_assert(res.timed_out);
    hclient_res_clear(&res);
    for (int i = 0; i < nfill; i++) {
        close(fill[i]);
    }
    close(lfd);

    /* accepted, read, never answered (a connect timeout of its own: under
     * Valgrind a connect may take longer than the 300 ms above) */
    req.connect_timeout_ms = 5000;
    req.timeout_ms = 1500;
    sil.lfd = listener(4, url, sizeof(url));
    ck_assert_int_eq(pthread_create(&tid, NULL, accept_silently, &sil), 0);
    ck_assert(!hclient_perform(c, &req, &res));
    ck_assert_msg(!res.unsent, "a request that went out is not unsent (%s)", res.error);
    ck_assert(res.timed_out);
    hclient_res_clear(&res);
    pthread_join(tid, NULL);
    if (sil.fd >= 0) {
        close(sil.fd);
    }
    close(sil.lfd);
    hclient_free(c);
}
END_TEST

struct stopper {
    atomic_bool *stop;
    struct hclient *c;
};

static void *stop_later(void *arg)
{
    struct stopper *st = arg;

    usleep(300000);
    atomic_store(st->stop, true);
    hclient_wakeup(st->c);
    return NULL;
}

/* A long-poll that the server never answers ends at once on stop. */
START_TEST(stop_ends_longpoll)
{
    struct hclient *c = hclient_new();
    struct hclient_res res;
    struct server s;
    char url[128];
    atomic_bool stop = false;
    struct stopper st = {.stop = &stop, .c = c};
    struct hclient_req req = {
        .url = url, .max_answer = 64, .timeout_ms = 30000, .no_proxy = true, .stop = &stop};
    struct timespec t0;
    struct timespec t1;
    pthread_t tid;
    double secs;

    server_start(&s, "", 0, true);
    url_of(&s, "/wait", url, sizeof(url));
    ck_assert_int_eq(pthread_create(&tid, NULL, stop_later, &st), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert(!hclient_perform(c, &req, &res));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(tid, NULL);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ck_assert_msg(secs >= 0.25 && secs < 1.0, "took %.3f s", secs);
    ck_assert_int_eq(res.status, 0);
    ck_assert(res.error[0] != '\0');
    hclient_free(c); /* closes the connection: the server's recv ends */
    (void)server_stop(&s);
}
END_TEST

/* A keep-alive server that answers the first request, then reads a second
 * on the same connection and closes it without an answer (a service
 * killed after it acted); a request on a later connection is counted too. */
struct dropper {
    int lfd;
    unsigned port;
    atomic_int posts;
    pthread_t tid;
};

static void drop_count(struct dropper *d, int fd)
{
    struct server one;

    memset(&one, 0, sizeof(one));
    read_request(&one, fd);
    if (strncmp(one.req, "POST ", 5) == 0) {
        atomic_fetch_add(&d->posts, 1);
    }
}

static void *drop_serve(void *arg)
{
    struct dropper *d = arg;
    static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    struct timeval wait = {.tv_sec = 1};
    struct server one;
    int fd = accept(d->lfd, NULL, NULL);

    if (fd < 0) {
        return NULL;
    }
    memset(&one, 0, sizeof(one));
    read_request(&one, fd);
    (void)send(fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL);
    /* a fresh request does not come here: stop waiting for it after 1 s */
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)), 0);
    drop_count(d, fd);
    close(fd);
    /* libcurl's own resend, if any, comes on a new connection */
    ck_assert_int_eq(fcntl(d->lfd, F_SETFL, O_NONBLOCK), 0);
    for (int i = 0; i < 150; i++) {
        fd = accept(d->lfd, NULL, NULL);
        if (fd < 0) {
            usleep(10000);
            continue;
        }
        (void)fcntl(fd, F_SETFL, 0);
        drop_count(d, fd);
        close(fd);
    }
    return NULL;
}

/* A write sent with 'fresh' goes out once (and without a bearer: its
 * Content-Type and Expect headers were once dropped with an "out of
 * memory" error when no Authorization or Accept header came first): the answer missing is the
 * caller's to judge (proxy_advisor_may_fail_over), never a silent resend
 * by libcurl on a reused connection that died (PV_TEST_NOT_FRESH=1 shows
 * the resend: the server counts two POSTs). */
START_TEST(fresh_write_sent_once)
{
    struct dropper d;
    struct hclient *c = hclient_new();
    struct hclient_res res;
    char url[64];
    struct hclient_req get = {.url = url, .max_answer = 64, .timeout_ms = 5000};
    struct hclient_req post = {.url = url,
                               .method = "POST",
                               .body = "{}",
                               .body_len = 2,
                               .content_type = "application/json",
                               .max_answer = 64,
                               .timeout_ms = 5000,
                               .no_expect = true,
                               .fresh = getenv("PV_TEST_NOT_FRESH") == NULL};

    memset(&d, 0, sizeof(d));
    d.lfd = check_net_listen(4, &d.port);
    ck_assert_int_eq(pthread_create(&d.tid, NULL, drop_serve, &d), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/x", d.port);
    ck_assert_ptr_nonnull(c);
    ck_assert(hclient_perform(c, &get, &res));
    ck_assert_int_eq(res.status, 200);
    hclient_res_clear(&res);
    ck_assert(!hclient_perform(c, &post, &res)); /* no answer came */
    ck_assert(!res.unsent);                      /* but the request went out */
    hclient_res_clear(&res);
    pthread_join(d.tid, NULL);
    close(d.lfd);
    ck_assert_int_eq(atomic_load(&d.posts), 1);
    hclient_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hclient");
    TCase *tc = tcase_create("hclient");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, request_arrives);
    tcase_add_test(tc, plain_get);
    tcase_add_test(tc, answer_cap);
    tcase_add_test(tc, no_redirect);
    tcase_add_test(tc, discard);
    tcase_add_test(tc, unreachable);
    tcase_add_test(tc, timeouts_unsent_or_not);
    tcase_add_test(tc, stop_ends_longpoll);
    tcase_add_test(tc, fresh_write_sent_once);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
