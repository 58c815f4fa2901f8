/* SPDX-License-Identifier: Apache-2.0 */
/* pv_dynbuf.h - growable byte buffer with a mandatory size cap
 *
 * Every buffer that holds untrusted bytes has a "toobig" cap: appending past
 * it fails with PV_ERR_TOOBIG and leaves the buffer unchanged. The buffer is
 * always NUL-terminated (the NUL is not counted in len).
 */
#ifndef PV_DYNBUF_H
#define PV_DYNBUF_H

#include <stdarg.h>
#include "common/pv.h"

struct pv_dynbuf {
    char *buf;
    size_t len;
    size_t cap;
    size_t toobig;
    bool failed; /* a pv_dynbuf_put* call failed (sticky) */
};

void pv_dynbuf_init(struct pv_dynbuf *b, size_t toobig);
void pv_dynbuf_free(struct pv_dynbuf *b);
void pv_dynbuf_reset(struct pv_dynbuf *b);
pv_result pv_dynbuf_add(struct pv_dynbuf *b, const void *data, size_t len) PV_WUR;
pv_result pv_dynbuf_addstr(struct pv_dynbuf *b, const char *s) PV_WUR;
pv_result pv_dynbuf_addc(struct pv_dynbuf *b, char c) PV_WUR;
pv_result pv_dynbuf_printf(struct pv_dynbuf *b, const char *fmt, ...) PV_WUR
    __attribute__((format(printf, 2, 3)));
pv_result pv_dynbuf_vprintf(struct pv_dynbuf *b, const char *fmt, va_list ap) PV_WUR
    __attribute__((format(printf, 2, 0)));
/* Hand the buffer to the caller (caller frees); the dynbuf is reset. */
char *pv_dynbuf_take(struct pv_dynbuf *b, size_t *len);
bool pv_dynbuf_validate(const struct pv_dynbuf *b);

/* Building text with a sticky error: the put calls return nothing; the
 * first failure (out of memory, over the cap) sets b->failed and later
 * calls do nothing. pv_dynbuf_finish hands over the text (caller frees; ""
 * when nothing was put), or frees it and returns NULL when anything
 * failed, so a builder checks once, at the end. */
void pv_dynbuf_put(struct pv_dynbuf *b, const void *data, size_t len);
void pv_dynbuf_puts(struct pv_dynbuf *b, const char *s);
void pv_dynbuf_putc(struct pv_dynbuf *b, char c);
void pv_dynbuf_putf(struct pv_dynbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *pv_dynbuf_finish(struct pv_dynbuf *b);

#endif
