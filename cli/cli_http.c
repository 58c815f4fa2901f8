/* SPDX-License-Identifier: Apache-2.0 */
/* cli_http.c - the proviso command's HTTP client for proviso-advisor
 *
 * One small libcurl module: a JSON request (GET, POST, PUT, DELETE) with the
 * bearer token, bounded in time (connect and total timeouts) and in size
 * (answers past CLI_HTTP_MAX_ANSWER are refused), and the answer as a
 * jansson object. No redirects are followed, so the token never travels to
 * another address than the one given. The token's copies held here are
 * wiped before they are freed.
 *
 * The caller gets one of three outcomes, which are the reviewer commands'
 * exit statuses: 0 the advisor answered 2xx with a JSON object; 1 it
 * refused (4xx, its {"error", "detail"} object in the answer); 3 it could
 * not be reached, answered 5xx, or answered something unreadable.
 */
#include "config.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_dynbuf.h"

#define CONNECT_TIMEOUT_MS 5000L
/* Approve and approve-all wait for the prover; a long list carries every
 * chunk's evidence. */
#define TOTAL_TIMEOUT_MS 300000L
#define CLI_HTTP_MAX_ANSWER (64u * 1024u * 1024u)
/* An audit export (AUDIT_FILE_MAX). */
#define CLI_HTTP_MAX_RAW (1024u * 1024u * 1024u)

struct cli_http {
    CURL *curl;
    char *base; /* "http://host:port", no trailing slash */
    char *auth; /* "Authorization: Bearer <token>" (secret) */
    size_t authlen;
};

static void wipe_free(char *s, size_t len)
{
    if (s != NULL) {
        explicit_bzero(s, len);
        free(s);
    }
}

struct cli_http *cli_http_new(const char *base, const char *token)
{
    static const char prefix[] = "Authorization: Bearer ";
    struct cli_http *h;
    size_t blen = strlen(base);
    size_t tlen = strlen(token);

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        return NULL;
    }
    h = pv_calloc(1, sizeof(*h));
    if (h == NULL) {
        curl_global_cleanup();
        return NULL;
    }
    while (blen > 0 && base[blen - 1] == '/') {
        blen--;
    }
    h->base = pv_strndup(base, blen);
    h->authlen = sizeof(prefix) + tlen;
    h->auth = pv_malloc(h->authlen);
    h->curl = curl_easy_init();
    if (h->base == NULL || h->auth == NULL || h->curl == NULL) {
        cli_http_free(h);
        return NULL;
    }
    memcpy(h->auth, prefix, sizeof(prefix) - 1);
    memcpy(h->auth + sizeof(prefix) - 1, token, tlen + 1);
    return h;
}

void cli_http_free(struct cli_http *h)
{
    if (h == NULL) {
        return;
    }
    if (h->curl != NULL) {
        curl_easy_cleanup(h->curl);
    }
    wipe_free(h->auth, h->authlen);
    free(h->base);
    free(h);
    curl_global_cleanup();
}

const char *cli_http_base(const struct cli_http *h)
{
    return h->base;
}

void cli_answer_clear(struct cli_answer *a)
{
    json_decref(a->body);
    a->body = NULL;
    free(a->raw);
    a->raw = NULL;
    a->raw_len = 0;
}

/* ===========================================================================
 * Paths
 * ========================================================================= */

static void put_escaped(struct pv_dynbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            pv_dynbuf_putc(b, (char)c);
        } else {
            pv_dynbuf_putc(b, '%');
            pv_dynbuf_putc(b, hex[c >> 4]);
            pv_dynbuf_putc(b, hex[c & 15]);
        }
    }
}

char *cli_http_path(const char *const *segs, const char *qkey, const char *qval)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 16384);
    for (size_t i = 0; segs[i] != NULL; i++) {
        pv_dynbuf_putc(&b, '/');
        put_escaped(&b, segs[i]);
    }
    if (qkey != NULL && qval != NULL) {
        pv_dynbuf_putc(&b, '?');
        put_escaped(&b, qkey);
        pv_dynbuf_putc(&b, '=');
        put_escaped(&b, qval);
    }
    return pv_dynbuf_finish(&b);
}

