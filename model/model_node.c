/* SPDX-License-Identifier: Apache-2.0 */
/* model_node.c - shared helpers for walking model_node trees
 *
 * The strict readers of node trees (credentials in model_cred.c, registry
 * descriptors in model_registry.c, policy.local proposals in model_merge.c,
 * the policy schema in model_schema.c) need the same small pieces: matching
 * a key, typing a scalar, copying a string or list of strings out of the
 * tree, and reporting a problem at the node's file:line:col. They live here
 * once, so a rule (what counts as a string or a boolean, how user text is
 * echoed) cannot drift between readers.
 *
 * Invariants: nothing here trusts the tree's text. Echoed text goes through
 * model_node_printable (printable ASCII only, bounded, cut with "..."), and
 * messages are bounded at NODE_MSG_MAX bytes before they reach the diagnostics
 * list. A getter that reports a wrong shape leaves its output unchanged; a
 * NULL diagnostics list drops the message.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

#define NODE_MSG_MAX 1024

static void vdiag(struct model_diags *d, const char *file, struct model_mark m, const char *fmt,
                  va_list ap) __attribute__((format(printf, 4, 0)));

static void vdiag(struct model_diags *d, const char *file, struct model_mark m, const char *fmt,
                  va_list ap)
{
    char msg[NODE_MSG_MAX];

    if (d == NULL) {
        return;
    }
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (!pv_ok(model_diag_add(d, file, m, "%s", msg))) {
        pv_errno = PV_ERR_NOMEM;
    }
}

void model_node_diag(struct model_diags *d, const char *file, struct model_mark m, const char *fmt,
                     ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdiag(d, file, m, fmt, ap);
    va_end(ap);
}

void model_node_report(const struct model_node_ctx *c, struct model_mark m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdiag(c->diags, c->file, m, fmt, ap);
    va_end(ap);
}

void model_node_printable(char *out, size_t outlen, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < outlen; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (n > 0 && o + 4 >= outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

bool model_node_key_is(const struct model_node *k, const char *s)
{
    size_t n = strlen(s);
    return k->kind == MODEL_NODE_SCALAR && k->scalar_len == n && memcmp(k->scalar, s, n) == 0;
}

int model_node_key_index(const struct model_node *k, const char *const *keys)
{
    for (int i = 0; keys[i] != NULL; i++) {
        if (model_node_key_is(k, keys[i])) {
            return i;
        }
    }
    return -1;
}

bool model_node_is_string(const struct model_node *v)
{
    return v->kind == MODEL_NODE_SCALAR && (!v->json_typed || v->json_type == JSON_STRING);
}

int model_node_bool(const struct model_node *v)
{
    if (v->kind != MODEL_NODE_SCALAR) {
        return -1;
    }
    if (v->json_typed) {
        if (v->json_type == JSON_TRUE) {
            return 1;
        }
        return v->json_type == JSON_FALSE ? 0 : -1;
    }
    if (v->quoted) {
        return -1;
    }
    if (v->scalar_len == 4 && memcmp(v->scalar, "true", 4) == 0) {
        return 1;
    }
    if (v->scalar_len == 5 && memcmp(v->scalar, "false", 5) == 0) {
        return 0;
    }
    return -1;
}

void model_node_unknown_key(const struct model_node_ctx *c, const struct model_node *k,
                            const char *where)
{
    char buf[96];
    model_node_printable(buf, sizeof(buf), k->scalar != NULL ? k->scalar : "", k->scalar_len);
    model_node_report(c, k->mark, "unknown field '%s' in %s", buf, where);
}

const struct model_node *model_node_member(const struct model_node *map, const char *key)
{
    if (map == NULL || map->kind != MODEL_NODE_MAP) {
        return NULL;
    }
    for (size_t i = 0; i + 1 < map->nitems; i += 2) {
        if (model_node_key_is(map->items[i], key)) {
            return map->items[i + 1];
        }
    }
    return NULL;
}

/* ===========================================================================
 * The read-only node API of model.h
 * ========================================================================= */

enum model_node_kind model_node_kind_of(const struct model_node *n)
{
    return n->kind;
}

void model_node_where(const struct model_node *n, uint32_t *line, uint32_t *col)
{
    *line = n->mark.line;
    *col = n->mark.col;
}

const char *model_node_text(const struct model_node *n, size_t *len)
{
    if (n->kind != MODEL_NODE_SCALAR) {
        *len = 0;
        return NULL;
    }
    *len = n->scalar_len;
    return n->scalar;
}

size_t model_node_npairs(const struct model_node *map)
{
    return map->kind == MODEL_NODE_MAP ? map->nitems / 2 : 0;
}

const struct model_node *model_node_pair(const struct model_node *map, size_t i,
                                         const struct model_node **value)
{
    *value = map->items[2 * i + 1];
    return map->items[2 * i];
}
