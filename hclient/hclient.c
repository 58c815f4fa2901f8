/* SPDX-License-Identifier: Apache-2.0 */
/* hclient.c - the one HTTP client of proviso (see hclient.h) */
#include "config.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "hclient/hclient.h"

struct hclient {
    CURL *easy;
    CURLM *multi; /* for long-polls; fixed for the client's life (wakeup) */
};

struct hclient *hclient_new(void)
{
    struct hclient *c = pv_calloc(1, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->easy = curl_easy_init();
    c->multi = curl_multi_init();
    if (c->easy == NULL || c->multi == NULL) {
        hclient_free(c);
        return NULL;
    }
    return c;
}

void hclient_free(struct hclient *c)
{
    if (c == NULL) {
        return;
    }
    if (c->multi != NULL) {
        curl_multi_cleanup(c->multi);
    }
    if (c->easy != NULL) {
        curl_easy_cleanup(c->easy);
    }
    free(c);
}

void hclient_res_clear(struct hclient_res *res)
{
    free(res->body);
    res->body = NULL;
    res->len = 0;
}

void hclient_wakeup(struct hclient *c)
{
    if (c != NULL && c->multi != NULL) {
        (void)curl_multi_wakeup(c->multi);
    }
}

struct sink {
    struct pv_dynbuf buf;
    bool discard;
    bool too_large;
};

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;

    if (s->discard) {
        return size * n;
    }
    if (!pv_ok(pv_dynbuf_add(&s->buf, data, size * n))) {
        s->too_large = true;
        return 0; /* over the cap: curl stops with CURLE_WRITE_ERROR */
    }
    return size * n;
}

/* The header list; the bearer line is wiped by free_headers. */
/* Append 'line' to '*h'; false when it could not be (the list unchanged). */
static bool add_header(struct curl_slist **h, const char *line)
{
    struct curl_slist *n = curl_slist_append(*h, line);

    if (n == NULL) {
        return false;
    }
    *h = n;
    return true;
}

static struct curl_slist *make_headers(const struct hclient_req *req)
{
    struct curl_slist *h = NULL;
    char line[512];
    bool ok = true;

    if (req->bearer != NULL) {
        static const char prefix[] = "Authorization: Bearer ";
        size_t n = sizeof(prefix) + strlen(req->bearer);
        char *auth = pv_malloc(n);

        if (auth == NULL) {
            return NULL;
        }
        snprintf(auth, n, "%s%s", prefix, req->bearer);
        ok = add_header(&h, auth);
        explicit_bzero(auth, n);
        free(auth);
    }
    if (ok && req->accept != NULL) {
        snprintf(line, sizeof(line), "Accept: %s", req->accept);
        ok = add_header(&h, line);
    }
    if (ok && req->body != NULL && req->content_type != NULL) {
        snprintf(line, sizeof(line), "Content-Type: %s", req->content_type);
        ok = add_header(&h, line);
    }
    if (ok && req->no_expect) {
        ok = add_header(&h, "Expect:");
    }
    if (!ok) {
        for (struct curl_slist *l = h; l != NULL; l = l->next) {
            explicit_bzero(l->data, strlen(l->data));
        }
        curl_slist_free_all(h);
        return NULL;
    }
    return h;
}

static void free_headers(struct curl_slist *h)
{
    for (struct curl_slist *l = h; l != NULL; l = l->next) {
        explicit_bzero(l->data, strlen(l->data));
    }
    curl_slist_free_all(h);
}

static bool set_options(CURL *e, const struct hclient_req *req, struct curl_slist *hdrs,
                        struct sink *s)
{
    const char *method = req->method != NULL ? req->method : req->body != NULL ? "POST" : "GET";

