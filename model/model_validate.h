/* SPDX-License-Identifier: Apache-2.0 */
/* model_validate.h - state and helpers shared by the validator's files (model/ only)
 *
 * model_validate.c holds the entry point, the top-level checks (version,
 * process, filesystem) and the rule loop; model_validate_endpoint.c
 * normalises and checks one network endpoint (ports, host, signing, L7,
 * allowed_ips, target_sandbox). Both report through model_vd_report*(),
 * which count every diagnostic in the shared struct vctx.
 */
#ifndef MODEL_VALIDATE_H
#define MODEL_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "model/model_int.h"

#define MAX_FS_PATHS 256
#define MAX_FS_PATH_LEN 4096
#define MAX_DNS_LABEL 63
#define MAX_DNS_NAME 253
#define MSG_MAX 2048

struct vctx {
    struct model_diags *diags;
    const char *file;
    const char *name; /* display name of the current rule */
    size_t index;     /* index of the current endpoint within its rule */
    const char *host; /* host of the current endpoint, for messages */
    size_t nerr;
    bool nomem;
};

static inline struct model_mark mark_or(struct model_mark m, struct model_mark fallback)
{
    return m.line != 0 ? m : fallback;
}

/* One diagnostic at 'm' (printf-style; cut at MSG_MAX), counted in 'c'. */
__attribute__((format(printf, 3, 4))) void model_vd_report(struct vctx *c, struct model_mark m,
                                                           const char *fmt, ...);
/* "network policy '{name}': endpoint {index} has invalid L7 configuration: ..." */
__attribute__((format(printf, 3, 4))) void model_vd_report_l7(struct vctx *c, struct model_mark m,
                                                              const char *fmt, ...);
/* Report 'pat' when it does not compile as a glob of 'kind'. */
void model_vd_check_glob(struct vctx *c, enum model_glob_kind kind, const char *pat,
                         struct model_mark m);
/* The same, naming the pattern's kind 'word' in the message ("GraphQL
 * fields" for a field glob compiled as MODEL_GLOB_VALUE). */
void model_vd_check_glob_as(struct vctx *c, enum model_glob_kind kind, const char *word,
                            const char *pat, struct model_mark m);
/* The call rules and options of a json-rpc or mcp endpoint (model_validate_rpc.c). */
void model_vd_check_rpc(struct vctx *c, const struct model_endpoint *e);
/* Normalise endpoint 'e' in place and check it (model_validate_endpoint.c). */
void model_vd_check_endpoint(struct vctx *c, struct model_endpoint *e);

/* ===========================================================================
 * Small string helpers (ASCII only: no locale)
 * ========================================================================= */

static inline bool str_empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

static inline const char *str_or_empty(const char *s)
{
    return s == NULL ? "" : s;
}

static inline bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

static inline bool is_alpha(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static inline bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static inline bool all_space(const char *s)
{
    for (; *s != '\0'; s++) {
        if (!is_space(*s)) {
            return false;
        }
    }
    return true;
}

static inline void ascii_lower(char *s)
{
    for (; *s != '\0'; s++) {
        if (*s >= 'A' && *s <= 'Z') {
            *s = (char)(*s - 'A' + 'a');
        }
    }
}

static inline void ascii_upper(char *s)
{
    for (; *s != '\0'; s++) {
        if (*s >= 'a' && *s <= 'z') {
            *s = (char)(*s - 'a' + 'A');
        }
    }
}

static inline bool ascii_ieq(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
        char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) {
            return false;
        }
    }
    return *a == *b;
}

static inline bool str_in(const char *s, const char *const *set)
{
    for (size_t i = 0; set[i] != NULL; i++) {
        if (strcmp(s, set[i]) == 0) {
            return true;
        }
    }
    return false;
}

static inline bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* RFC 7230 token: 1*tchar. */
static inline bool method_token(const char *m)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if (m[0] == '\0') {
        return false;
    }
    for (const char *q = m; *q != '\0'; q++) {
        if (!is_alpha(*q) && !is_digit(*q) && strchr(extra, *q) == NULL) {
            return false;
        }
    }
    return true;
}

#endif /* MODEL_VALIDATE_H */
