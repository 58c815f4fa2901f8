/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_cred_rewrite.c - libFuzzer target: the credential placeholder rewriter
 *
 * Input: a mode byte, a host up to the first newline, then the bytes to
 * rewrite (a header field "Name: value", a request-target or a body) for a
 * fixed store whose credentials target some hosts and not others. Checked:
 * no crash or leak on any bytes; a successful rewrite leaves no marker in
 * any case or encoding (the Basic credentials decoded too); a value appears
 * in the output only if the input held it or its credential targets the
 * host; the redacted form never holds a value; a refusal explains itself
 * and never quotes a value the input did not hold; REWRITTEN counts its placeholders, NONE has none.
 *   ./tests/fuzz/fuzz_cred_rewrite -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "proxy/proxy_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char store_text[] = "credentials:\n"
                                 "  - name: a\n"
                                 "    target_hosts: [api.example.com, '*.example.org', 10.0.0.1]\n"
                                 "    env: API_TOKEN\n"
                                 "    value: zVALUEone\n"
                                 "  - name: b\n"
                                 "    target_hosts: [github.com]\n"
                                 "    env: GH\n"
                                 "    value: 'ghp/VALUE two&'\n";

static const struct {
    const char *key;
    const char *value;
    size_t cred;
} secrets[] = {{"API_TOKEN", "zVALUEone", 0}, {"GH", "ghp/VALUE two&", 1}};

static struct proxy_creds *store;
static struct model_credset *meta;

static bool has(const char *hay, size_t n, const char *needle)
{
    return hay != NULL && memmem(hay, n, needle, strlen(needle)) != NULL;
}

static void check_values(const char *host, const char *in, size_t inl, const char *out, size_t outl)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(secrets); i++) {
        if (has(out, outl, secrets[i].value) && !has(in, inl, secrets[i].value) &&
            !model_cred_covers_host(meta, secrets[i].cred, host, strlen(host))) {
            abort(); /* a value went to a host its credential does not target */
        }
    }
}

/* 'in' is what the sandbox sent (host and bytes): a reason may quote its
 * keys and host, which may spell a value the sandbox already knows. */
static void check_result(enum proxy_cred_status st, const struct proxy_cred_result *r,
                         const char *in, size_t inl)
{
    /* a refusal may come after some placeholders were counted */
    if (r->st != st || (st == PROXY_CRED_REWRITTEN && r->n == 0) ||
        (st == PROXY_CRED_NONE && r->n != 0)) {
        abort();
    }
    if (st != PROXY_CRED_NONE && st != PROXY_CRED_REWRITTEN && r->why[0] == '\0') {
        abort();
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(secrets); i++) {
        if (strstr(r->why, secrets[i].value) != NULL && !has(in, inl, secrets[i].value)) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    const char *nl;
    char host[256];
    size_t hl;
    const char *in;
    size_t inl;
    struct pv_dynbuf out;
    struct pv_dynbuf red;
    struct proxy_cred_result r;
    enum proxy_cred_status st = PROXY_CRED_NONE;
    bool ok;

    if (store == NULL) {
        char err[256];
        struct model_diags *d = model_diags_new();
        store = proxy_creds_new_from("fuzz", store_text, strlen(store_text), ".", err, sizeof(err));
        meta = model_credset_load("fuzz", store_text, strlen(store_text), d);
        model_diags_free(d);
        if (store == NULL || meta == NULL) {
            abort();
        }
    }
    if (size < 2) {
        return 0;
    }
    nl = memchr(p + 1, '\n', size - 1);
    hl = nl != NULL ? (size_t)(nl - p - 1) : 0;
    if (hl >= sizeof(host)) {
        hl = sizeof(host) - 1;
    }
    memcpy(host, p + 1, hl);
    host[hl] = '\0';
    if (memchr(host, '\0', hl) != NULL) {
        return 0;
    }
    in = nl != NULL ? nl + 1 : p + 1;
    inl = size - (size_t)(in - p);
    pv_dynbuf_init(&out, inl + PROXY_CRED_GROWTH);
    pv_dynbuf_init(&red, inl + PROXY_CRED_GROWTH);
    switch (data[0] % 5) {
    case 0: { /* a header field "Name: value" */
        const char *colon = memchr(in, ':', inl);
        size_t nlen = colon != NULL ? (size_t)(colon - in) : 0;
        const char *v = colon != NULL ? colon + 1 : in;
        size_t vl = inl - (size_t)(v - in);
        st = proxy_cred_header(store, host, in, nlen, v, vl, false, &out, &r);
        check_result(st, &r, p, size);
        ok = st == PROXY_CRED_REWRITTEN;
        if (ok && proxy_cred_header_has_marker(in, nlen, out.buf, out.len)) {
            abort();
        }
        if (ok) {
            check_values(host, v, vl, out.buf, out.len);
        }
        if (st == PROXY_CRED_NONE && proxy_cred_header_has_marker(in, nlen, v, vl)) {
            abort(); /* detection and rewriting must agree */
        }
        break;
    }
    case 1: /* a request-target */
        st = proxy_cred_target(store, host, in, inl, &out, &red, &r);
        check_result(st, &r, p, size);
        if (st == PROXY_CRED_REWRITTEN && proxy_cred_has_marker(out.buf, out.len)) {
            abort();
        }
        for (size_t i = 0; i < PV_ARRAY_LEN(secrets); i++) {
            if (has(red.buf, red.len, secrets[i].value) && !has(in, inl, secrets[i].value)) {
                abort(); /* the redacted form is what the logs show */
            }
        }
        break;
    case 2: /* a body */
        st = proxy_cred_body(store, host, in, inl, &out, &r);
        check_result(st, &r, p, size);
        if ((st == PROXY_CRED_REWRITTEN || st == PROXY_CRED_NONE) &&
            proxy_cred_has_marker(out.buf, out.len)) {
            abort();
        }
        if (st == PROXY_CRED_REWRITTEN) {
            check_values(host, in, inl, out.buf, out.len);
        }
        break;
    case 3: /* plain text, e.g. a WebSocket text message */
        st = proxy_cred_rewrite(store, host, in, inl, false, &out, &r);
        check_result(st, &r, p, size);
        if ((st == PROXY_CRED_REWRITTEN || st == PROXY_CRED_NONE) &&
            proxy_cred_has_marker(out.buf, out.len)) {
            abort();
        }
        if (st == PROXY_CRED_REWRITTEN) {
            check_values(host, in, inl, out.buf, out.len);
        }
        break;
    default: /* redaction, which needs no store */
        st = proxy_cred_rewrite(NULL, host, in, inl, true, &out, &r);
        check_result(st, &r, p, size);
        if (st == PROXY_CRED_REWRITTEN && proxy_cred_has_marker(out.buf, out.len)) {
            abort();
        }
        break;
    }
    if (!pv_dynbuf_validate(&out) || !pv_dynbuf_validate(&red)) {
        abort();
    }
    pv_dynbuf_free(&out);
    pv_dynbuf_free(&red);
    return 0;
}
