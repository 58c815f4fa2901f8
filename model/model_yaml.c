/* SPDX-License-Identifier: Apache-2.0 */
/* model_yaml.c - YAML policy reader: libyaml events to a model_node tree
 *
 * The reader accepts the subset of YAML that a policy needs: one document of
 * mappings, sequences and scalars. Anchors, aliases, explicit tags (other
 * than the core str/map/seq tags), non-scalar keys, duplicate keys, more than
 * one document, nesting deeper than MAX_DEPTH and more than MAX_NODES nodes
 * are errors, reported once with the location of the offending event; the
 * first error ends the read. Plain scalars spelled as YAML null become
 * MODEL_NODE_NULL; every other scalar keeps its text and whether it was
 * quoted, so the schema walker can tell "1" from 1. Marks are 1-based.
 *
 * The parser and each event are deleted in this file's functions that
 * created them; the tree is built with an explicit stack (no recursion on
 * untrusted depth).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "model/model_int.h"

#define MAX_DEPTH 64
#define MAX_NODES 1000000u

struct frame {
    struct model_node *n;
    size_t cap;
};

struct reader {
    const char *file;
    const char *buf;
    size_t len;
    struct model_diags *diags;
    struct model_node *root; /* owns the whole tree */
    struct frame stack[MAX_DEPTH];
    size_t depth;
    size_t nnodes;
    unsigned ndocs;
    bool failed;
    bool dup_ok;   /* duplicate keys allowed (model_yaml_json's callers) */
    bool empty_ok; /* an empty document is a null node (model_yaml_tree) */
};

static struct model_mark ymark(yaml_mark_t m)
{
    struct model_mark k;
    k.line = m.line >= UINT32_MAX ? UINT32_MAX : (uint32_t)m.line + 1;
    k.col = m.column >= UINT32_MAX ? UINT32_MAX : (uint32_t)m.column + 1;
    return k;
}

static void note(struct reader *r, struct model_mark mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(struct reader *r, struct model_mark mark, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!pv_ok(model_diag_add(r->diags, r->file, mark, "%s", buf))) {
        pv_errno = PV_ERR_NOMEM;
    }
}

/* Record the first error; later ones would only be consequences of it. */
static void fail(struct reader *r, struct model_mark mark, const char *msg)
{
    if (r->failed) {
        return;
    }
    r->failed = true;
    note(r, mark, "%s", msg);
}

/* Line and column (1-based, columns in characters) of byte 'off'. */
static struct model_mark offset_mark(const char *buf, size_t len, size_t off)
{
    struct model_mark m = {1, 1};
    if (off > len) {
        off = len;
    }
    for (size_t i = 0; i < off; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n') {
            m.line++;
            m.col = 1;
        } else if ((c & 0xC0) != 0x80) {
            m.col++;
        }
    }
    return m;
}

static void fail_parser(struct reader *r, const yaml_parser_t *p)
{
    struct model_mark mark;
    const char *problem = p->problem != NULL ? p->problem : "unknown error";

    if (r->failed) {
        return;
    }
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        r->failed = true;
        note(r, (struct model_mark){0, 0}, "out of memory");
        return;
    case YAML_READER_ERROR:
        mark = offset_mark(r->buf, r->len, p->problem_offset);
        r->failed = true;
        note(r, mark, "invalid YAML: %s", problem);
        return;
    case YAML_NO_ERROR:
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
    case YAML_COMPOSER_ERROR:
    case YAML_WRITER_ERROR:
    case YAML_EMITTER_ERROR:
    default:
        break;
    }
    mark = ymark(p->problem_mark);
    r->failed = true;
    if (p->context != NULL) {
        note(r, mark, "invalid YAML: %s %s", problem, p->context);
    } else {
        note(r, mark, "invalid YAML: %s", problem);
    }
}

