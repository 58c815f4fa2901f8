/* SPDX-License-Identifier: Apache-2.0 */
/* prover_body.c - decoder of the JSON request bodies of /v1/prove, /v1/check, /v1/discover
 *
 * It lives in libprover so that the one prove/check job (prover_job.c) can be
 * run in process from a request body by any command, not only by the HTTP
 * service (server/); the discover kind is decoded here too, by the same
 * tables, and handled by the service.
 *
 * A body is one JSON object. jansson checks the syntax (errors carry
 * "body:LINE:COL"), rejects duplicate keys and embedded NULs; a table per
 * route names the allowed top-level fields, their JSON types and which are
 * required. A small scanner then finds the raw byte span of every top-level
 * value, so a policy sent as a JSON object reaches the model loader as the
 * exact bytes the client sent (its diagnostics count LINE:COL from the
 * value's first byte) without a re-serialisation. Strings are handed over
 * decoded: they hold YAML or JSON documents.
 *
 * Invariant (prover_body_validate): every present object/array field's span
 * lies inside the body and starts with '{' or '['; every string field is the
 * jansson string of the same key.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "prover/prover.h"

static const char *const field_names[PROVER_F__COUNT] = {
    [PROVER_F_BASELINE] = "baseline", [PROVER_F_CANDIDATE] = "candidate",
    [PROVER_F_PROPOSAL] = "proposal", [PROVER_F_POLICY] = "policy",
    [PROVER_F_BOUNDARY] = "boundary", [PROVER_F_CREDENTIALS] = "credentials",
    [PROVER_F_OPTIONS] = "options",   [PROVER_F_OPENAPI] = "openapi",
    [PROVER_F_BINARY] = "binary",     [PROVER_F_ANCESTORS] = "ancestors",
};

const char *prover_field_name(enum prover_field f)
{
    if ((unsigned)f >= PROVER_F__COUNT) {
        return "?";
    }
    return field_names[f];
}

/* ---------------------------------------------------------------------------
 * Field tables
 * ------------------------------------------------------------------------- */

#define T_OBJ 1u
#define T_STR 2u
#define T_ARR 4u

enum need { OPTIONAL, REQUIRED, ONE_OF };

struct field_rule {
    enum prover_field f;
    unsigned types;
    enum need need;
    const char *expect; /* for the type error message */
};

static const struct field_rule prove_rules[] = {
    {PROVER_F_BASELINE, T_OBJ | T_STR, OPTIONAL, "a policy object or a YAML/JSON string"},
    {PROVER_F_CANDIDATE, T_OBJ | T_STR, ONE_OF, "a policy object or a YAML/JSON string"},
    {PROVER_F_PROPOSAL, T_OBJ | T_STR, ONE_OF, "a proposal object or a JSON string"},
    {PROVER_F_POLICY, T_OBJ | T_STR, ONE_OF, "a policy object or a YAML/JSON string"},
    {PROVER_F_CREDENTIALS, T_ARR | T_OBJ | T_STR, OPTIONAL,
     "a credentials list, object or YAML/JSON string"},
    {PROVER_F_OPTIONS, T_OBJ, OPTIONAL, "an object"},
};

static const struct field_rule check_rules[] = {
    {PROVER_F_CANDIDATE, T_OBJ | T_STR, REQUIRED, "a policy object or a YAML/JSON string"},
    {PROVER_F_BOUNDARY, T_OBJ | T_STR, REQUIRED, "a policy object or a YAML/JSON string"},
    {PROVER_F_OPTIONS, T_OBJ, OPTIONAL, "an object"},
};

static const struct field_rule discover_rules[] = {
    {PROVER_F_OPENAPI, T_OBJ | T_STR, REQUIRED, "an OpenAPI 3 object or a JSON string"},
    {PROVER_F_POLICY, T_OBJ | T_STR, REQUIRED, "a policy object or a YAML/JSON string"},
    {PROVER_F_BINARY, T_STR, REQUIRED, "an absolute path string"},
    {PROVER_F_ANCESTORS, T_ARR, OPTIONAL, "a list of absolute path strings"},
    {PROVER_F_OPTIONS, T_OBJ, OPTIONAL, "an object"},
};

