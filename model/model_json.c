/* SPDX-License-Identifier: Apache-2.0 */
/* model_json.c - JSON policy reader: jansson document to a model_node tree
 *
 * jansson decides what is valid JSON (strict RFC 8259: duplicate keys, NUL
 * in strings, trailing bytes and integers that overflow are errors, reported
 * with jansson's line:column and text). jansson keeps no per-value
 * positions, so after it has accepted the document a small scanner walks
 * the same bytes and records where every value and every key starts, in
 * document order. The tree walk visits values in the same order (jansson
 * iterates an object in insertion order, which is document order), so the
 * n-th value visited gets the n-th position. Each position also records the
 * first byte of its token, which is checked against the value's type; a
 * mismatch (which would be our bug) degrades to unknown marks, never to a
 * wrong tree. Scalars carry their exact JSON type (json_typed), so "443" is
 * a string and 443 an integer for the schema walker.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

#define MAX_DEPTH 64
#define MAX_NODES 1000000u

struct pos {
    struct model_mark mark;
    char tok; /* first byte: '{' '[' '"' 't' 'f' 'n' or a number byte */
};

struct jreader {
    const char *file;
    struct model_diags *diags;
    struct pos *pos;
    size_t npos;
    size_t next;
    bool lost; /* positions disagree with the tree: stop attaching marks */
    bool failed;
};

static void note(struct jreader *r, struct model_mark mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(struct jreader *r, struct model_mark mark, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (r->failed) {
        return;
    }
    r->failed = true;
    va_start(ap, fmt);
    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!pv_ok(model_diag_add(r->diags, r->file, mark, "%s", buf))) {
        pv_errno = PV_ERR_NOMEM;
    }
}

/* ---------------------------------------------------------------------------
 * Position scanner (runs only on bytes jansson has accepted)
 * ------------------------------------------------------------------------- */

static bool push_pos(struct jreader *r, size_t *cap, struct model_mark m, char tok)
{
    if (r->npos == *cap) {
        size_t ncap = *cap == 0 ? 256 : *cap * 2;
        struct pos *np = pv_realloc(r->pos, ncap * sizeof(*np));
        if (np == NULL) {
            return false;
        }
        r->pos = np;
        *cap = ncap;
    }
    r->pos[r->npos].mark = m;
    r->pos[r->npos].tok = tok;
    r->npos++;
    return true;
}

static bool is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

static pv_result scan_positions(struct jreader *r, const char *buf, size_t len)
{
    uint32_t line = 1, col = 0; /* col = characters consumed on this line */
    size_t cap = 0;
    size_t i = 0;

    while (i < len) {
        unsigned char c = (unsigned char)buf[i];
        struct model_mark m;

        if (c == '\n') {
            line++;
            col = 0;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == ':' || c == ',' || c == '}' || c == ']') {
            col++;
            i++;
            continue;
        }
        m.line = line;
        m.col = col + 1;
        PV_ENSURE(r->npos < MAX_NODES, PV_ERR_TOOBIG);
        PV_ENSURE(push_pos(r, &cap, m, (char)c), PV_ERR_NOMEM);
        if (c == '{' || c == '[') {
            col++;
            i++;
        } else if (c == '"') {
            /* Strings never contain a raw newline in valid JSON. */
            col++;
            i++;
            while (i < len && buf[i] != '"') {
                if (buf[i] == '\\') {
                    col++;
                    i++;
                }
                if (i < len && !is_cont((unsigned char)buf[i])) {
                    col++;
                }
                i++;
            }
            col++;
            i++;
        } else {
            /* number or literal: up to the next structural or blank byte */
            while (i < len && strchr(" \t\r\n,:]}", buf[i]) == NULL) {
                col++;
                i++;
            }
        }
    }
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Tree walk
 * ------------------------------------------------------------------------- */

static bool tok_matches(char tok, json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return tok == '{';
    case JSON_ARRAY:
        return tok == '[';
    case JSON_STRING:
        return tok == '"';
    case JSON_TRUE:
        return tok == 't';
    case JSON_FALSE:
        return tok == 'f';
    case JSON_NULL:
        return tok == 'n';
    case JSON_INTEGER:
    case JSON_REAL:
        return tok == '-' || (tok >= '0' && tok <= '9');
    default:
        return false;
    }
}

static struct model_mark take_mark(struct jreader *r, json_t *j)
{
    struct model_mark none = {0, 0};
    if (r->lost || r->next >= r->npos || !tok_matches(r->pos[r->next].tok, j)) {
        r->lost = true;
        return none;
    }
    return r->pos[r->next++].mark;
}