/* ===========================================================================
 * Requests
 * ========================================================================= */

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    struct pv_dynbuf *b = arg;

    if (!pv_ok(pv_dynbuf_add(b, data, size * n))) {
        return 0; /* over the cap: curl stops with CURLE_WRITE_ERROR */
    }
    return size * n;
}

static int classify(long status)
{
    if (status >= 200 && status < 300) {
        return 0;
    }
    if (status >= 400 && status < 500) {
        return 1;
    }
    return 3;
}

/* One request; with 'raw' a 2xx answer's bytes go to a->raw unparsed. */
static int perform(struct cli_http *h, const char *method, const char *path, const json_t *body,
                   struct cli_answer *a, bool raw)
{
    struct curl_slist *hdrs = NULL;
    struct curl_slist *more;
    struct pv_dynbuf in;
    char *url = NULL;
    char *text = NULL;
    size_t urllen = strlen(h->base) + strlen(path) + 1;
    json_error_t je;
    CURLcode cc;
    int rc = 3;

    memset(a, 0, sizeof(*a));
    pv_dynbuf_init(&in, raw ? CLI_HTTP_MAX_RAW : CLI_HTTP_MAX_ANSWER);
    url = pv_malloc(urllen);
    if (body != NULL) {
        text = json_dumps(body, JSON_COMPACT);
    }
    hdrs = curl_slist_append(NULL, h->auth);
    more = hdrs != NULL ? curl_slist_append(hdrs, "Accept: application/json") : NULL;
    if (more != NULL && body != NULL) {
        more = curl_slist_append(more, "Content-Type: application/json");
    }
    if (url == NULL || more == NULL || (body != NULL && text == NULL)) {
        snprintf(a->error, sizeof(a->error), "out of memory");
        goto out;
    }
    snprintf(url, urllen, "%s%s", h->base, path);
    curl_easy_reset(h->curl);
    if (curl_easy_setopt(h->curl, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, TOTAL_TIMEOUT_MS) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &in) != CURLE_OK ||
        curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "proviso/" PACKAGE_VERSION) != CURLE_OK) {
        snprintf(a->error, sizeof(a->error), "cannot set up the request");
        goto out;
    }
    if (text != NULL && (curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, text) != CURLE_OK ||
                         curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                                          (curl_off_t)strlen(text)) != CURLE_OK)) {
        snprintf(a->error, sizeof(a->error), "cannot set up the request");
        goto out;
    }
    cc = curl_easy_perform(h->curl);
    if (cc != CURLE_OK) {
        snprintf(a->error, sizeof(a->error), "%s",
                 cc == CURLE_WRITE_ERROR ? "the answer is larger than the client accepts"
                                         : curl_easy_strerror(cc));
        goto out;
    }
    (void)curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &a->status);
    if (raw && classify(a->status) == 0) {
        a->raw = pv_dynbuf_take(&in, &a->raw_len);
        if (a->raw == NULL) {
            a->raw = pv_strdup("");
        }
        rc = a->raw != NULL ? 0 : 3;
        goto out;
    }
    a->body = json_loadb(in.buf != NULL ? in.buf : "", in.len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(a->body)) {
        cli_answer_clear(a);
        snprintf(a->error, sizeof(a->error), "HTTP %ld with an answer that is not a JSON object",
                 a->status);
        goto out;
    }
    rc = classify(a->status);
out:
    for (struct curl_slist *l = hdrs; l != NULL; l = l->next) {
        explicit_bzero(l->data, strlen(l->data));
    }
    curl_slist_free_all(hdrs);
    free(text);
    free(url);
    pv_dynbuf_free(&in);
    return rc;
}

int cli_http_call(struct cli_http *h, const char *method, const char *path, const json_t *body,
                  struct cli_answer *a)
{
    return perform(h, method, path, body, a, false);
}

int cli_http_get_raw(struct cli_http *h, const char *path, struct cli_answer *a)
{
    return perform(h, "GET", path, NULL, a, true);
}