static const struct {
    const struct field_rule *rules;
    size_t n;
} kinds[] = {
    [PROVER_BODY_PROVE] = {prove_rules, PV_ARRAY_LEN(prove_rules)},
    [PROVER_BODY_CHECK] = {check_rules, PV_ARRAY_LEN(check_rules)},
    [PROVER_BODY_DISCOVER] = {discover_rules, PV_ARRAY_LEN(discover_rules)},
};

/* ---------------------------------------------------------------------------
 * Raw span scanner (runs only on text jansson accepted, but stays bounded and
 * fails safe on anything unexpected)
 * ------------------------------------------------------------------------- */

static size_t skip_ws(const char *b, size_t i, size_t n)
{
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) {
        i++;
    }
    return i;
}

/* At '"': move past the closing quote. */
static bool skip_string(const char *b, size_t *pi, size_t n)
{
    size_t i = *pi + 1;
    while (i < n) {
        if (b[i] == '\\') {
            i += 2;
            continue;
        }
        if (b[i] == '"') {
            *pi = i + 1;
            return true;
        }
        i++;
    }
    return false;
}

static bool skip_value(const char *b, size_t *pi, size_t n)
{
    size_t i = *pi;
    size_t depth = 0;

    if (i >= n) {
        return false;
    }
    if (b[i] == '"') {
        return skip_string(b, pi, n);
    }
    if (b[i] != '{' && b[i] != '[') {
        size_t start = i;
        while (i < n && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' &&
               b[i] != '\n' && b[i] != '\r') {
            i++;
        }
        *pi = i;
        return i > start;
    }
    while (i < n) {
        char c = b[i];
        if (c == '"') {
            if (!skip_string(b, &i, n)) {
                return false;
            }
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                return false;
            }
            depth--;
            if (depth == 0) {
                *pi = i + 1;
                return true;
            }
        }
        i++;
    }
    return false;
}

/* ---------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------- */

static unsigned type_of(const json_t *v)
{
    if (json_is_object(v)) {
        return T_OBJ;
    }
    if (json_is_string(v)) {
        return T_STR;
    }
    if (json_is_array(v)) {
        return T_ARR;
    }
    return 0;
}

static const struct field_rule *find_rule(enum prover_body_kind kind, const char *k, size_t klen)
{
    for (size_t i = 0; i < kinds[kind].n; i++) {
        const char *name = field_names[kinds[kind].rules[i].f];
        if (strlen(name) == klen && memcmp(name, k, klen) == 0) {
            return &kinds[kind].rules[i];
        }
    }
    return NULL;
}

/* Copy at most 40 printable bytes of an untrusted key for a message. */
static void printable(char *out, size_t outlen, const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < outlen && i < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[o] = '\0';
}

static pv_result decode_options(enum prover_body_kind kind, const json_t *opts,
                                uint64_t max_timeout_ms, struct prover_body *out, char *err,
                                size_t errlen)
{
    const char *k;
    const json_t *v;

    json_object_foreach((json_t *)PV_UNCONST(opts), k, v)
    {
        json_int_t n;
        /* discovery is a concrete decision, so it can take the proxy's test
         * switch (docs/semantics.md#test-loopback); a proof never does */
        if (kind == PROVER_BODY_DISCOVER && strcmp(k, "test_allow_loopback") == 0) {
            if (!json_is_boolean(v)) {
                snprintf(err, errlen, "options.test_allow_loopback: must be a boolean");
                PV_BAIL(PV_ERR_USAGE);
            }
            out->test_loopback = json_is_true(v);
            continue;
        }
        if (strcmp(k, "timeout_ms") != 0) {
            char name[48];
            printable(name, sizeof(name), k, strlen(k));
            snprintf(err, errlen, "options: unknown field \"%s\"", name);
            PV_BAIL(PV_ERR_USAGE);
        }
        n = json_is_integer(v) ? json_integer_value(v) : -1;
        if (n < 1 || (uint64_t)n > max_timeout_ms) {
            snprintf(err, errlen, "options.timeout_ms: must be an integer between 1 and %llu",
                     (unsigned long long)max_timeout_ms);
            PV_BAIL(PV_ERR_USAGE);
        }
        out->timeout_ms = (uint64_t)n;
    }
    return PV_RESULT_OK;
}

