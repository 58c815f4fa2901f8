/* SPDX-License-Identifier: Apache-2.0 */
/* model_graphql.c - GraphQL executable-document reader
 *
 * Reads a request document as the GraphQL specification (October 2021
 * edition, sections 2 "Language" and 5.5 "Fragments") defines it and reduces
 * the selected operation to what a policy matches: its type, its name and the
 * names of its root fields (struct model_gql_op). The reader keeps no AST:
 * for each definition it records the fields and fragment spreads at the root
 * (inline fragments at the root are flattened into it) and every spread at
 * any depth, which is all the checks below need.
 *
 * It refuses rather than guesses: any syntax error (with line:col), a
 * type-system definition, an ambiguous or unknown operation, an undefined or
 * cyclic fragment, a duplicate name, and a document over the limits in
 * model_graphql.h. Directives (@skip, @include) never remove a field: the
 * policy decides on what could run.
 */
#include "common/pv_text.h"
#include "model/model_graphql.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==========================================================================
 * Operations
 * ========================================================================== */

/* model_gql_optype_name and model_gql_op_clear live in model_gql_op.c. */

void model_gql_op_describe(const struct model_gql_op *op, char *buf, size_t len)
{
    if (len == 0) {
        return;
    }
    buf[0] = '\0';
    if (op->persisted_id != NULL) {
        snprintf(buf, len, "persisted:%s", op->persisted_id);
        return;
    }
    size_t at = 0;
    int n = snprintf(buf, len, "%s %s(", model_gql_optype_name(op->type),
                     op->name != NULL ? op->name : "-");
    if (n < 0 || (size_t)n >= len) {
        return;
    }
    at = (size_t)n;
    for (size_t i = 0; i < op->nfields && at < len; i++) {
        n = snprintf(buf + at, len - at, "%s%s", i > 0 ? "," : "", op->fields[i]);
        if (n < 0) {
            return;
        }
        at += (size_t)n;
    }
    if (at < len) {
        snprintf(buf + at, len - at, ")");
    }
}

/* ==========================================================================
 * Reader state
 * ========================================================================== */

struct slice {
    const char *p;
    size_t n;
    size_t pos; /* byte offset in the document, for error positions */
};

struct slicev {
    struct slice *v;
    size_t n, cap;
};

/* One operation or fragment definition. */
struct gdef {
    bool is_frag;
    enum model_gql_optype type;
    struct slice name;          /* p == NULL: anonymous operation */
    struct slicev fields;       /* root field names */
    struct slicev root_spreads; /* fragment spreads at the root */
    struct slicev spreads;      /* every spread, any depth */
};

enum tok_kind {
    T_EOF,
    T_PUNCT, /* one of ! $ & ( ) : = @ [ ] { | } and "..." (stored as '.') */
    T_NAME,
    T_INT,
    T_FLOAT,
    T_STRING,
    T_BLOCK_STRING,
};

struct tok {
    enum tok_kind kind;
    char punct;
    const char *p; /* names: the name's bytes */
    size_t n;
    size_t pos; /* start offset */
};

struct gp {
    const char *src;
    size_t len;
    size_t pos;
    struct tok t; /* current token */
    size_t ntokens;
    unsigned depth;
    struct gdef *defs;
    size_t ndefs, cap;
    int err; /* first error (sticky) */
    char *msg;
    size_t msglen;
};

/* Record the first error at byte offset 'pos' (SIZE_MAX: no position). */
__attribute__((format(printf, 4, 5))) static pv_result fail(struct gp *g, int err, size_t pos,
                                                            const char *fmt, ...)
{
    if (g->err == PV_OK) {
        g->err = err;
        if (g->msg != NULL && g->msglen > 0) {
            size_t at = 0;
            if (pos != SIZE_MAX) {
                size_t line = 1, col = 1;
                for (size_t i = 0; i < pos && i < g->len; i++) {
                    unsigned char c = (unsigned char)g->src[i];
                    if (c == '\n' || (c == '\r' && (i + 1 >= g->len || g->src[i + 1] != '\n'))) {
                        line++;
                        col = 1;
                    } else if ((c & 0xC0) != 0x80) {
                        col++;
                    }
                }
                int n = snprintf(g->msg, g->msglen, "%zu:%zu: ", line, col);
                at = n > 0 && (size_t)n < g->msglen ? (size_t)n : g->msglen - 1;
            }
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(g->msg + at, g->msglen - at, fmt, ap);
            va_end(ap);
        }
    }
    return pv_fail(g->err, "model_graphql.c");
}

static pv_result slice_push(struct gp *g, struct slicev *v, struct slice s)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        struct slice *nv = pv_realloc(v->v, cap * sizeof(*nv));
        if (nv == NULL) {
            return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
        }
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = s;
    return PV_RESULT_OK;
}

