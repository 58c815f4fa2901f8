/* SPDX-License-Identifier: Apache-2.0 */
/* pv_dynbuf.c - growable byte buffer with a mandatory size cap */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"

void pv_dynbuf_init(struct pv_dynbuf *b, size_t toobig)
{
    b->buf = NULL;
    b->len = 0;
    b->cap = 0;
    b->toobig = toobig;
    b->failed = false;
}

void pv_dynbuf_free(struct pv_dynbuf *b)
{
    if (b == NULL) {
        return;
    }
    free(b->buf);
    b->buf = NULL;
    b->len = 0;
    b->cap = 0;
}

void pv_dynbuf_reset(struct pv_dynbuf *b)
{
    b->len = 0;
    if (b->buf != NULL) {
        b->buf[0] = '\0';
    }
}

pv_result pv_dynbuf_add(struct pv_dynbuf *b, const void *data, size_t len)
{
    PV_ENSURE_REF(b);
    PV_ENSURE(len <= b->toobig && b->len <= b->toobig - len, PV_ERR_TOOBIG);
    if (b->len + len + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 64;
        char *nb;
        while (ncap < b->len + len + 1) {
            ncap *= 2;
        }
        nb = pv_realloc(b->buf, ncap);
        PV_GUARD_PTR(nb);
        b->buf = nb;
        b->cap = ncap;
    }
    if (len > 0) {
        memcpy(b->buf + b->len, data, len);
    }
    b->len += len;
    b->buf[b->len] = '\0';
    return PV_RESULT_OK;
}

pv_result pv_dynbuf_addstr(struct pv_dynbuf *b, const char *s)
{
    return pv_dynbuf_add(b, s, strlen(s));
}

pv_result pv_dynbuf_addc(struct pv_dynbuf *b, char c)
{
    return pv_dynbuf_add(b, &c, 1);
}

pv_result pv_dynbuf_vprintf(struct pv_dynbuf *b, const char *fmt, va_list ap)
{
    char small[256];
    va_list ap2;
    int n;

    va_copy(ap2, ap);
    n = vsnprintf(small, sizeof(small), fmt, ap2);
    va_end(ap2);
    PV_ENSURE(n >= 0, PV_ERR_INTERNAL);
    if ((size_t)n < sizeof(small)) {
        return pv_dynbuf_add(b, small, (size_t)n);
    }
    {
        char *big = pv_malloc((size_t)n + 1);
        pv_result r;
        PV_GUARD_PTR(big);
        (void)vsnprintf(big, (size_t)n + 1, fmt, ap);
        r = pv_dynbuf_add(b, big, (size_t)n);
        free(big);
        return r;
    }
}

pv_result pv_dynbuf_printf(struct pv_dynbuf *b, const char *fmt, ...)
{
    va_list ap;
    pv_result r;
    va_start(ap, fmt);
    r = pv_dynbuf_vprintf(b, fmt, ap);
    va_end(ap);
    return r;
}

char *pv_dynbuf_take(struct pv_dynbuf *b, size_t *len)
{
    char *p = b->buf;
    if (p == NULL) {
        p = pv_strdup("");
        if (len != NULL) {
            *len = 0;
        }
        return p;
    }
    if (len != NULL) {
        *len = b->len;
    }
    b->buf = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

void pv_dynbuf_put(struct pv_dynbuf *b, const void *data, size_t len)
{
    if (!b->failed && !pv_ok(pv_dynbuf_add(b, data, len))) {
        b->failed = true;
    }
}

void pv_dynbuf_puts(struct pv_dynbuf *b, const char *s)
{
    pv_dynbuf_put(b, s, strlen(s));
}

void pv_dynbuf_putc(struct pv_dynbuf *b, char c)
{
    pv_dynbuf_put(b, &c, 1);
}

void pv_dynbuf_putf(struct pv_dynbuf *b, const char *fmt, ...)
{
    va_list ap;

    if (b->failed) {
        return;
    }
    va_start(ap, fmt);
    if (!pv_ok(pv_dynbuf_vprintf(b, fmt, ap))) {
        b->failed = true;
    }
    va_end(ap);
}

char *pv_dynbuf_finish(struct pv_dynbuf *b)
{
    if (b->failed) {
        pv_dynbuf_free(b);
        b->failed = false;
        return NULL;
    }
    return pv_dynbuf_take(b, NULL);
}

bool pv_dynbuf_validate(const struct pv_dynbuf *b)
{
    if (b == NULL || b->len > b->toobig) {
        return false;
    }
    if (b->buf == NULL) {
        return b->len == 0 && b->cap == 0;
    }
    return b->len < b->cap && b->buf[b->len] == '\0';
}
