/* SPDX-License-Identifier: Apache-2.0 */
/* model_walk.c - table-driven walking of a model_node tree
 *
 * Every document proviso reads as a tree (policies, proposals' rules,
 * credentials, registry descriptors) is checked by the same machinery: an
 * object of the schema is a table of fields (struct model_field: key,
 * handler, destination member); model_walk_map dispatches each key of a
 * mapping to its field's handler, and reports a key that is not in the
 * table as "unknown field 'k' in <ctx>", with "did you mean" when a field
 * is one or two edits away. The generic handlers read the common shapes
 * (string, boolean, unsigned integer, list of strings) into a member at
 * the field's offset and word their errors one way: "field 'k' must be a
 * string". Adding a field to a document is one row in its table.
 *
 * Typing: a JSON scalar must have the JSON type the field wants. A YAML
 * scalar is a string for string fields (quoted or not); a boolean only as
 * the plain scalars true/false; an integer only as plain decimal digits
 * without leading zeros. A YAML null (or JSON null) value means "absent".
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"

void model_walk_err(struct model_walk *w, struct model_mark mark, const char *fmt, ...)
{
    struct pv_dynbuf b;
    va_list ap;
    pv_result r;

    pv_dynbuf_init(&b, 4096);
    va_start(ap, fmt);
    r = pv_dynbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!pv_ok(r) ||
        !pv_ok(model_diag_add(w->diags, w->file, mark, "%s", b.buf != NULL ? b.buf : ""))) {
        w->nomem = true;
    }
    pv_dynbuf_free(&b);
}

void model_walk_nomem(struct model_walk *w)
{
    w->nomem = true;
}

/* User text echoed in a message: control bytes become '?', long text is cut
 * at a UTF-8 boundary. 'out' has room for 80 bytes + "..." + NUL. */
const char *model_walk_shown(char out[MODEL_SHOWN_MAX + 4], const char *s, size_t len)
{
    size_t n = len;
    bool cut = false;

    if (n > MODEL_SHOWN_MAX) {
        n = MODEL_SHOWN_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) {
            n--;
        }
        cut = true;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (cut) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

/* ---------------------------------------------------------------------------
 * Scalar typing
 * ------------------------------------------------------------------------- */

/* Plain YAML decimal integer: -?(0|[1-9][0-9]*). */
bool model_yaml_int_text(const char *s, size_t len)
{
    size_t i = 0;
    if (len > 0 && s[0] == '-') {
        i = 1;
    }
    if (i >= len) {
        return false;
    }
    if (s[i] == '0' && len - i > 1) {
        return false;
    }
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
    }
    return true;
}

bool model_node_is_int(const struct model_node *v)
{
    if (v->kind != MODEL_NODE_SCALAR) {
        return false;
    }
    if (v->json_typed) {
        return v->json_type == JSON_INTEGER;
    }
    return !v->quoted && model_yaml_int_text(v->scalar, v->scalar_len);
}

char *model_walk_dup(struct model_walk *w, const struct model_node *v)
{
    char *s = pv_strndup(v->scalar, v->scalar_len);
    if (s == NULL) {
        model_walk_nomem(w);
    }
    return s;
}

void model_walk_set_sval(struct model_walk *w, struct model_sval *dst, const struct model_node *v)
{
    char *s = model_walk_dup(w, v);
    if (s == NULL) {
        return;
    }
    free(dst->s);
    dst->s = s;
    dst->mark = v->mark;
}

/* Read an unsigned integer no larger than 'max'. Returns false after
 * reporting the problem. 'what' names the field in messages. */
bool model_walk_get_uint(struct model_walk *w, const char *what, const struct model_node *v,
                         uint64_t max, uint64_t *out)
{
    char buf[MODEL_SHOWN_MAX + 4];
    const char *digits;
    size_t n;

    if (!model_node_is_int(v)) {
        model_walk_err(w, v->mark, "field '%s' must be an integer", what);
        return false;
    }
    digits = v->scalar;
    n = v->scalar_len;
    if (n == 0 || digits[0] == '-' || !pv_ok(pv_parse_u64(digits, n, max, out))) {
        if (strcmp(what, "port") == 0 || strcmp(what, "ports") == 0) {
            model_walk_err(w, v->mark, "port %s is out of range (0..%llu)",
                           model_walk_shown(buf, digits, n), (unsigned long long)max);
        } else {
            model_walk_err(w, v->mark, "field '%s' value %s is out of range (0..%llu)", what,
                           model_walk_shown(buf, digits, n), (unsigned long long)max);
        }
        return false;
    }
    return true;
}

