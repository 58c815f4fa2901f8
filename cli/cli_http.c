/* SPDX-License-Identifier: Apache-2.0 */
/* cli_http.c - the proviso command's HTTP client for proviso-advisor
 *
 * A JSON request (GET, POST, PUT, DELETE) through the shared client
 * (hclient/hclient.h) with the bearer token, bounded in time (connect and
 * total timeouts) and in size (answers past CLI_HTTP_MAX_ANSWER are
 * refused), and the answer as a jansson object. No redirects are followed, so the token never travels to
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
#include "hclient/hclient.h"

#define CONNECT_TIMEOUT_MS 5000L
/* Approve and approve-all wait for the prover; a long list carries every
 * chunk's evidence. */
#define TOTAL_TIMEOUT_MS 300000L
#define CLI_HTTP_MAX_ANSWER (64u * 1024u * 1024u)
/* An audit export (AUDIT_FILE_MAX). */
#define CLI_HTTP_MAX_RAW (1024u * 1024u * 1024u)

struct cli_http {
    struct hclient *client;
    char *base;  /* "http://host:port", no trailing slash */
    char *token; /* the bearer token (secret) */
    size_t tokenlen;
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
    h->tokenlen = tlen + 1;
    h->token = pv_malloc(h->tokenlen);
    h->client = hclient_new();
    if (h->base == NULL || h->token == NULL || h->client == NULL) {
        cli_http_free(h);
        return NULL;
    }
    memcpy(h->token, token, tlen + 1);
    return h;
}

void cli_http_free(struct cli_http *h)
{
    if (h == NULL) {
        return;
    }
    hclient_free(h->client);
    wipe_free(h->token, h->tokenlen);
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
    struct hclient_req req = {
        .method = method,
        .bearer = h->token,
        .content_type = "application/json",
        .accept = "application/json",
        .protocols = "http,https",
        .user_agent = "proviso/" PACKAGE_VERSION,
        .max_answer = raw ? CLI_HTTP_MAX_RAW : CLI_HTTP_MAX_ANSWER,
        .connect_timeout_ms = CONNECT_TIMEOUT_MS,
        .timeout_ms = TOTAL_TIMEOUT_MS,
        /* A write on a connection of its own: on a kept-alive connection
         * that dies before the answer libcurl would send it again by
         * itself, and a gateway that acted, then died, would see the
         * approval or proposal twice (behind a load balancer, on another
         * replica). Reads keep reusing the connection. */
        .fresh = strcmp(method, "GET") != 0,
    };
    struct hclient_res res;
    size_t urllen = strlen(h->base) + strlen(path) + 1;
    char *url = pv_malloc(urllen);
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    json_error_t je;
    int rc = 3;

    memset(a, 0, sizeof(*a));
    memset(&res, 0, sizeof(res));
    if (url == NULL || (body != NULL && text == NULL)) {
        snprintf(a->error, sizeof(a->error), "out of memory");
        goto out;
    }
    snprintf(url, urllen, "%s%s", h->base, path);
    req.url = url;
    req.body = text;
    req.body_len = text != NULL ? strlen(text) : 0;
    if (!hclient_perform(h->client, &req, &res)) {
        snprintf(a->error, sizeof(a->error), "%s", res.error);
        goto out;
    }
    a->status = res.status;
    if (raw && classify(a->status) == 0) {
        a->raw = res.body;
        a->raw_len = res.len;
        res.body = NULL;
        rc = 0;
        goto out;
    }
    a->body = json_loadb(res.body, res.len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(a->body)) {
        cli_answer_clear(a);
        snprintf(a->error, sizeof(a->error), "HTTP %ld with an answer that is not a JSON object",
                 a->status);
        goto out;
    }
    rc = classify(a->status);
out:
    hclient_res_clear(&res);
    free(text);
    free(url);
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