static bool is_yaml_null(const char *s, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < PV_ARRAY_LEN(nulls); i++) {
        if (strlen(nulls[i]) == len && memcmp(nulls[i], s, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Is the next node of the innermost collection a mapping key? */
static bool at_key(const struct reader *r)
{
    const struct model_node *parent;
    if (r->depth == 0) {
        return false;
    }
    parent = r->stack[r->depth - 1].n;
    return parent->kind == MODEL_NODE_MAP && parent->nitems % 2 == 0;
}

/* Attach 'n' (steals) to the innermost collection, or make it the root. */
static pv_result attach(struct reader *r, struct model_node *n)
{
    struct frame *f;

    if (r->depth == 0) {
        if (r->root != NULL) {
            model_node_free(n);
            PV_BAIL(PV_ERR_INTERNAL);
        }
        r->root = n;
        return PV_RESULT_OK;
    }
    f = &r->stack[r->depth - 1];
    if (f->n->nitems == f->cap) {
        size_t ncap = f->cap == 0 ? 8 : f->cap * 2;
        struct model_node **items = pv_realloc(f->n->items, ncap * sizeof(*items));
        if (items == NULL) {
            model_node_free(n);
            PV_BAIL(PV_ERR_NOMEM);
        }
        f->n->items = items;
        f->cap = ncap;
    }
    f->n->items[f->n->nitems++] = n;
    return PV_RESULT_OK;
}

static struct model_node *new_node(struct reader *r, enum model_node_kind kind,
                                   struct model_mark mark)
{
    struct model_node *n;
    if (r->nnodes >= MAX_NODES) {
        fail(r, mark, "document has more than 1000000 nodes");
        return NULL;
    }
    n = pv_calloc(1, sizeof(*n));
    if (n == NULL) {
        fail(r, mark, "out of memory");
        return NULL;
    }
    r->nnodes++;
    n->kind = kind;
    n->mark = mark;
    return n;
}

static bool tag_is(const yaml_char_t *tag, const char *want)
{
    return tag == NULL || strcmp((const char *)tag, want) == 0;
}

static void on_scalar(struct reader *r, const yaml_event_t *ev)
{
    struct model_mark mark = ymark(ev->start_mark);
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    bool key = at_key(r);
    bool quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    struct model_node *n;

    if (ev->data.scalar.anchor != NULL) {
        fail(r, mark, "aliases and anchors are not supported");
        return;
    }
    if (ev->data.scalar.tag != NULL) {
        /* "!" is the non-specific tag of a quoted scalar; !!str forces a string. */
        if (!tag_is(ev->data.scalar.tag, "tag:yaml.org,2002:str") &&
            !tag_is(ev->data.scalar.tag, "!")) {
            fail(r, mark, "YAML tags are not supported");
            return;
        }
        quoted = true;
    }
    if (memchr(s, '\0', len) != NULL) {
        fail(r, mark, "string contains a NUL byte");
        return;
    }
    if (!key && !quoted && is_yaml_null(s, len)) {
        n = new_node(r, MODEL_NODE_NULL, mark);
        if (n == NULL) {
            return;
        }
    } else {
        n = new_node(r, MODEL_NODE_SCALAR, mark);
        if (n == NULL) {
            return;
        }
        n->scalar = pv_strndup(s, len);
        n->scalar_len = len;
        n->quoted = quoted;
        if (n->scalar == NULL) {
            model_node_free(n);
            fail(r, mark, "out of memory");
            return;
        }
    }
    if (!pv_ok(attach(r, n))) {
        fail(r, mark, "out of memory");
    }
}

static void on_collection_start(struct reader *r, const yaml_event_t *ev)
{
    struct model_mark mark = ymark(ev->start_mark);
    bool map = ev->type == YAML_MAPPING_START_EVENT;
    const yaml_char_t *anchor =
        map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    const yaml_char_t *tag = map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    struct model_node *n;

    if (anchor != NULL) {
        fail(r, mark, "aliases and anchors are not supported");
        return;
    }
    if (tag != NULL && !tag_is(tag, map ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq")) {
        fail(r, mark, "YAML tags are not supported");
        return;
    }
    if (at_key(r)) {
        fail(r, mark, "mapping keys must be scalars");
        return;
    }
    if (r->depth >= MAX_DEPTH) {
        fail(r, mark, "nesting is deeper than 64 levels");
        return;
    }
    n = new_node(r, map ? MODEL_NODE_MAP : MODEL_NODE_SEQ, mark);
    if (n == NULL) {
        return;
    }
    if (!pv_ok(attach(r, n))) {
        fail(r, mark, "out of memory");
        return;
    }
    r->stack[r->depth].n = n;
    r->stack[r->depth].cap = 0;
    r->depth++;
}

static int cmp_key(const void *a, const void *b)
{
    const struct model_node *x = *(const struct model_node *const *)a;
    const struct model_node *y = *(const struct model_node *const *)b;
    size_t n = x->scalar_len < y->scalar_len ? x->scalar_len : y->scalar_len;
    int c = memcmp(x->scalar, y->scalar, n);

    if (c != 0) {
        return c;
    }
    if (x->scalar_len != y->scalar_len) {
        return x->scalar_len < y->scalar_len ? -1 : 1;
    }
    /* Document order, so the later duplicate is reported. */
    if (x->mark.line != y->mark.line) {
        return x->mark.line < y->mark.line ? -1 : 1;
    }
    if (x->mark.col != y->mark.col) {
        return x->mark.col < y->mark.col ? -1 : 1;
    }
    return 0;
}

static bool mark_before(struct model_mark a, struct model_mark b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* Report the first (in document order) key that repeats an earlier one. */
static void check_duplicates(struct reader *r, const struct model_node *map)
{
    size_t npairs = map->nitems / 2;
    const struct model_node **keys;
    const struct model_node *dup = NULL;

    if (npairs < 2) {
        return;
    }
    keys = pv_malloc(npairs * sizeof(*keys));
    if (keys == NULL) {
        fail(r, map->mark, "out of memory");
        return;
    }
    for (size_t i = 0; i < npairs; i++) {
        keys[i] = map->items[2 * i];
    }
    qsort(keys, npairs, sizeof(*keys), cmp_key);
    for (size_t i = 1; i < npairs; i++) {
        if (keys[i]->scalar_len == keys[i - 1]->scalar_len &&
            memcmp(keys[i]->scalar, keys[i - 1]->scalar, keys[i]->scalar_len) == 0 &&
            (dup == NULL || mark_before(keys[i]->mark, dup->mark))) {
            dup = keys[i];
        }
    }
    if (dup != NULL) {
        if (r->failed) {
            free(keys);
            return;
        }
        r->failed = true;
        note(r, dup->mark, "duplicate key '%.*s'",
             dup->scalar_len > 200 ? 200 : (int)dup->scalar_len, dup->scalar);
    }
    free(keys);
}

static void on_collection_end(struct reader *r, const yaml_event_t *ev)
{
    struct model_node *n;

    if (r->depth == 0) {
        fail(r, ymark(ev->start_mark), "unbalanced YAML collection");
        return;
    }
    n = r->stack[r->depth - 1].n;
    r->depth--;
    if (n->kind == MODEL_NODE_MAP) {
        if (!r->dup_ok) {
            check_duplicates(r, n);
        }
    }
}

/* One event; returns false when the stream has ended. */
static bool on_event(struct reader *r, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_STREAM_START_EVENT:
    case YAML_DOCUMENT_END_EVENT:
    case YAML_NO_EVENT:
        return true;
    case YAML_STREAM_END_EVENT:
        return false;
    case YAML_DOCUMENT_START_EVENT:
        r->ndocs++;
        if (r->ndocs > 1) {
            fail(r, ymark(ev->start_mark), "more than one YAML document");
        }
        return true;
    case YAML_ALIAS_EVENT:
        fail(r, ymark(ev->start_mark), "aliases and anchors are not supported");
        return true;
    case YAML_SCALAR_EVENT:
        on_scalar(r, ev);
        return true;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        on_collection_start(r, ev);
        return true;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        on_collection_end(r, ev);
        return true;
    default:
        fail(r, ymark(ev->start_mark), "unexpected YAML event");
        return true;
    }
}

struct model_node *model_yaml_read(const char *file, const char *buf, size_t len,
                                   struct model_diags *diags)
{
    return model_yaml_read_dup(file, buf, len, false, diags);
}

/* The reader behind model_yaml_read_dup and model_yaml_tree. */
static struct model_node *read_doc(const char *file, const char *buf, size_t len, bool dup_ok,
                                   bool empty_ok, struct model_diags *diags)
{
    struct reader r;
    yaml_parser_t parser;
    struct model_mark end_mark = {1, 1};

    memset(&r, 0, sizeof(r));
    r.dup_ok = dup_ok;
    r.empty_ok = empty_ok;
    r.file = file != NULL ? file : "<input>";
    r.buf = buf;
    r.len = len;
    r.diags = diags;
    if (diags == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (!yaml_parser_initialize(&parser)) {
        note(&r, (struct model_mark){0, 0}, "out of memory");
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)(buf != NULL ? buf : ""), len);
    while (!r.failed) {
        yaml_event_t ev;
        bool more;
        if (!yaml_parser_parse(&parser, &ev)) {
            fail_parser(&r, &parser);
            break;
        }
        if (ev.type == YAML_STREAM_END_EVENT) {
            end_mark = ymark(ev.start_mark);
        }
        more = on_event(&r, &ev);
        yaml_event_delete(&ev);
        if (!more) {
            break;
        }
    }
    yaml_parser_delete(&parser);
    if (!r.failed && r.empty_ok && r.root == NULL) {
        r.root = new_node(&r, MODEL_NODE_NULL, end_mark);
    } else if (!r.failed && !r.empty_ok && (r.root == NULL || r.root->kind == MODEL_NODE_NULL)) {
        fail(&r, r.root != NULL ? r.root->mark : end_mark, "empty policy document");
    }
    if (r.failed) {
        model_node_free(r.root);
        pv_errno = PV_ERR_PARSE;
        return NULL;
    }
    return r.root;
}

struct model_node *model_yaml_read_dup(const char *file, const char *buf, size_t len, bool dup_ok,
                                       struct model_diags *diags)
{
    return read_doc(file, buf, len, dup_ok, false, diags);
}

struct model_node *model_yaml_tree(const char *file, const char *buf, size_t len,
                                   struct model_diags *diags)
{
    return read_doc(file, buf, len, false, true, diags);
}