static void defs_free(struct gp *g)
{
    for (size_t i = 0; i < g->ndefs; i++) {
        free(g->defs[i].fields.v);
        free(g->defs[i].root_spreads.v);
        free(g->defs[i].spreads.v);
    }
    free(g->defs);
    g->defs = NULL;
    g->ndefs = g->cap = 0;
}

/* ==========================================================================
 * Lexer (spec 2.1)
 * ========================================================================== */

/* Decode one UTF-8 scalar value at 'i'; returns its length, 0 if invalid
 * (overlong, surrogate, beyond U+10FFFF, truncated). */
static size_t utf8_decode(const char *s, size_t len, size_t i, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s + i;
    size_t left = len - i;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if ((u[0] & 0xE0) == 0xC0) {
        n = 2;
        v = u[0] & 0x1F;
        min = 0x80;
    } else if ((u[0] & 0xF0) == 0xE0) {
        n = 3;
        v = u[0] & 0x0F;
        min = 0x800;
    } else if ((u[0] & 0xF8) == 0xF0) {
        n = 4;
        v = u[0] & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (left < n) {
        return 0;
    }
    for (size_t k = 1; k < n; k++) {
        if ((u[k] & 0xC0) != 0x80) {
            return 0;
        }
        v = (v << 6) | (u[k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        return 0;
    }
    *cp = v;
    return n;
}

static bool name_start(unsigned char c)
{
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool name_cont(unsigned char c)
{
    return name_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* A source character inside a string, block string or comment: any Unicode
 * scalar value (October 2021 edition, 2.1.1; line terminators are handled by
 * the callers). Returns its length, 0 with an error set for bad UTF-8. */
static size_t source_char(struct gp *g, size_t i, const char *where)
{
    uint32_t cp;
    size_t n = utf8_decode(g->src, g->len, i, &cp);
    if (n == 0) {
        (void)fail(g, PV_ERR_PARSE, i, "invalid UTF-8 in %s", where);
        return 0;
    }
    return n;
}

/* Skip ignored tokens (spec 2.1.2-2.1.7): BOM, whitespace, line terminators,
 * comments, commas. */
static pv_result skip_ignored(struct gp *g)
{
    while (g->pos < g->len) {
        unsigned char c = (unsigned char)g->src[g->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
            g->pos++;
        } else if (c == 0xEF && g->pos + 2 < g->len && (unsigned char)g->src[g->pos + 1] == 0xBB &&
                   (unsigned char)g->src[g->pos + 2] == 0xBF) {
            g->pos += 3;
        } else if (c == '#') {
            g->pos++;
            while (g->pos < g->len && g->src[g->pos] != '\n' && g->src[g->pos] != '\r') {
                size_t n = source_char(g, g->pos, "a comment");
                if (n == 0) {
                    return pv_fail(g->err, "model_graphql.c");
                }
                g->pos += n;
            }
        } else {
            break;
        }
    }
    return PV_RESULT_OK;
}

/* Read the escape after a backslash at 'i' in a quoted string; returns the
 * number of bytes consumed after the backslash, 0 with an error set.
 * Accepts \uXXXX (a surrogate only as a high+low pair) and \u{X...}. */
static size_t read_escape(struct gp *g, size_t i)
{
    size_t at = i + 1;
    if (at >= g->len) {
        (void)fail(g, PV_ERR_PARSE, i, "unterminated string");
        return 0;
    }
    char e = g->src[at];
    if (strchr("\"\\/bfnrt", e) != NULL && e != '\0') {
        return 1;
    }
    if (e != 'u') {
        (void)fail(g, PV_ERR_PARSE, i, "invalid escape sequence in string");
        return 0;
    }
    at++;
    if (at < g->len && g->src[at] == '{') {
        uint32_t v = 0;
        size_t k = at + 1;
        size_t digits = 0;
        while (k < g->len && pv_hexval((unsigned char)g->src[k]) >= 0) {
            v = v * 16 + (uint32_t)pv_hexval((unsigned char)g->src[k]);
            if (v > 0x10FFFF) {
                break;
            }
            k++;
            digits++;
        }
        if (digits == 0 || k >= g->len || g->src[k] != '}' || (v >= 0xD800 && v <= 0xDFFF)) {
            (void)fail(g, PV_ERR_PARSE, i, "invalid Unicode escape in string");
            return 0;
        }
        return k + 1 - (i + 1);
    }
    uint32_t v = 0;
    for (size_t k = 0; k < 4; k++) {
        int h = at + k < g->len ? pv_hexval((unsigned char)g->src[at + k]) : -1;
        if (h < 0) {
            (void)fail(g, PV_ERR_PARSE, i, "invalid Unicode escape in string");
            return 0;
        }
        v = v * 16 + (uint32_t)h;
    }
    if (v >= 0xDC00 && v <= 0xDFFF) {
        (void)fail(g, PV_ERR_PARSE, i, "lone low surrogate escape in string");
        return 0;
    }
    if (v >= 0xD800 && v <= 0xDBFF) {
        /* must be followed by \uDC00-\uDFFF */
        size_t k = at + 4;
        uint32_t lo = 0;
        bool ok = k + 6 <= g->len && g->src[k] == '\\' && g->src[k + 1] == 'u';
        for (size_t j = 0; ok && j < 4; j++) {
            int h = pv_hexval((unsigned char)g->src[k + 2 + j]);
            ok = h >= 0;
            lo = lo * 16 + (uint32_t)(h < 0 ? 0 : h);
        }
        if (!ok || lo < 0xDC00 || lo > 0xDFFF) {
            (void)fail(g, PV_ERR_PARSE, i, "lone high surrogate escape in string");
            return 0;
        }
        return 1 + 4 + 6;
    }
    return 1 + 4;
}

static pv_result lex_string(struct gp *g)
{
    size_t i = g->pos + 1;
    while (i < g->len) {
        unsigned char c = (unsigned char)g->src[i];
        if (c == '"') {
            g->t.kind = T_STRING;
            g->pos = i + 1;
            return PV_RESULT_OK;
        }
        if (c == '\n' || c == '\r') {
            break;
        }
        if (c == '\\') {
            size_t n = read_escape(g, i);
            if (n == 0) {
                return pv_fail(g->err, "model_graphql.c");
            }
            i += 1 + n;
            continue;
        }
        size_t n = source_char(g, i, "a string");
        if (n == 0) {
            return pv_fail(g->err, "model_graphql.c");
        }
        i += n;
    }
    return fail(g, PV_ERR_PARSE, g->pos, "unterminated string");
}

static pv_result lex_block_string(struct gp *g)
{
    size_t i = g->pos + 3;
    while (i < g->len) {
        if (g->len - i >= 3 && memcmp(g->src + i, "\"\"\"", 3) == 0) {
            g->t.kind = T_BLOCK_STRING;
            g->pos = i + 3;
            return PV_RESULT_OK;
        }
        if (g->len - i >= 4 && memcmp(g->src + i, "\\\"\"\"", 4) == 0) {
            i += 4;
            continue;
        }
        unsigned char c = (unsigned char)g->src[i];
        if (c == '\n' || c == '\r') {
            i++;
            continue;
        }
        size_t n = source_char(g, i, "a block string");
        if (n == 0) {
            return pv_fail(g->err, "model_graphql.c");
        }
        i += n;
    }
    return fail(g, PV_ERR_PARSE, g->pos, "unterminated block string");
}

/* IntValue and FloatValue (spec 2.9.1-2.9.2), with their lookahead
 * restrictions: no digit, '.' or NameStart may follow. */
static pv_result lex_number(struct gp *g)
{
    size_t i = g->pos;
    bool is_float = false;
    if (g->src[i] == '-') {
        i++;
    }
    if (i >= g->len || !is_digit((unsigned char)g->src[i])) {
        return fail(g, PV_ERR_PARSE, g->pos, "invalid number: expected a digit");
    }
    if (g->src[i] == '0') {
        i++;
        if (i < g->len && is_digit((unsigned char)g->src[i])) {
            return fail(g, PV_ERR_PARSE, i, "invalid number: unexpected digit after 0");
        }
    } else {
        while (i < g->len && is_digit((unsigned char)g->src[i])) {
            i++;
        }
    }
    if (i < g->len && g->src[i] == '.') {
        is_float = true;
        i++;
        if (i >= g->len || !is_digit((unsigned char)g->src[i])) {
            return fail(g, PV_ERR_PARSE, i, "invalid number: expected a digit after '.'");
        }
        while (i < g->len && is_digit((unsigned char)g->src[i])) {
            i++;
        }
    }
    if (i < g->len && (g->src[i] == 'e' || g->src[i] == 'E')) {
        is_float = true;
        i++;
        if (i < g->len && (g->src[i] == '+' || g->src[i] == '-')) {
            i++;
        }
        if (i >= g->len || !is_digit((unsigned char)g->src[i])) {
            return fail(g, PV_ERR_PARSE, i, "invalid number: expected an exponent digit");
        }
        while (i < g->len && is_digit((unsigned char)g->src[i])) {
            i++;
        }
    }
    if (i < g->len && (g->src[i] == '.' || name_start((unsigned char)g->src[i]))) {
        return fail(g, PV_ERR_PARSE, i, "invalid number: unexpected '%c' after it", g->src[i]);
    }
    g->t.kind = is_float ? T_FLOAT : T_INT;
    g->pos = i;
    return PV_RESULT_OK;
}

static pv_result next(struct gp *g)
{
    PV_GUARD(skip_ignored(g));
    memset(&g->t, 0, sizeof(g->t));
    g->t.pos = g->pos;
    if (g->pos >= g->len) {
        g->t.kind = T_EOF;
        return PV_RESULT_OK;
    }
    if (++g->ntokens > MODEL_GQL_MAX_TOKENS) {
        return fail(g, PV_ERR_TOOBIG, g->pos, "more than %d tokens", MODEL_GQL_MAX_TOKENS);
    }
    unsigned char c = (unsigned char)g->src[g->pos];
    if (strchr("!$&():=@[]{|}", c) != NULL && c != '\0') {
        g->t.kind = T_PUNCT;
        g->t.punct = (char)c;
        g->pos++;
        return PV_RESULT_OK;
    }
    if (c == '.') {
        if (g->len - g->pos >= 3 && g->src[g->pos + 1] == '.' && g->src[g->pos + 2] == '.') {
            g->t.kind = T_PUNCT;
            g->t.punct = '.';
            g->pos += 3;
            return PV_RESULT_OK;
        }
        return fail(g, PV_ERR_PARSE, g->pos, "unexpected '.' (did you mean '...'?)");
    }
    if (name_start(c)) {
        size_t i = g->pos + 1;
        while (i < g->len && name_cont((unsigned char)g->src[i])) {
            i++;
        }
        g->t.kind = T_NAME;
        g->t.p = g->src + g->pos;
        g->t.n = i - g->pos;
        g->pos = i;
        return PV_RESULT_OK;
    }
    if (c == '-' || is_digit(c)) {
        return lex_number(g);
    }
    if (c == '"') {
        if (g->len - g->pos >= 3 && g->src[g->pos + 1] == '"' && g->src[g->pos + 2] == '"') {
            return lex_block_string(g);
        }
        return lex_string(g);
    }
    uint32_t cp;
    if (utf8_decode(g->src, g->len, g->pos, &cp) == 0) {
        return fail(g, PV_ERR_PARSE, g->pos, "invalid UTF-8");
    }
    if (cp >= 0x20 && cp < 0x7F) {
        return fail(g, PV_ERR_PARSE, g->pos, "unexpected character '%c'", (char)cp);
    }
    return fail(g, PV_ERR_PARSE, g->pos, "unexpected character U+%04X", (unsigned)cp);
}

/* ==========================================================================
 * Parser (spec 2.2-2.12, executable definitions only)
 * ========================================================================== */

static bool is_punct(const struct gp *g, char p)
{
    return g->t.kind == T_PUNCT && g->t.punct == p;
}

static bool is_name(const struct gp *g, const char *kw)
{
    return g->t.kind == T_NAME && g->t.n == strlen(kw) && memcmp(g->t.p, kw, g->t.n) == 0;
}

static const char *tok_desc(const struct gp *g)
{
    switch (g->t.kind) {
    case T_EOF:
        return "end of document";
    case T_PUNCT:
        return "punctuator";
    case T_NAME:
        return "name";
    case T_INT:
        return "integer";
    case T_FLOAT:
        return "float";
    case T_STRING:
        return "string";
    case T_BLOCK_STRING:
        return "block string";
    }
    return "token";
}

static pv_result unexpected(struct gp *g, const char *expected)
{
    if (g->t.kind == T_PUNCT) {
        char p[4] = {g->t.punct, '\0', '\0', '\0'};
        if (g->t.punct == '.') {
            memcpy(p, "...", 4);
        }
        return fail(g, PV_ERR_PARSE, g->t.pos, "expected %s, found '%s'", expected, p);
    }
    if (g->t.kind == T_NAME) {
        return fail(g, PV_ERR_PARSE, g->t.pos, "expected %s, found name '%.*s'", expected,
                    (int)(g->t.n > 64 ? 64 : g->t.n), g->t.p);
    }
    return fail(g, PV_ERR_PARSE, g->t.pos, "expected %s, found %s", expected, tok_desc(g));
}

static pv_result expect_punct(struct gp *g, char p)
{
    if (!is_punct(g, p)) {
        char want[8] = {'\'', p, '\'', '\0'};
        if (p == '.') {
            memcpy(want, "'...'", 6);
        }
        return unexpected(g, want);
    }
    return next(g);
}

static pv_result expect_name(struct gp *g, struct slice *out)
{
    if (g->t.kind != T_NAME) {
        return unexpected(g, "a name");
    }
    if (out != NULL) {
        *out = (struct slice){g->t.p, g->t.n, g->t.pos};
    }
    return next(g);
}

static pv_result enter(struct gp *g)
{
    if (++g->depth > MODEL_GQL_MAX_DEPTH) {
        return fail(g, PV_ERR_TOOBIG, g->t.pos, "nesting deeper than %d", MODEL_GQL_MAX_DEPTH);
    }
    return PV_RESULT_OK;
}

static pv_result parse_value(struct gp *g, bool is_const);

/* ListValue and ObjectValue (spec 2.9.7-2.9.8); may be empty. */
static pv_result parse_list_or_object(struct gp *g, bool is_const)
{
    char closer = is_punct(g, '[') ? ']' : '}';
    PV_GUARD(enter(g));
    PV_GUARD(next(g));
    while (!is_punct(g, closer)) {
        if (closer == '}') {
            PV_GUARD(expect_name(g, NULL));
            PV_GUARD(expect_punct(g, ':'));
        }
        PV_GUARD(parse_value(g, is_const));
    }
    g->depth--;
    return next(g);
}

static pv_result parse_value(struct gp *g, bool is_const)
{
    switch (g->t.kind) {
    case T_PUNCT:
        if (g->t.punct == '$') {
            if (is_const) {
                return fail(g, PV_ERR_PARSE, g->t.pos, "variable not allowed in a constant value");
            }
            PV_GUARD(next(g));
            return expect_name(g, NULL);
        }
        if (g->t.punct == '[' || g->t.punct == '{') {
            return parse_list_or_object(g, is_const);
        }
        return unexpected(g, "a value");
    case T_NAME: /* true, false, null, or an enum value */
    case T_INT:
    case T_FLOAT:
    case T_STRING:
    case T_BLOCK_STRING:
        return next(g);
    case T_EOF:
        break;
    }
    return unexpected(g, "a value");
}

/* Arguments (spec 2.6): '(' Argument+ ')'. */
static pv_result parse_arguments(struct gp *g, bool is_const)
{
    if (!is_punct(g, '(')) {
        return PV_RESULT_OK;
    }
    PV_GUARD(next(g));
    do {
        PV_GUARD(expect_name(g, NULL));
        PV_GUARD(expect_punct(g, ':'));
        PV_GUARD(parse_value(g, is_const));
    } while (!is_punct(g, ')'));
    return next(g);
}

/* Directives (spec 2.12). */
static pv_result parse_directives(struct gp *g, bool is_const)
{
    while (is_punct(g, '@')) {
        PV_GUARD(next(g));
        PV_GUARD(expect_name(g, NULL));
        PV_GUARD(parse_arguments(g, is_const));
    }
    return PV_RESULT_OK;
}

/* Type (spec 2.11): Name, [Type], Type! (no double '!'). */
static pv_result parse_type(struct gp *g)
{
    if (is_punct(g, '[')) {
        PV_GUARD(enter(g));
        PV_GUARD(next(g));
        PV_GUARD(parse_type(g));
        PV_GUARD(expect_punct(g, ']'));
        g->depth--;
    } else {
        PV_GUARD(expect_name(g, NULL));
    }
    if (is_punct(g, '!')) {
        PV_GUARD(next(g));
    }
    return PV_RESULT_OK;
}

/* VariableDefinitions (spec 2.10): '(' VariableDefinition+ ')'. */
static pv_result parse_variable_definitions(struct gp *g)
{
    if (!is_punct(g, '(')) {
        return PV_RESULT_OK;
    }
    PV_GUARD(next(g));
    do {
        PV_GUARD(expect_punct(g, '$'));
        PV_GUARD(expect_name(g, NULL));
        PV_GUARD(expect_punct(g, ':'));
        PV_GUARD(parse_type(g));
        if (is_punct(g, '=')) {
            PV_GUARD(next(g));
            PV_GUARD(parse_value(g, true));
        }
        PV_GUARD(parse_directives(g, true));
    } while (!is_punct(g, ')'));
    return next(g);
}

/* SelectionSet (spec 2.4) of definition 'd'. At the root ('root'), field
 * names and spreads are recorded, and inline fragments are part of the root;
 * deeper, only spreads are recorded (for the undefined/cycle checks). */
static pv_result parse_selection_set(struct gp *g, size_t d, bool root)
{
    PV_GUARD(enter(g));
    PV_GUARD(expect_punct(g, '{'));
    do {
        if (is_punct(g, '.')) {
            PV_GUARD(next(g));
            if (g->t.kind == T_NAME && !is_name(g, "on")) {
                struct slice name = {g->t.p, g->t.n, g->t.pos};
                PV_GUARD(next(g));
                PV_GUARD(slice_push(g, &g->defs[d].spreads, name));
                if (root) {
                    PV_GUARD(slice_push(g, &g->defs[d].root_spreads, name));
                }
                PV_GUARD(parse_directives(g, false));
                continue;
            }
            if (is_name(g, "on")) {
                PV_GUARD(next(g));
                PV_GUARD(expect_name(g, NULL));
            }
            PV_GUARD(parse_directives(g, false));
            if (!is_punct(g, '{')) {
                return unexpected(g, "'{' of an inline fragment");
            }
            PV_GUARD(parse_selection_set(g, d, root));
            continue;
        }
        struct slice name;
        PV_GUARD(expect_name(g, &name));
        if (is_punct(g, ':')) { /* alias: the field's name follows */
            PV_GUARD(next(g));
            PV_GUARD(expect_name(g, &name));
        }
        if (root) {
            PV_GUARD(slice_push(g, &g->defs[d].fields, name));
        }
        PV_GUARD(parse_arguments(g, false));
        PV_GUARD(parse_directives(g, false));
        if (is_punct(g, '{')) {
            PV_GUARD(parse_selection_set(g, d, false));
        }
    } while (!is_punct(g, '}'));
    g->depth--;
    return next(g);
}

static pv_result new_def(struct gp *g, size_t *out)
{
    if (g->ndefs == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4;
        struct gdef *nd = pv_realloc(g->defs, cap * sizeof(*nd));
        if (nd == NULL) {
            return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
        }
        g->defs = nd;
        g->cap = cap;
    }
    memset(&g->defs[g->ndefs], 0, sizeof(g->defs[0]));
    *out = g->ndefs++;
    return PV_RESULT_OK;
}

static const char *const type_system_words[] = {
    "schema", "scalar", "type", "interface", "union", "enum", "input", "directive", "extend"};

static pv_result parse_definition(struct gp *g)
{
    size_t d;
    if (g->t.kind == T_STRING || g->t.kind == T_BLOCK_STRING) {
        return fail(g, PV_ERR_PARSE, g->t.pos,
                    "type-system definitions are refused in a request document");
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(type_system_words); i++) {
        if (is_name(g, type_system_words[i])) {
            return fail(g, PV_ERR_PARSE, g->t.pos,
                        "type-system definition '%s' is refused in a request document",
                        type_system_words[i]);
        }
    }
    if (is_name(g, "fragment")) {
        PV_GUARD(next(g));
        PV_GUARD(new_def(g, &d));
        g->defs[d].is_frag = true;
        if (is_name(g, "on")) {
            return fail(g, PV_ERR_PARSE, g->t.pos, "a fragment cannot be named 'on'");
        }
        PV_GUARD(expect_name(g, &g->defs[d].name));
        if (!is_name(g, "on")) {
            return unexpected(g, "'on'");
        }
        PV_GUARD(next(g));
        PV_GUARD(expect_name(g, NULL));
        PV_GUARD(parse_directives(g, false));
        return parse_selection_set(g, d, true);
    }
    PV_GUARD(new_def(g, &d));
    g->defs[d].type = MODEL_GQL_QUERY;
    if (is_punct(g, '{')) { /* query shorthand */
        return parse_selection_set(g, d, true);
    }
    if (is_name(g, "query")) {
        g->defs[d].type = MODEL_GQL_QUERY;
    } else if (is_name(g, "mutation")) {
        g->defs[d].type = MODEL_GQL_MUTATION;
    } else if (is_name(g, "subscription")) {
        g->defs[d].type = MODEL_GQL_SUBSCRIPTION;
    } else {
        return unexpected(g, "an operation, a fragment or '{'");
    }
    PV_GUARD(next(g));
    if (g->t.kind == T_NAME) {
        PV_GUARD(expect_name(g, &g->defs[d].name));
    }
    PV_GUARD(parse_variable_definitions(g));
    PV_GUARD(parse_directives(g, false));
    return parse_selection_set(g, d, true);
}

/* ==========================================================================
 * Document checks and root field collection (spec 5.2, 5.5)
 * ========================================================================== */

static int slice_cmp(const struct slice *a, const struct slice *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->p, b->p, n);
    if (c != 0) {
        return c;
    }
    return a->n < b->n ? -1 : a->n > b->n;
}

/* Fragments sorted by name, for lookups. */
struct fragidx {
    const struct gdef *defs;
    size_t *ix; /* indices into defs, sorted by name */
    size_t n;
};

static _Thread_local const struct gdef *qsort_defs;

static int def_name_cmp(const void *a, const void *b)
{
    return slice_cmp(&qsort_defs[*(const size_t *)a].name, &qsort_defs[*(const size_t *)b].name);
}

/* Position in 'fx->ix' of fragment 'name'; SIZE_MAX if undefined. */
static size_t frag_find(const struct fragidx *fx, const struct slice *name)
{
    size_t lo = 0, hi = fx->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = slice_cmp(&fx->defs[fx->ix[mid]].name, name);
        if (c == 0) {
            return mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return SIZE_MAX;
}

static int cstr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static pv_result check_names(struct gp *g, struct fragidx *fx)
{
    size_t nops = 0, nanon = 0;
    for (size_t i = 0; i < g->ndefs; i++) {
        if (g->defs[i].is_frag) {
            fx->ix[fx->n++] = i;
        } else {
            nops++;
            nanon += g->defs[i].name.p == NULL;
        }
    }
    if (nanon > 0 && nops > 1) {
        return fail(g, PV_ERR_PARSE, SIZE_MAX,
                    "an anonymous operation must be the only operation in the document");
    }
    qsort_defs = g->defs;
    qsort(fx->ix, fx->n, sizeof(*fx->ix), def_name_cmp);
    for (size_t i = 1; i < fx->n; i++) {
        const struct slice *s = &g->defs[fx->ix[i]].name;
        if (slice_cmp(&g->defs[fx->ix[i - 1]].name, s) == 0) {
            return fail(g, PV_ERR_PARSE, s->pos, "duplicate fragment '%.*s'", (int)s->n, s->p);
        }
    }
    /* named operations: sorted by name, neighbours compared (the token
     * limit allows some 13,000 operations: no quadratic pass) */
    PV_DEFER(size_t * ops, pv_free_p) = pv_calloc(nops ? nops : 1, sizeof(size_t));
    size_t nnamed = 0;
    if (ops == NULL) {
        return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
    }
    for (size_t i = 0; i < g->ndefs; i++) {
        if (!g->defs[i].is_frag && g->defs[i].name.p != NULL) {
            ops[nnamed++] = i;
        }
    }
    qsort(ops, nnamed, sizeof(*ops), def_name_cmp);
    for (size_t i = 1; i < nnamed; i++) {
        const struct slice *s = &g->defs[ops[i]].name;
        if (slice_cmp(&g->defs[ops[i - 1]].name, s) == 0) {
            /* report the later of the two in the document */
            const struct slice *a = &g->defs[ops[i - 1]].name;
            const struct slice *b = a->pos > s->pos ? a : s;
            return fail(g, PV_ERR_PARSE, b->pos, "duplicate operation '%.*s'", (int)b->n, b->p);
        }
    }
    for (size_t i = 0; i < g->ndefs; i++) {
        const struct slicev *sp = &g->defs[i].spreads;
        for (size_t k = 0; k < sp->n; k++) {
            if (frag_find(fx, &sp->v[k]) == SIZE_MAX) {
                return fail(g, PV_ERR_PARSE, sp->v[k].pos, "undefined fragment '%.*s'",
                            (int)sp->v[k].n, sp->v[k].p);
            }
        }
    }
    return PV_RESULT_OK;
}

/* Refuse any cycle among fragment spreads (spec 5.5.2.2), at any depth:
 * iterative depth-first search with three colours. */
static pv_result check_cycles(struct gp *g, const struct fragidx *fx)
{
    PV_DEFER(unsigned char *colour, pv_free_p) = pv_calloc(fx->n ? fx->n : 1, 1);
    PV_DEFER(size_t * stk, pv_free_p) = pv_calloc(fx->n ? fx->n : 1, sizeof(size_t));
    PV_DEFER(size_t * edge, pv_free_p) = pv_calloc(fx->n ? fx->n : 1, sizeof(size_t));
    if (colour == NULL || stk == NULL || edge == NULL) {
        return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
    }
    for (size_t s = 0; s < fx->n; s++) {
        if (colour[s] != 0) {
            continue;
        }
        size_t top = 0;
        stk[0] = s;
        edge[0] = 0;
        colour[s] = 1;
        for (;;) {
            size_t f = stk[top];
            const struct slicev *sp = &fx->defs[fx->ix[f]].spreads;
            if (edge[top] == sp->n) {
                colour[f] = 2;
                if (top == 0) {
                    break;
                }
                top--;
                continue;
            }
            const struct slice *e = &sp->v[edge[top]++];
            size_t t = frag_find(fx, e);
            if (colour[t] == 1) {
                return fail(g, PV_ERR_PARSE, e->pos, "fragment '%.*s' spreads itself (cycle)",
                            (int)e->n, e->p);
            }
            if (colour[t] == 0) {
                colour[t] = 1;
                stk[++top] = t;
                edge[top] = 0;
            }
        }
    }
    return PV_RESULT_OK;
}

static pv_result select_operation(struct gp *g, const char *opname, size_t *out)
{
    size_t found = SIZE_MAX, nops = 0;
    for (size_t i = 0; i < g->ndefs; i++) {
        const struct gdef *d = &g->defs[i];
        if (d->is_frag) {
            continue;
        }
        nops++;
        if (opname == NULL) {
            found = i;
        } else if (d->name.p != NULL && d->name.n == strlen(opname) &&
                   memcmp(d->name.p, opname, d->name.n) == 0) {
            found = i;
        }
    }
    if (nops == 0) {
        return fail(g, PV_ERR_PARSE, SIZE_MAX, "the document has no operation");
    }
    if (opname == NULL && nops > 1) {
        return fail(g, PV_ERR_PARSE, SIZE_MAX,
                    "the document has %zu operations and no operationName selects one", nops);
    }
    if (found == SIZE_MAX) {
        return fail(g, PV_ERR_PARSE, SIZE_MAX, "no operation named '%.200s' in the document",
                    opname);
    }
    *out = found;
    return PV_RESULT_OK;
}

/* Root field names of operation 'o', through root spreads transitively. */
static pv_result collect_fields(struct gp *g, const struct fragidx *fx, size_t o,
                                struct model_gql_op *op)
{
    PV_DEFER(unsigned char *seen, pv_free_p) = pv_calloc(fx->n ? fx->n : 1, 1);
    PV_DEFER(size_t * work, pv_free_p) = pv_calloc(fx->n ? fx->n : 1, sizeof(size_t));
    struct slicev all = {0};
    pv_result r = PV_RESULT_OK;
    size_t nwork = 0;
    if (seen == NULL || work == NULL) {
        return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
    }
    const struct gdef *d = &g->defs[o];
    for (;;) {
        for (size_t i = 0; i < d->fields.n && pv_ok(r); i++) {
            r = slice_push(g, &all, d->fields.v[i]);
        }
        for (size_t i = 0; i < d->root_spreads.n; i++) {
            size_t f = frag_find(fx, &d->root_spreads.v[i]);
            if (!seen[f]) {
                seen[f] = 1;
                work[nwork++] = f;
            }
        }
        if (!pv_ok(r) || nwork == 0) {
            break;
        }
        d = &fx->defs[fx->ix[work[--nwork]]];
    }
    if (pv_ok(r)) {
        op->fields = pv_calloc(all.n ? all.n : 1, sizeof(char *));
        if (op->fields == NULL) {
            r = fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
        }
    }
    for (size_t i = 0; i < all.n && pv_ok(r); i++) {
        op->fields[op->nfields] = pv_strndup(all.v[i].p, all.v[i].n);
        if (op->fields[op->nfields] == NULL) {
            r = fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
            break;
        }
        op->nfields++;
    }
    free(all.v);
    if (!pv_ok(r)) {
        return r;
    }
    qsort(op->fields, op->nfields, sizeof(char *), cstr_cmp);
    size_t w = 0;
    for (size_t i = 0; i < op->nfields; i++) {
        if (w > 0 && strcmp(op->fields[w - 1], op->fields[i]) == 0) {
            free(op->fields[i]);
            continue;
        }
        op->fields[w++] = op->fields[i];
    }
    op->nfields = w;
    return PV_RESULT_OK;
}

static pv_result read_doc(struct gp *g, const char *opname, struct model_gql_op *out)
{
    if (g->len > MODEL_GQL_MAX_DOCUMENT) {
        return fail(g, PV_ERR_TOOBIG, SIZE_MAX, "document longer than %d bytes",
                    MODEL_GQL_MAX_DOCUMENT);
    }
    PV_GUARD(next(g));
    if (g->t.kind == T_EOF) {
        return fail(g, PV_ERR_PARSE, g->t.pos, "empty document");
    }
    while (g->t.kind != T_EOF) {
        PV_GUARD(parse_definition(g));
    }
    struct fragidx fx = {g->defs, NULL, 0};
    PV_DEFER(size_t * ix, pv_free_p) = pv_calloc(g->ndefs, sizeof(size_t));
    if (ix == NULL) {
        return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
    }
    fx.ix = ix;
    PV_GUARD(check_names(g, &fx));
    PV_GUARD(check_cycles(g, &fx));
    size_t o = 0;
    PV_GUARD(select_operation(g, opname, &o));
    out->type = g->defs[o].type;
    if (g->defs[o].name.p != NULL) {
        out->name = pv_strndup(g->defs[o].name.p, g->defs[o].name.n);
        if (out->name == NULL) {
            return fail(g, PV_ERR_NOMEM, SIZE_MAX, "out of memory");
        }
    }
    return collect_fields(g, &fx, o, out);
}

pv_result model_gql_read(const char *doc, size_t len, const char *opname, struct model_gql_op *out,
                         char *err, size_t errlen)
{
    PV_ENSURE_REF(out);
    memset(out, 0, sizeof(*out));
    if (err != NULL && errlen > 0) {
        err[0] = '\0';
    }
    struct gp g = {.src = doc != NULL ? doc : "",
                   .len = doc != NULL ? len : 0,
                   .msg = err,
                   .msglen = err != NULL ? errlen : 0};
    pv_result r = read_doc(&g, opname, out);
    defs_free(&g);
    if (!pv_ok(r)) {
        model_gql_op_clear(out);
        if (g.err == PV_OK) { /* a guard failed outside fail(): still report it */
            g.err = r.err;
            if (err != NULL && errlen > 0) {
                snprintf(err, errlen, "%s", pv_strerror(r.err));
            }
        }
        return pv_fail(g.err, "model_graphql.c");
    }
    return PV_RESULT_OK;
}
