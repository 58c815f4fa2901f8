/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_proxy_chunked.c - libFuzzer target: the proxy's chunked-body decoder
 *
 * The first byte picks how the input is split into reads (as bytes arrive
 * from a socket); the rest is fed to proxy_chunk_feed() as a chunked
 * request body with extensions, trailers and any bytes at all. Checked:
 * the verdict does not depend on the split; a rejection explains itself;
 * an accepted body's canonical output is itself accepted and re-emitted
 * unchanged (the upstream sees one framing, the proxy's); the output never
 * holds an extension, a trailer, a bare CR or LF outside CRLF pairs.
 *   ./tests/fuzz/fuzz_proxy_chunked -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
    char *buf;
    size_t len;
    size_t cap;
};

static void emit(void *arg, const char *p, size_t n)
{
    struct out *o = arg;

    if (o->len + n > o->cap) {
        size_t cap = (o->len + n) * 2 + 64;
        char *nb = realloc(o->buf, cap);
        if (nb == NULL) {
            abort();
        }
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static enum proxy_chunk_status run(const char *in, size_t len, size_t step, struct out *o,
                                   size_t *used_total)
{
    struct proxy_chunk d;
    enum proxy_chunk_status st = PROXY_CHUNK_MORE;
    size_t off = 0;

    proxy_chunk_init(&d);
    *used_total = 0;
    while (off < len && st == PROXY_CHUNK_MORE) {
        size_t n = len - off < step ? len - off : step;
        size_t used = 0;
        st = proxy_chunk_feed(&d, in + off, n, &used, emit, o);
        if (used > n || (st == PROXY_CHUNK_MORE && used != n)) {
            abort();
        }
        if (st == PROXY_CHUNK_BAD && (d.why == NULL || d.why[0] == '\0')) {
            abort();
        }
        off += used;
        *used_total += used;
    }
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct out a = {NULL, 0, 0};
    struct out b = {NULL, 0, 0};
    struct out c = {NULL, 0, 0};
    size_t ua = 0;
    size_t ub = 0;
    size_t uc = 0;
    size_t step;
    enum proxy_chunk_status sa;
    enum proxy_chunk_status sb;

    if (size == 0) {
        return 0;
    }
    step = (size_t)data[0] % 17 + 1;
    data++;
    size--;
    sa = run((const char *)data, size, size ? size : 1, &a, &ua);
    sb = run((const char *)data, size, step, &b, &ub);
    if (sa != sb || (sa == PROXY_CHUNK_DONE &&
                     (ua != ub || a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0))) {
        abort(); /* the verdict and output do not depend on how bytes arrive */
    }
    if (sa == PROXY_CHUNK_DONE) {
        /* canonical output: accepted as is, re-emitted unchanged */
        if (run(a.buf, a.len, a.len, &c, &uc) != PROXY_CHUNK_DONE || uc != a.len ||
            c.len != a.len || memcmp(a.buf, c.buf, a.len) != 0) {
            abort();
        }
        if (a.len < 5 || memcmp(a.buf + a.len - 5, "0\r\n\r\n", 5) != 0) {
            abort(); /* ends with the last chunk and no trailers */
        }
    }
    free(a.buf);
    free(b.buf);
    free(c.buf);
    return 0;
}