static struct model_node *new_node(struct jreader *r, enum model_node_kind kind,
                                   struct model_mark mark, int jtype)
{
    struct model_node *n = pv_calloc(1, sizeof(*n));
    if (n == NULL) {
        note(r, mark, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->mark = mark;
    n->json_typed = true;
    n->json_type = jtype;
    return n;
}

static bool set_text(struct jreader *r, struct model_node *n, const char *s, size_t len)
{
    n->scalar = pv_strndup(s, len);
    if (n->scalar == NULL) {
        note(r, n->mark, "out of memory");
        return false;
    }
    n->scalar_len = len;
    return true;
}

static struct model_node *build(struct jreader *r, json_t *j, size_t depth);

static bool append(struct jreader *r, struct model_node *parent, size_t *cap,
                   struct model_node *child)
{
    if (parent->nitems == *cap) {
        size_t ncap = *cap == 0 ? 8 : *cap * 2;
        struct model_node **items = pv_realloc(parent->items, ncap * sizeof(*items));
        if (items == NULL) {
            model_node_free(child);
            note(r, parent->mark, "out of memory");
            return false;
        }
        parent->items = items;
        *cap = ncap;
    }
    parent->items[parent->nitems++] = child;
    return true;
}

static bool build_object(struct jreader *r, json_t *j, struct model_node *n, size_t depth)
{
    const char *k;
    json_t *v;
    size_t cap = 0;

    json_object_foreach(j, k, v)
    {
        struct model_node *kn;
        struct model_node *vn;
        /* Keys are strings; their token precedes the value's. */
        struct model_mark km = {0, 0};
        if (!r->lost && r->next < r->npos && r->pos[r->next].tok == '"') {
            km = r->pos[r->next++].mark;
        } else {
            r->lost = true;
        }
        kn = new_node(r, MODEL_NODE_SCALAR, km, JSON_STRING);
        if (kn == NULL) {
            return false;
        }
        kn->quoted = true;
        if (!set_text(r, kn, k, strlen(k))) {
            model_node_free(kn);
            return false;
        }
        if (!append(r, n, &cap, kn)) {
            return false;
        }
        vn = build(r, v, depth + 1);
        if (vn == NULL || !append(r, n, &cap, vn)) {
            return false;
        }
    }
    return true;
}

static bool build_array(struct jreader *r, json_t *j, struct model_node *n, size_t depth)
{
    size_t cap = 0;
    size_t i;
    json_t *v;

    json_array_foreach(j, i, v)
    {
        struct model_node *vn = build(r, v, depth + 1);
        if (vn == NULL || !append(r, n, &cap, vn)) {
            return false;
        }
    }
    return true;
}

/* Depth is checked before descending, so recursion is bounded by MAX_DEPTH. */
static struct model_node *build(struct jreader *r, json_t *j, size_t depth)
{
    struct model_mark m = take_mark(r, j);
    struct model_node *n = NULL;
    char num[64];
    bool ok = true;
    int t = (int)json_typeof(j);

    switch (json_typeof(j)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        if (depth >= MAX_DEPTH) {
            note(r, m, "nesting is deeper than 64 levels");
            return NULL;
        }
        n = new_node(r, t == JSON_OBJECT ? MODEL_NODE_MAP : MODEL_NODE_SEQ, m, t);
        if (n != NULL) {
            ok = t == JSON_OBJECT ? build_object(r, j, n, depth) : build_array(r, j, n, depth);
        }
        break;
    case JSON_STRING:
        n = new_node(r, MODEL_NODE_SCALAR, m, t);
        if (n != NULL) {
            n->quoted = true;
            ok = set_text(r, n, json_string_value(j), json_string_length(j));
        }
        break;
    case JSON_INTEGER:
        n = new_node(r, MODEL_NODE_SCALAR, m, t);
        if (n != NULL) {
            int w = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
            ok = set_text(r, n, num, (size_t)w);
        }
        break;
    case JSON_REAL:
        n = new_node(r, MODEL_NODE_SCALAR, m, t);
        if (n != NULL) {
            int w = snprintf(num, sizeof(num), "%.17g", json_real_value(j));
            ok = set_text(r, n, num, (size_t)w);
        }
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        n = new_node(r, MODEL_NODE_SCALAR, m, t);
        if (n != NULL) {
            ok = t == JSON_TRUE ? set_text(r, n, "true", 4) : set_text(r, n, "false", 5);
        }
        break;
    case JSON_NULL:
        n = new_node(r, MODEL_NODE_NULL, m, t);
        break;
    default:
        note(r, m, "unexpected JSON value");
        return NULL;
    }
    if (!ok) {
        model_node_free(n);
        return NULL;
    }
    return n;
}

static bool all_blank(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (strchr(" \t\r\n", buf[i]) == NULL || buf[i] == '\0') {
            return false;
        }
    }
    return true;
}

struct model_node *model_json_read(const char *file, const char *buf, size_t len,
                                   struct model_diags *diags)
{
    struct jreader r;
    json_error_t jerr;
    json_t *doc;
    struct model_node *root;
    pv_result sr;

    memset(&r, 0, sizeof(r));
    r.file = file != NULL ? file : "<input>";
    r.diags = diags;
    if (diags == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (buf == NULL || all_blank(buf, len)) {
        note(&r, (struct model_mark){1, 1}, "empty policy document");
        pv_errno = PV_ERR_PARSE;
        return NULL;
    }
    doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        struct model_mark m = {0, 0};
        if (jerr.line > 0) {
            m.line = (uint32_t)jerr.line;
            m.col = jerr.column > 0 ? (uint32_t)jerr.column : 1;
        }
        note(&r, m, "invalid JSON: %s", jerr.text);
        pv_errno = PV_ERR_PARSE;
        return NULL;
    }
    sr = scan_positions(&r, buf, len);
    if (!pv_ok(sr)) {
        note(&r, (struct model_mark){0, 0}, "%s",
             sr.err == PV_ERR_TOOBIG ? "document has more than 1000000 nodes" : "out of memory");
        json_decref(doc);
        free(r.pos);
        pv_errno = sr.err;
        return NULL;
    }
    root = build(&r, doc, 0);
    json_decref(doc);
    free(r.pos);
    if (root == NULL || r.failed) {
        model_node_free(root);
        pv_errno = PV_ERR_PARSE;
        return NULL;
    }
    return root;
}