/* Walk the top-level members in body order, match them against the rules and
 * record their spans. */
static pv_result scan_members(enum prover_body_kind kind, const char *buf, size_t len,
                              struct prover_body *out, char *err, size_t errlen)
{
    size_t i = skip_ws(buf, 0, len);

    if (i >= len || buf[i] != '{') {
        snprintf(err, errlen, "body: must be a JSON object");
        PV_BAIL(PV_ERR_USAGE);
    }
    i = skip_ws(buf, i + 1, len);
    if (i < len && buf[i] == '}') {
        return PV_RESULT_OK;
    }
    while (i < len) {
        size_t kstart;
        size_t kend;
        size_t vstart;
        const struct field_rule *rule;
        const json_t *v;
        struct prover_doc *d;

        if (buf[i] != '"') {
            break;
        }
        kstart = i + 1;
        if (!skip_string(buf, &i, len)) {
            break;
        }
        kend = i - 1;
        rule = memchr(buf + kstart, '\\', kend - kstart) == NULL
                   ? find_rule(kind, buf + kstart, kend - kstart)
                   : NULL;
        if (rule == NULL) {
            char name[48];
            printable(name, sizeof(name), buf + kstart, kend - kstart);
            snprintf(err, errlen, "body: unknown field \"%s\"", name);
            PV_BAIL(PV_ERR_USAGE);
        }
        i = skip_ws(buf, i, len);
        if (i >= len || buf[i] != ':') {
            break;
        }
        vstart = i = skip_ws(buf, i + 1, len);
        if (!skip_value(buf, &i, len)) {
            break;
        }
        v = json_object_get(out->root, field_names[rule->f]);
        if (v == NULL || (type_of(v) & rule->types) == 0) {
            snprintf(err, errlen, "%s: must be %s", field_names[rule->f], rule->expect);
            PV_BAIL(PV_ERR_USAGE);
        }
        d = &out->f[rule->f];
        d->present = true;
        d->value = v;
        if (json_is_string(v)) {
            d->is_string = true;
            d->text = json_string_value(v);
            d->len = json_string_length(v);
        } else {
            d->text = buf + vstart;
            d->len = i - vstart;
        }
        i = skip_ws(buf, i, len);
        if (i < len && buf[i] == ',') {
            i = skip_ws(buf, i + 1, len);
            continue;
        }
        if (i < len && buf[i] == '}') {
            return PV_RESULT_OK;
        }
        break;
    }
    snprintf(err, errlen, "body: malformed object");
    PV_BAIL(PV_ERR_PARSE);
}

static pv_result check_required(enum prover_body_kind kind, const struct prover_body *out,
                                char *err, size_t errlen)
{
    size_t one_of = 0;
    size_t one_of_rules = 0;
    char names[96] = "";

    for (size_t i = 0; i < kinds[kind].n; i++) {
        const struct field_rule *r = &kinds[kind].rules[i];
        if (r->need == REQUIRED && !out->f[r->f].present) {
            snprintf(err, errlen, "%s: required field missing", field_names[r->f]);
            PV_BAIL(PV_ERR_USAGE);
        }
        if (r->need == ONE_OF) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof(names) - l, "%s%s", one_of_rules ? ", " : "",
                     field_names[r->f]);
            one_of_rules++;
            one_of += out->f[r->f].present ? 1 : 0;
        }
    }
    if (one_of_rules > 0 && one_of != 1) {
        snprintf(err, errlen, "body: exactly one of %s is required", names);
        PV_BAIL(PV_ERR_USAGE);
    }
    if (out->f[PROVER_F_BINARY].present &&
        (out->f[PROVER_F_BINARY].len == 0 || out->f[PROVER_F_BINARY].text[0] != '/')) {
        snprintf(err, errlen, "binary: must be an absolute path");
        PV_BAIL(PV_ERR_USAGE);
    }
    return PV_RESULT_OK;
}

