/* SPDX-License-Identifier: Apache-2.0 */
/* pv_error.c - error table lookups, checked allocation and number parsing */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv.h"

_Thread_local int pv_errno;
_Thread_local const char *pv_debug_str;

static const struct {
    enum pv_category cat;
    const char *msg;
} errors[] = {
#define PV_X_ENTRY(name, cat, msg) {cat, msg},
    PV_ERROR_TABLE(PV_X_ENTRY)
#undef PV_X_ENTRY
};

const char *pv_strerror(int err)
{
    if (err < 0 || err >= PV_ERR__COUNT) {
        return "unknown error";
    }
    return errors[err].msg;
}

enum pv_category pv_error_category(int err)
{
    if (err < 0 || err >= PV_ERR__COUNT) {
        return PV_CAT_INTERNAL;
    }
    return errors[err].cat;
}

void pv_free_p(void *pp)
{
    void **p = pp;
    free(*p);
    *p = NULL;
}

/* Failure injection: PV_FAIL_ALLOC=N fails the Nth allocation (1-based),
 * counted over all threads of the process, so a server's workers share one
 * count: exactly one allocation fails. PV_ALLOC_COUNT=1 counts without
 * failing and prints "pv_alloc: N allocations" on stderr at exit, so a
 * test knows how far to sweep N. The settings are read once, at the first
 * allocation (before any thread starts). */
static atomic_long alloc_fail_at = -1;
static atomic_long alloc_count;
static bool alloc_counting;

static void alloc_report(void)
{
    fprintf(stderr, "pv_alloc: %ld allocations\n", atomic_load(&alloc_count));
}

static bool alloc_should_fail(void)
{
    long at = atomic_load(&alloc_fail_at);

    if (at == -1) {
        const char *e = getenv("PV_FAIL_ALLOC");
        const char *cnt = getenv("PV_ALLOC_COUNT");
        uint64_t v = 0;
        at = 0;
        if (e != NULL && pv_ok(pv_parse_u64(e, strlen(e), 1000000000, &v))) {
            at = (long)v;
        }
        if (cnt != NULL && strcmp(cnt, "1") == 0 && atexit(alloc_report) == 0) {
            alloc_counting = true;
        }
        atomic_store(&alloc_fail_at, at);
    }
    if (at <= 0 && !alloc_counting) {
        return false;
    }
    return atomic_fetch_add(&alloc_count, 1) + 1 == at;
}

void *pv_malloc(size_t n)
{
    void *p;
    if (alloc_should_fail()) {
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    p = malloc(n == 0 ? 1 : n);
    if (p == NULL) {
        pv_errno = PV_ERR_NOMEM;
    }
    return p;
}

void *pv_calloc(size_t n, size_t size)
{
    void *p;
    if (alloc_should_fail()) {
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);
    if (p == NULL) {
        pv_errno = PV_ERR_NOMEM;
    }
    return p;
}

void *pv_realloc(void *p, size_t n)
{
    void *q;
    if (alloc_should_fail()) {
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    q = realloc(p, n == 0 ? 1 : n);
    if (q == NULL) {
        pv_errno = PV_ERR_NOMEM;
    }
    return q;
}

char *pv_strndup(const char *s, size_t n)
{
    char *d = pv_malloc(n + 1);
    if (d == NULL) {
        return NULL;
    }
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *pv_strdup(const char *s)
{
    return pv_strndup(s, strlen(s));
}

pv_result pv_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    PV_ENSURE_REF(s);
    PV_ENSURE(len > 0 && len <= 20, PV_ERR_NUMBER);
    for (size_t i = 0; i < len; i++) {
        unsigned d;
        PV_ENSURE(s[i] >= '0' && s[i] <= '9', PV_ERR_NUMBER);
        d = (unsigned)(s[i] - '0');
        PV_ENSURE(v <= (UINT64_MAX - d) / 10, PV_ERR_NUMBER);
        v = v * 10 + d;
    }
    PV_ENSURE(v <= max, PV_ERR_NUMBER);
    *out = v;
    return PV_RESULT_OK;
}