/* Edit distance (insert, delete, substitute, swap of neighbours) between the
 * key 'k' ('klen' bytes, at most 32 considered) and 'name', capped at 3;
 * ASCII case is ignored. */
size_t model_edit_distance(const char *k, size_t klen, const char *name)
{
    size_t nlen = strlen(name);
    size_t d[33][33];

    if (klen > 32 || nlen > 32) {
        return 3;
    }
    for (size_t i = 0; i <= klen; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= nlen; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= klen; i++) {
        for (size_t j = 1; j <= nlen; j++) {
            char a = k[i - 1];
            char b = name[j - 1];
            size_t best = d[i - 1][j - 1] + (a == b || (a ^ 0x20) == b ? 0 : 1);

            if (d[i - 1][j] + 1 < best) {
                best = d[i - 1][j] + 1;
            }
            if (d[i][j - 1] + 1 < best) {
                best = d[i][j - 1] + 1;
            }
            if (i > 1 && j > 1 && a == name[j - 2] && k[i - 2] == b && d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[klen][nlen] < 3 ? d[klen][nlen] : 3;
}

/* Whether 'name' is the plural of the key 'k' ('klen' bytes): k + "s", or a
 * k ending in 'y' with "ies" in its place. */
static bool plural_of(const char *k, size_t klen, const char *name)
{
    size_t nlen = strlen(name);

    if (klen < 3 || strncmp(k, name, klen - 1) != 0) {
        return false;
    }
    if (nlen == klen + 1 && k[klen - 1] == name[klen - 1] && name[klen] == 's') {
        return true;
    }
    return k[klen - 1] == 'y' && nlen == klen + 2 && strcmp(name + klen - 1, "ies") == 0;
}

/* The field of 'fields' closest to the unknown key 'k' (distance 1, or 2 for
 * keys of 6 bytes and more), or NULL: "did you mean 'enforcement'?". */
static const char *suggest(const struct model_node *k, const struct model_field *fields,
                           size_t nfields)
{
    const char *best = NULL;
    size_t bestd = k->scalar_len >= 6 ? 3 : 2;

    for (size_t j = 0; j < nfields; j++) {
        size_t dist = model_edit_distance(k->scalar, k->scalar_len, fields[j].key);

        if (plural_of(k->scalar, k->scalar_len, fields[j].key)) {
            return fields[j].key; /* "binary" for "binaries" */
        }

        if (dist < bestd) {
            bestd = dist;
            best = fields[j].key;
        }
    }
    return best;
}

/* Walk the pairs of 'map' through 'fields'. Bit i of the result is set when
 * fields[i] was present. */
uint64_t model_walk_map(struct model_walk *w, const struct model_node *map, const char *ctx,
                        const struct model_field *fields, size_t nfields, void *obj)
{
    uint64_t seen = 0;

    for (size_t i = 0; i + 1 < map->nitems; i += 2) {
        const struct model_node *k = map->items[i];
        const struct model_node *v = map->items[i + 1];
        size_t j;

        if (k->kind != MODEL_NODE_SCALAR) {
            model_walk_err(w, k->mark, "mapping keys must be strings");
            continue;
        }
        for (j = 0; j < nfields; j++) {
            if (model_node_key_is(k, fields[j].key)) {
                break;
            }
        }
        if (j == nfields) {
            char buf[MODEL_SHOWN_MAX + 4];
            const char *near = suggest(k, fields, nfields);

            if (near != NULL) {
                model_walk_err(w, k->mark, "unknown field '%s' in %s (did you mean '%s'?)",
                               model_walk_shown(buf, k->scalar, k->scalar_len), ctx, near);
            } else {
                model_walk_err(w, k->mark, "unknown field '%s' in %s",
                               model_walk_shown(buf, k->scalar, k->scalar_len), ctx);
            }
            continue;
        }
        seen |= (uint64_t)1 << j;
        fields[j].fn(w, &fields[j], k, v, obj);
    }
    return seen;
}

bool model_walk_expect_map(struct model_walk *w, const char *what, const struct model_node *v)
{
    if (v->kind == MODEL_NODE_MAP) {
        return true;
    }
    model_walk_err(w, v->mark, "field '%s' must be a mapping", what);
    return false;
}

/* Lists: NULL means absent (false without a message). */
bool model_walk_expect_list(struct model_walk *w, const char *what, const struct model_node *v)
{
    if (v->kind == MODEL_NODE_SEQ) {
        return true;
    }
    if (v->kind != MODEL_NODE_NULL) {
        model_walk_err(w, v->mark, "field '%s' must be a list", what);
    }
    return false;
}

/* ---------------------------------------------------------------------------
 * Generic field handlers
 * ------------------------------------------------------------------------- */

/* A string field's value: false for null (absent) and, reported, for
 * anything but a string. */
static bool string_value(struct model_walk *w, const struct model_field *f,
                         const struct model_node *v)
{
    if (v->kind == MODEL_NODE_NULL) {
        return false;
    }
    if (!model_node_is_string(v)) {
        model_walk_err(w, v->mark, "field '%s' must be a string", f->key);
        return false;
    }
    return true;
}

void model_field_sval(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    (void)key;
    if (string_value(w, f, v)) {
        model_walk_set_sval(w, MODEL_FIELD_MEMBER(obj, f, struct model_sval), v);
    }
}

void model_field_bool(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    int b;
    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    b = model_node_bool(v);
    if (b < 0) {
        model_walk_err(w, v->mark, "field '%s' must be a boolean (true or false)", f->key);
        return;
    }
    *MODEL_FIELD_MEMBER(obj, f, bool) = b == 1;
}

void model_field_u32(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj)
{
    uint64_t x;
    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    if (model_walk_get_uint(w, f->key, v, UINT32_MAX, &x)) {
        *MODEL_FIELD_MEMBER(obj, f, uint32_t) = (uint32_t)x;
    }
}

void model_walk_strlist(struct model_walk *w, const char *what, const struct model_node *v,
                        struct model_strlist *l)
{
    if (!model_walk_expect_list(w, what, v)) {
        return;
    }
    model_strlist_clear(l);
    l->mark = v->mark;
    if (v->nitems == 0) {
        return;
    }
    l->v = pv_calloc(v->nitems, sizeof(*l->v));
    if (l->v == NULL) {
        model_walk_nomem(w);
        return;
    }
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        if (!model_node_is_string(it)) {
            model_walk_err(w, it->mark, "field '%s' must be a list of strings", what);
            continue;
        }
        model_walk_set_sval(w, &l->v[l->n], it);
        if (l->v[l->n].s != NULL) {
            l->n++;
        }
    }
}

void model_field_strlist(struct model_walk *w, const struct model_field *f,
                         const struct model_node *key, const struct model_node *v, void *obj)
{
    (void)key;
    model_walk_strlist(w, f->key, v, MODEL_FIELD_MEMBER(obj, f, struct model_strlist));
}

/* ---------------------------------------------------------------------------
 * Plain C strings (documents whose objects keep char *)
 * ------------------------------------------------------------------------- */

void model_field_cstr(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    char **dst = MODEL_FIELD_MEMBER(obj, f, char *);
    char *s;

    (void)key;
    if (!string_value(w, f, v)) {
        return;
    }
    if (memchr(v->scalar, '\0', v->scalar_len) != NULL) {
        model_walk_err(w, v->mark, "field '%s' must not contain NUL", f->key);
        return;
    }
    s = model_walk_dup(w, v);
    if (s != NULL) {
        free(*dst);
        *dst = s;
    }
}

void *model_walk_items(struct model_walk *w, const struct model_field *f,
                       const struct model_node *v, size_t size, bool present, size_t *n)
{
    void *arr;

    *n = 0;
    if (!model_walk_expect_list(w, f->key, v) || v->nitems == 0) {
        return NULL;
    }
    if (present) {
        model_walk_err(w, v->mark, "field '%s' is given twice", f->key);
        return NULL;
    }
    arr = pv_calloc(v->nitems, size);
    if (arr == NULL) {
        model_walk_nomem(w);
        return NULL;
    }
    *n = v->nitems;
    return arr;
}