pv_result prover_body_decode(enum prover_body_kind kind, const char *buf, size_t len,
                             uint64_t max_timeout_ms, struct prover_body *out, char *err,
                             size_t errlen)
{
    json_error_t jerr;
    pv_result r;

    memset(out, 0, sizeof(*out));
    if ((unsigned)kind >= PV_ARRAY_LEN(kinds) || buf == NULL) {
        snprintf(err, errlen, "body: internal error");
        PV_BAIL(PV_ERR_INTERNAL);
    }
    out->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (out->root == NULL) {
        snprintf(err, errlen, "body:%d:%d: %s", jerr.line < 1 ? 1 : jerr.line,
                 jerr.column < 1 ? 1 : jerr.column, jerr.text);
        PV_BAIL(PV_ERR_PARSE);
    }
    if (!json_is_object(out->root)) {
        prover_body_free(out);
        snprintf(err, errlen, "body: must be a JSON object");
        PV_BAIL(PV_ERR_USAGE);
    }
    r = scan_members(kind, buf, len, out, err, errlen);
    if (pv_ok(r)) {
        r = check_required(kind, out, err, errlen);
    }
    if (pv_ok(r) && out->f[PROVER_F_OPTIONS].present) {
        r = decode_options(kind, out->f[PROVER_F_OPTIONS].value, max_timeout_ms, out, err, errlen);
    }
    if (!pv_ok(r)) {
        prover_body_free(out);
        return r;
    }
    return PV_RESULT_OK;
}

void prover_body_free(struct prover_body *b)
{
    if (b == NULL) {
        return;
    }
    json_decref(b->root);
    memset(b, 0, sizeof(*b));
}

bool prover_body_object_at(const char *buf, size_t len, enum prover_field f, size_t *off)
{
    const char *want = prover_field_name(f);
    size_t wlen = strlen(want);
    size_t i;

    if (buf == NULL) {
        return false;
    }
    i = skip_ws(buf, 0, len);
    if (i >= len || buf[i] != '{') {
        return false;
    }
    i = skip_ws(buf, i + 1, len);
    while (i < len && buf[i] == '"') {
        size_t kstart = i + 1;
        size_t kend;

        if (!skip_string(buf, &i, len)) {
            return false;
        }
        kend = i - 1;
        i = skip_ws(buf, i, len);
        if (i >= len || buf[i] != ':') {
            return false;
        }
        i = skip_ws(buf, i + 1, len);
        if (kend - kstart == wlen && memcmp(buf + kstart, want, wlen) == 0) {
            if (i >= len || buf[i] != '{') {
                return false;
            }
            *off = i;
            return true;
        }
        if (!skip_value(buf, &i, len)) {
            return false;
        }
        i = skip_ws(buf, i, len);
        if (i >= len || buf[i] != ',') {
            return false;
        }
        i = skip_ws(buf, i + 1, len);
    }
    return false;
}

bool prover_body_validate(const struct prover_body *b, const char *buf, size_t len)
{
    if (b->root == NULL) {
        for (size_t i = 0; i < PROVER_F__COUNT; i++) {
            if (b->f[i].present) {
                return false;
            }
        }
        return true;
    }
    for (size_t i = 0; i < PROVER_F__COUNT; i++) {
        const struct prover_doc *d = &b->f[i];
        if (!d->present) {
            continue;
        }
        if (d->text == NULL || d->value != json_object_get(b->root, field_names[i])) {
            return false;
        }
        if (d->is_string) {
            if (!json_is_string(d->value) || d->text != json_string_value(d->value) ||
                d->len != json_string_length(d->value) || memchr(d->text, '\0', d->len)) {
                return false;
            }
        } else if (d->text < buf || d->len == 0 || d->len > len ||
                   (size_t)(d->text - buf) > len - d->len ||
                   (d->text[0] != '{' && d->text[0] != '[') ||
                   (d->text[d->len - 1] != '}' && d->text[d->len - 1] != ']')) {
            return false;
        }
    }
    return true;
}