    if (curl_easy_setopt(e, CURLOPT_URL, req->url) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEDATA, s) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms) != CURLE_OK) {
        return false;
    }
    if (strcmp(method, "GET") != 0 &&
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK) {
        return false;
    }
    if (req->protocols != NULL &&
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, req->protocols) != CURLE_OK) {
        return false;
    }
    if (req->no_proxy && curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK) {
        return false;
    }
    if (req->fresh && curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK) {
        return false;
    }
    if (req->user_agent != NULL &&
        curl_easy_setopt(e, CURLOPT_USERAGENT, req->user_agent) != CURLE_OK) {
        return false;
    }
    if (req->body != NULL &&
        (curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body) != CURLE_OK ||
         curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len) != CURLE_OK)) {
        return false;
    }
    return true;
}

/* The transfer through the multi handle; ends early when *stop is set. */
static CURLcode perform_multi(struct hclient *c, const atomic_bool *stop)
{
    CURLcode rc = CURLE_ABORTED_BY_CALLBACK;
    int running = 1;
    CURLMsg *m;
    int left = 0;

    if (curl_multi_add_handle(c->multi, c->easy) != CURLM_OK) {
        return CURLE_FAILED_INIT;
    }
    while (running > 0 && !atomic_load(stop)) {
        if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
            break;
        }
        if (running > 0 && curl_multi_poll(c->multi, NULL, 0, 1000, NULL) != CURLM_OK) {
            break;
        }
    }
    while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (m->msg == CURLMSG_DONE && m->easy_handle == c->easy) {
            rc = m->data.result;
        }
    }
    (void)curl_multi_remove_handle(c->multi, c->easy);
    return rc;
}

/* After a failed transfer the handle starts afresh (no reused connection). */
static void drop_connection(struct hclient *c)
{
    curl_easy_cleanup(c->easy);
    c->easy = curl_easy_init();
}

/* Did the failed transfer end before the request could reach the server?
 * A timeout counts only when no connection was completed and no request
 * byte was counted as sent: a request that went out may have been acted
 * on. */
static bool never_sent(CURL *e, CURLcode cc)
{
    curl_off_t connect_us = 1;
    long sent = 1;

    switch (cc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return true;
    case CURLE_OPERATION_TIMEDOUT:
        return curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &connect_us) == CURLE_OK &&
               curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK && connect_us == 0 &&
               sent == 0;
    default:
        return false;
    }
}

bool hclient_perform(struct hclient *c, const struct hclient_req *req, struct hclient_res *res)
{
    struct curl_slist *hdrs;
    struct sink s = {.discard = req->max_answer == 0};
    CURLcode cc;

    memset(res, 0, sizeof(*res));
    if (c == NULL || c->easy == NULL) {
        snprintf(res->error, sizeof(res->error), "cannot initialise libcurl");
        return false;
    }
    pv_dynbuf_init(&s.buf, req->max_answer);
    hdrs = make_headers(req);
    if (hdrs == NULL && (req->bearer != NULL || req->accept != NULL || req->no_expect ||
                         (req->body != NULL && req->content_type != NULL))) {
        snprintf(res->error, sizeof(res->error), "out of memory");
        return false;
    }
    curl_easy_reset(c->easy);
    if (!set_options(c->easy, req, hdrs, &s)) {
        snprintf(res->error, sizeof(res->error), "cannot set up the request");
        free_headers(hdrs);
        return false;
    }
    cc = req->stop != NULL ? perform_multi(c, req->stop) : curl_easy_perform(c->easy);
    free_headers(hdrs);
    if (cc != CURLE_OK) {
        res->too_large = s.too_large;
        res->unsent = never_sent(c->easy, cc);
        res->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
        snprintf(res->error, sizeof(res->error), "%s",
                 s.too_large ? "the answer is larger than the client accepts"
                             : curl_easy_strerror(cc));
        pv_dynbuf_free(&s.buf);
        drop_connection(c);
        return false;
    }
    (void)curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &res->status);
    if (!s.discard) {
        res->body = pv_dynbuf_take(&s.buf, &res->len);
        if (res->body == NULL) {
            res->body = pv_strdup("");
        }
        if (res->body == NULL) {
            snprintf(res->error, sizeof(res->error), "out of memory");
            return false;
        }
    }
    return true;
}
