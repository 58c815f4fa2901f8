/* SPDX-License-Identifier: Apache-2.0 */
/* pv.h - result type, guard macros, error table, cleanup helpers
 *
 * Every fallible function returns pv_result (or a pointer, NULL on error) and
 * records the error code in the thread-local pv_errno. The error table below is
 * the single list of error codes; each has a category that the servers map to
 * an HTTP status and the proxy maps to a deny reason. Depends on nothing.
 */
#ifndef PV_H
#define PV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pv_category {
    PV_CAT_OK,
    PV_CAT_USAGE,
    PV_CAT_PARSE,
    PV_CAT_POLICY,
    PV_CAT_SOLVER,
    PV_CAT_IO,
    PV_CAT_PROTO,
    PV_CAT_INTERNAL,
};

/* X-macro: name, category, message. */
#define PV_ERROR_TABLE(X)                                               \
    X(PV_OK, PV_CAT_OK, "success")                                      \
    X(PV_ERR_NOMEM, PV_CAT_INTERNAL, "out of memory")                   \
    X(PV_ERR_NULL, PV_CAT_INTERNAL, "unexpected NULL pointer")          \
    X(PV_ERR_INTERNAL, PV_CAT_INTERNAL, "internal error")               \
    X(PV_ERR_USAGE, PV_CAT_USAGE, "invalid usage")                      \
    X(PV_ERR_TOOBIG, PV_CAT_PARSE, "input exceeds size limit")          \
    X(PV_ERR_PARSE, PV_CAT_PARSE, "malformed input")                    \
    X(PV_ERR_NUMBER, PV_CAT_PARSE, "invalid number")                    \
    X(PV_ERR_POLICY, PV_CAT_POLICY, "invalid policy")                   \
    X(PV_ERR_PATTERN, PV_CAT_POLICY, "invalid pattern")                 \
    X(PV_ERR_LIMIT, PV_CAT_SOLVER, "automaton or solver limit reached") \
    X(PV_ERR_SOLVER, PV_CAT_SOLVER, "solver failure")                   \
    X(PV_ERR_TIMEOUT, PV_CAT_SOLVER, "solver timeout")                  \
    X(PV_ERR_UNSUPPORTED, PV_CAT_SOLVER, "unsupported construct")       \
    X(PV_ERR_IO, PV_CAT_IO, "I/O error")                                \
    X(PV_ERR_PROTO, PV_CAT_PROTO, "protocol error")                     \
    X(PV_ERR_NOTFOUND, PV_CAT_USAGE, "not found")                       \
    X(PV_ERR_EXISTS, PV_CAT_USAGE, "already exists")                    \
    X(PV_ERR_CONFLICT, PV_CAT_USAGE, "changed concurrently")

enum pv_error {
#define PV_X_ENUM(name, cat, msg) name,
    PV_ERROR_TABLE(PV_X_ENUM)
#undef PV_X_ENUM
        PV_ERR__COUNT
};

typedef struct {
    int err;
} pv_result;

#define PV_WUR __attribute__((warn_unused_result))

extern _Thread_local int pv_errno;
extern _Thread_local const char *pv_debug_str;

const char *pv_strerror(int err);
enum pv_category pv_error_category(int err);

#define PV_STR2(x) #x
#define PV_STR(x) PV_STR2(x)
#define PV_RESULT_OK ((pv_result){PV_OK})
#define pv_ok(r) ((r).err == PV_OK)

static inline pv_result pv_fail(int err, const char *where)
{
    pv_errno = err;
    pv_debug_str = where;
    return (pv_result){err};
}

#define PV_BAIL(e) return pv_fail((e), __FILE__ ":" PV_STR(__LINE__))
#define PV_GUARD(x)                  \
    do {                             \
        pv_result pv_guard_r_ = (x); \
        if (!pv_ok(pv_guard_r_)) {   \
            return pv_guard_r_;      \
        }                            \
    } while (0)
#define PV_ENSURE(cond, e) \
    do {                   \
        if (!(cond)) {     \
            PV_BAIL(e);    \
        }                  \
    } while (0)
#define PV_ENSURE_REF(p) PV_ENSURE((p) != NULL, PV_ERR_NULL)
#define PV_GUARD_PTR(p)                                  \
    do {                                                 \
        if ((p) == NULL) {                               \
            PV_BAIL(pv_errno ? pv_errno : PV_ERR_NOMEM); \
        }                                                \
    } while (0)
/* libyaml returns 1 on success, jansson 0 on success, OpenSSL 1. */
#define PV_GUARD_YAML(x, e) PV_ENSURE((x) == 1, e)
#define PV_GUARD_JSON(x, e) PV_ENSURE((x) == 0, e)
#define PV_GUARD_OSSL(x, e) PV_ENSURE((x) == 1, e)

/* Scope-bound cleanup (gcc and clang). */
#define PV_DEFER(decl, fn) decl __attribute__((cleanup(fn)))
#define PV_DISOWN(p) ((p) = NULL)
#define PV_SAFE_FREE(p) \
    do {                \
        free(p);        \
        (p) = NULL;     \
    } while (0)

void pv_free_p(void *pp); /* cleanup helper: free(*(void **)pp) */
/* A const pointer handed to something that is not const-correct but only
 * reads through it: jansson's iteration and reference counts,
 * libmicrohttpd's persistent buffers and options, and the advisor's store
 * records, which own their strings when a getter filled them and borrow
 * them when a caller builds one for a write (advisor/store/store.h). Never write
 * data through the result. */
#define PV_UNCONST(p) ((void *)(uintptr_t)(const void *)(p))

#ifdef PV_UNIT_TESTS
#define PV_STATIC
#else
#define PV_STATIC static
#endif

#define PV_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Checked allocation: in test builds pv_malloc can be told to fail the Nth call
 * through the environment variable PV_FAIL_ALLOC=N. */
void *pv_malloc(size_t n);
void *pv_calloc(size_t n, size_t size);
void *pv_realloc(void *p, size_t n);
char *pv_strndup(const char *s, size_t n);
char *pv_strdup(const char *s);

/* Checked number parsing: decimal digits only, no sign, no whitespace, value
 * <= max. Returns PV_ERR_NUMBER otherwise. */
pv_result pv_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out) PV_WUR;

#endif
