/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_eval.c - unit tests of the concrete evaluator (model_eval.c)
 *
 * Most of the evaluator's tests are data: the YAML files of tests/eval/ hold policies
 * (YAML text) and rows under them, each a request and the decision it must
 * get, for every clause of docs/semantics.md and the matching acceptance
 * vectors of the reference's proxy acceptance table ("V<n>" in the row
 * names; "ours" where proviso diverges). This program reads every file of
 * that folder, loads each row's policy through model_policy_load(), decides
 * the row's request and compares; a row whose policy must not load names a
 * substring of the expected diagnostic instead. The format is in
 * docs/internals/testing.md#the-evaluator-table.
 *
 * The tests that are code stay here: the compile step (preset expansion,
 * compiled fields), resolved target_sandbox endpoints and the loopback
 * switch, the scan fallback over a generated policy with many rules,
 * defensive inputs, and the name tables.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_file.h"
#include "model/model.h"
#include "model/model_int.h"

/* ===========================================================================
 * The data files (tests/eval/)
 * ========================================================================= */

/* Rows converted from the C table this runner replaced (209 decisions, four
 * load errors) plus the load-error control. Fewer rows means a file or rows
 * were lost: the run fails. Raise it when rows are added (222: the raw
 * ';' query rows, semantics.md#query-semicolon). */
#define EVAL_MIN_ROWS 222
#define EVAL_MAX_FILES 64
#define EVAL_MAX_BINS 8
#define EVAL_MAX_FILE_BYTES (1024u * 1024u)
#define EVAL_UNSET (-1)

/* A scalar of a data file, borrowed from its tree; s == NULL: absent. */
struct eval_str {
    const char *s;
    size_t len;
};

struct eval_row {
    const char *file; /* the data file's name in messages */
    uint32_t line;    /* of the row's first key */
    const char *name;
    const char *policy_key;
    struct eval_str policy; /* the policy's YAML text */
    uint32_t policy_line;
    /* request */
    const char *bins[EVAL_MAX_BINS];
    int nbins; /* EVAL_UNSET: the default identity /usr/bin/curl */
    struct eval_str host;
    int port;
    struct eval_str method; /* absent: a connection-level request */
    struct eval_str target;
    struct eval_str dest; /* absent: destination not resolved */
    /* expect */
    int allow;
    int grant;
    int reason;
    int route;
    struct eval_str rule;       /* "": no rule; absent: unchecked */
    struct eval_str detail;     /* "": empty detail; else a substring */
    struct eval_str load_error; /* the policy must not load */
};

struct eval_file {
    char name[512];
    char *buf;
    struct model_node *tree;
};

static struct {
    struct eval_file files[EVAL_MAX_FILES];
    size_t nfiles;
    struct eval_row *rows;
    size_t nrows;
    size_t cap;
    size_t nerrors;
    char first_error[512];
} data;

/* A problem with the data itself: printed at once, counted, and failed by
 * test_data_files (the first one is its message). Located at node 'n' of
 * 'file', at 'file' alone, or (file NULL) by the reader's own diagnostic. */
static void data_error(const char *file, const struct model_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void data_error(const char *file, const struct model_node *n, const char *fmt, ...)
{
    char msg[400];
    char where[512];
    uint32_t line = 0;
    uint32_t col = 0;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (file == NULL) {
        snprintf(where, sizeof(where), "%s", msg); /* already FILE:LINE:COL: text */
    } else if (n != NULL) {
        model_node_where(n, &line, &col);
        snprintf(where, sizeof(where), "%s:%u:%u: %s", file, line, col, msg);
    } else {
        snprintf(where, sizeof(where), "%s: %s", file, msg);
    }
    fprintf(stderr, "%s\n", where);
    if (data.nerrors++ == 0) {
        snprintf(data.first_error, sizeof(data.first_error), "%s", where);
    }
}

/* A mapping key's text (keys are scalars: the reader refuses others). */
static const char *key_text(const struct model_node *k)
{
    size_t len;
    const char *s = model_node_text(k, &len);

    return s != NULL ? s : "";
}

static bool scalar(const char *file, const struct model_node *v, const char *what,
                   struct eval_str *out)
{
    out->s = model_node_text(v, &out->len);
    if (out->s == NULL) {
        data_error(file, v, "%s: not a scalar", what);
        return false;
    }
    return true;
}

/* A name without NUL bytes, for the C strings of a request and messages. */
static bool text(const char *file, const struct model_node *v, const char *what, const char **out)
{
    struct eval_str s;

    if (!scalar(file, v, what, &s)) {
        return false;
    }
    if (strlen(s.s) != s.len) {
        data_error(file, v, "%s: holds a NUL byte", what);
        return false;
    }
    *out = s.s;
    return true;
}

static bool boolean(const char *file, const struct model_node *v, const char *what, int *out)
{
    const char *s;

    if (!text(file, v, what, &s)) {
        return false;
    }
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
        *out = s[0] == 't';
        return true;
    }
    data_error(file, v, "%s: '%s' is neither true nor false", what, s);
    return false;
}

/* The enumerator whose name (model_reason_name, model_route_name) is 's'. */
static bool enum_name(const char *file, const struct model_node *v, const char *what,
                      const char *(*name_of)(int), int *out)
{
    const char *s;

    if (!text(file, v, what, &s)) {
        return false;
    }
    for (int i = 0; i < 64; i++) {
        const char *n = name_of(i);
        if (strcmp(n, "unknown") != 0 && strcmp(n, s) == 0) {
            *out = i;
            return true;
        }
    }
    data_error(file, v, "%s: unknown name '%s'", what, s);
    return false;
}

static const char *reason_of(int i)
{
    return model_reason_name((enum model_reason)i);
}

static const char *route_of(int i)
{
    return model_route_name((enum model_route)i);
}

enum eval_kind { EK_STR, EK_PORT, EK_BOOL, EK_REASON, EK_ROUTE, EK_BINS };

/* The keys of a row's request and expect mappings. */
struct eval_field {
    const char *key;
    enum eval_kind kind;
    size_t off;
};

#define EF(member) offsetof(struct eval_row, member)
static const struct eval_field request_fields[] = {
    {"binaries", EK_BINS, EF(bins)}, {"host", EK_STR, EF(host)},     {"port", EK_PORT, EF(port)},
    {"method", EK_STR, EF(method)},  {"target", EK_STR, EF(target)}, {"dest", EK_STR, EF(dest)},
};
static const struct eval_field expect_fields[] = {
    {"allow", EK_BOOL, EF(allow)},
    {"grant", EK_BOOL, EF(grant)},
    {"reason", EK_REASON, EF(reason)},
    {"route", EK_ROUTE, EF(route)},
    {"rule", EK_STR, EF(rule)},
    {"detail", EK_STR, EF(detail)},
    {"load_error", EK_STR, EF(load_error)},
};
#undef EF

static bool read_bins(const char *file, const struct model_node *v, struct eval_row *r)
{
    if (model_node_kind_of(v) != MODEL_NODE_SEQ) {
        data_error(file, v, "binaries: not a list");
        return false;
    }
    if (v->nitems > EVAL_MAX_BINS) {
        data_error(file, v, "binaries: more than %d", EVAL_MAX_BINS);
        return false;
    }
    for (size_t i = 0; i < v->nitems; i++) {
        if (!text(file, v->items[i], "binaries", &r->bins[i])) {
            return false;
        }
    }
    r->nbins = (int)v->nitems;
    return true;
}

static bool read_field(const char *file, const struct eval_field *f, const struct model_node *v,
                       struct eval_row *r)
{
    void *dst = (char *)r + f->off;
    const char *s;
    uint64_t port;

    switch (f->kind) {
    case EK_STR:
        return scalar(file, v, f->key, dst);
    case EK_PORT:
        if (!text(file, v, f->key, &s) || !pv_ok(pv_parse_u64(s, strlen(s), 65535, &port))) {
            data_error(file, v, "port: not a number up to 65535");
            return false;
        }
        *(int *)dst = (int)port;
        return true;
    case EK_BOOL:
        return boolean(file, v, f->key, dst);
    case EK_REASON:
        return enum_name(file, v, f->key, reason_of, dst);
    case EK_ROUTE:
        return enum_name(file, v, f->key, route_of, dst);
    case EK_BINS:
        return read_bins(file, v, r);
    }
    return false;
}

/* A flow or block mapping of 'fields' into 'r'; an unknown key is an error. */
static bool read_map(const char *file, const struct model_node *map, const char *what,
                     const struct eval_field *fields, size_t nfields, struct eval_row *r)
{
    bool ok = true;

    if (model_node_kind_of(map) != MODEL_NODE_MAP) {
        data_error(file, map, "%s: not a mapping", what);
        return false;
    }
    for (size_t i = 0; i < model_node_npairs(map); i++) {
        const struct model_node *v;
        const struct model_node *k = model_node_pair(map, i, &v);
        const char *key = key_text(k);
        size_t j = 0;

        while (j < nfields && strcmp(fields[j].key, key) != 0) {
            j++;
        }
        if (j == nfields) {
            data_error(file, k, "%s: unknown key '%s'", what, key);
            ok = false;
        } else if (!read_field(file, &fields[j], v, r)) {
            ok = false;
        }
    }
    return ok;
}

static const struct model_node *member(const struct model_node *map, const char *key)
{
    return model_node_kind_of(map) == MODEL_NODE_MAP ? model_node_member(map, key) : NULL;
}

/* What a row must hold: a decision row a request with host and port and at
 * least allow and reason; a load-error row no request and nothing else. */
static bool row_complete(const char *file, const struct model_node *n, const struct eval_row *r)
{
    if (r->load_error.s != NULL) {
        if (member(n, "request") != NULL || r->allow != EVAL_UNSET || r->grant != EVAL_UNSET ||
            r->reason != EVAL_UNSET || r->route != EVAL_UNSET || r->rule.s != NULL ||
            r->detail.s != NULL) {
            data_error(file, n, "%s: load_error goes alone, without a request", r->name);
            return false;
        }
        return true;
    }
    if (r->host.s == NULL || r->port == EVAL_UNSET) {
        data_error(file, n, "%s: the request needs host and port", r->name);
        return false;
    }
    if (r->allow == EVAL_UNSET || r->reason == EVAL_UNSET) {
        data_error(file, n, "%s: expect needs allow and reason (or load_error)", r->name);
        return false;
    }
    return true;
}

static struct eval_row *row_new(void)
{
    if (data.nrows == data.cap) {
        size_t cap = data.cap == 0 ? 256 : 2 * data.cap;
        struct eval_row *rows = realloc(data.rows, cap * sizeof(*rows));
        if (rows == NULL) {
            return NULL;
        }
        data.rows = rows;
        data.cap = cap;
    }
    return &data.rows[data.nrows];
}

static void read_row(const char *file, const struct model_node *n, const struct model_node *pols,
                     bool *used)
{
    static const char *const keys[] = {"name", "policy", "request", "expect", NULL};
    struct eval_row *r = row_new();
    const struct model_node *pol;
    uint32_t col;
    size_t i;
    bool ok = true;

    if (r == NULL) {
        data_error(file, n, "out of memory");
        return;
    }
    memset(r, 0, sizeof(*r));
    r->file = file;
    r->nbins = r->port = r->allow = r->grant = r->reason = r->route = EVAL_UNSET;
    model_node_where(n, &r->line, &col);
    if (model_node_kind_of(n) != MODEL_NODE_MAP) {
        data_error(file, n, "a row is a mapping");
        return;
    }
    for (i = 0; i < model_node_npairs(n); i++) {
        const struct model_node *v;
        const struct model_node *k = model_node_pair(n, i, &v);
        if (model_node_key_index(k, keys) < 0) {
            data_error(file, k, "row: unknown key '%s'", key_text(k));
            ok = false;
        }
    }
    if (member(n, "name") == NULL || !text(file, member(n, "name"), "name", &r->name) ||
        member(n, "policy") == NULL || !text(file, member(n, "policy"), "policy", &r->policy_key) ||
        member(n, "expect") == NULL) {
        data_error(file, n, "a row needs name, policy and expect");
        return;
    }
    pol = member(pols, r->policy_key);
    if (pol == NULL) {
        data_error(file, member(n, "policy"), "%s: no policy '%s' in this file", r->name,
                   r->policy_key);
        return;
    }
    for (i = 0; i < model_node_npairs(pols); i++) {
        const struct model_node *v;
        model_node_pair(pols, i, &v);
        if (v == pol) {
            used[i] = true;
        }
    }
    model_node_where(pol, &r->policy_line, &col);
    ok = scalar(file, pol, "policy", &r->policy) && ok;
    if (member(n, "request") != NULL) {
        ok = read_map(file, member(n, "request"), "request", request_fields,
                      PV_ARRAY_LEN(request_fields), r) &&
             ok;
    }
    ok = read_map(file, member(n, "expect"), "expect", expect_fields, PV_ARRAY_LEN(expect_fields),
                  r) &&
         ok;
    if (ok && row_complete(file, n, r)) {
        data.nrows++;
    }
}

/* One data file: a mapping of 'policies' (name: YAML text) and 'rows' (a
 * non-empty list). Every policy is used by some row. */
static void read_doc(const char *file, const struct model_node *doc)
{
    const struct model_node *pols = member(doc, "policies");
    const struct model_node *rows = member(doc, "rows");
    bool used[256] = {false};

    if (model_node_kind_of(doc) != MODEL_NODE_MAP || rows == NULL || pols == NULL) {
        data_error(file, NULL, "no rows: a data file is a mapping of policies and rows");
        return;
    }
    if (model_node_npairs(doc) != 2) {
        data_error(file, doc, "only the keys policies and rows");
    }
    if (model_node_kind_of(pols) != MODEL_NODE_MAP || model_node_npairs(pols) > 256) {
        data_error(file, pols, "policies: a mapping of at most 256 names to YAML text");
        return;
    }
    if (model_node_kind_of(rows) != MODEL_NODE_SEQ || rows->nitems == 0) {
        data_error(file, rows, "rows: not a non-empty list");
        return;
    }
    for (size_t i = 0; i < rows->nitems; i++) {
        read_row(file, rows->items[i], pols, used);
    }
    for (size_t i = 0; i < model_node_npairs(pols); i++) {
        const struct model_node *v;
        const struct model_node *k = model_node_pair(pols, i, &v);
        if (!used[i]) {
            data_error(file, k, "policy '%s' is used by no row", key_text(k));
        }
    }
}

static void read_file(const char *dir, const char *label, const char *entry)
{
    struct eval_file *f = &data.files[data.nfiles];
    struct model_diags *d = model_diags_new();
    char path[4096];
    char err[512];
    size_t len = 0;
    int n;
    int m;

    if (data.nfiles == EVAL_MAX_FILES) {
        data_error(label, NULL, "more than %d data files", EVAL_MAX_FILES);
        model_diags_free(d);
        return;
    }
    data.nfiles++;
    n = snprintf(f->name, sizeof(f->name), "%s/%s", label, entry);
    m = snprintf(path, sizeof(path), "%s/%s", dir, entry);
    if (n < 0 || (size_t)n >= sizeof(f->name) || m < 0 || (size_t)m >= sizeof(path)) {
        data_error(label, NULL, "%s: path too long", entry);
    } else if (!pv_ok(pv_file_read(path, EVAL_MAX_FILE_BYTES, false, &f->buf, &len, err,
                                   sizeof(err)))) {
        data_error(f->name, NULL, "%s", err);
    } else if (d == NULL) {
        data_error(f->name, NULL, "out of memory");
    } else {
        f->tree = model_yaml_tree(f->name, f->buf, len, d);
        for (size_t i = 0; f->tree == NULL && i < model_diags_count(d); i++) {
            data_error(NULL, NULL, "%s", model_diags_line(d, i));
        }
        if (f->tree == NULL && model_diags_count(d) == 0) {
            data_error(f->name, NULL, "unreadable");
        }
        if (f->tree != NULL) {
            read_doc(f->name, f->tree);
        }
    }
    model_diags_free(d);
}

/* Row names are the rows' identity in messages and reviews: each once. */
static void check_names(void)
{
    for (size_t i = 0; i < data.nrows; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(data.rows[i].name, data.rows[j].name) == 0) {
                char where[600];
                snprintf(where, sizeof(where), "%s:%u", data.rows[i].file, data.rows[i].line);
                data_error(where, NULL, "row name '%s' is also at %s:%u", data.rows[i].name,
                           data.rows[j].file, data.rows[j].line);
            }
        }
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every file of the folder, in name order; each must be NAME.yaml. The
 * folder is $PV_EVAL_DIR (tests/model_eval_data.sh mutates a copy), else
 * tests/eval under $PV_SRCDIR, $srcdir or the configured source tree. */
static void read_data(void)
{
    const char *over = getenv("PV_EVAL_DIR");
    const char *src = getenv("PV_SRCDIR");
    const char *label = over != NULL ? over : "tests/eval";
    char *names[EVAL_MAX_FILES + 1];
    size_t n = 0;
    char dir[4096];
    DIR *dp;
    const struct dirent *e;

    if (src == NULL) {
        src = getenv("srcdir");
    }
    if (over != NULL) {
        snprintf(dir, sizeof(dir), "%s", over);
    } else {
        snprintf(dir, sizeof(dir), "%s/tests/eval", src != NULL ? src : PV_SRCDIR);
    }
    dp = opendir(dir);
    if (dp == NULL) {
        data_error(dir, NULL, "cannot open the data folder");
        return;
    }
    while ((e = readdir(dp)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.') {
            continue;
        }
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) {
            data_error(label, NULL, "%s: not a .yaml data file", e->d_name);
            continue;
        }
        if (n == PV_ARRAY_LEN(names)) {
            data_error(label, NULL, "more than %d data files", EVAL_MAX_FILES);
            break;
        }
        names[n] = strdup(e->d_name);
        if (names[n] != NULL) {
            n++;
        }
    }
    closedir(dp);
    qsort(names, n, sizeof(names[0]), cmp_names);
    for (size_t i = 0; i < n; i++) {
        read_file(dir, label, names[i]);
        free(names[i]);
    }
    check_names();
}

static void free_data(void)
{
    for (size_t i = 0; i < data.nfiles; i++) {
        model_node_free(data.files[i].tree);
        free(data.files[i].buf);
    }
    free(data.rows);
}

/* The data were read whole: no error, no file without rows, and no fewer
 * rows than were converted. */
START_TEST(test_data_files)
{
    ck_assert_msg(data.nerrors == 0, "%zu errors in the data files, the first: %s", data.nerrors,
                  data.first_error);
    ck_assert_msg(data.nrows >= EVAL_MIN_ROWS,
                  "%zu rows in %zu data files, fewer than %d: a file or rows were lost", data.nrows,
                  data.nfiles, EVAL_MIN_ROWS);
}
END_TEST

/* ===========================================================================
 * One row
 * ========================================================================= */

static const char *const default_bins[] = {"/usr/bin/curl"};

/* Decide the row's request under 'p' and compare; 'who' is FILE:LINE: NAME. */
static void run_row(const struct eval_row *r, const char *who, const struct model_policy *p)
{
    struct model_request req;
    struct model_decision out;
    struct model_ip ip;

    memset(&req, 0, sizeof(req));
    req.binaries = r->nbins == EVAL_UNSET ? default_bins : r->bins;
    req.nbinaries = r->nbins == EVAL_UNSET ? 1 : (size_t)r->nbins;
    req.host = r->host.s;
    req.host_len = r->host.len;
    req.port = (uint16_t)r->port;
    req.method = r->method.s;
    req.target = r->target.s;
    req.target_len = r->target.len;
    if (r->dest.s != NULL) {
        ck_assert_msg(model_ip_parse(r->dest.s, r->dest.len, &ip), "%s: dest is not an address",
                      who);
        req.dest = &ip;
    }
    memset(&out, 0x5a, sizeof(out));
    model_decide(p, &req, &out);
    ck_assert_msg(out.allow == (r->allow != 0), "%s: allow %d, want %d (reason %s: %s)", who,
                  out.allow, r->allow, model_reason_name(out.reason), out.detail);
    ck_assert_msg(out.reason == (enum model_reason)r->reason, "%s: reason %s, want %s (%s)", who,
                  model_reason_name(out.reason), model_reason_name((enum model_reason)r->reason),
                  out.detail);
    if (r->grant != EVAL_UNSET) {
        ck_assert_msg(out.grant == (r->grant != 0), "%s: grant %d, want %d", who, out.grant,
                      r->grant);
    }
    if (r->route != EVAL_UNSET) {
        ck_assert_msg(out.route == (enum model_route)r->route, "%s: route %s, want %s", who,
                      model_route_name(out.route), model_route_name((enum model_route)r->route));
    }
    if (r->rule.s != NULL && r->rule.len == 0) {
        ck_assert_msg(out.rule == NULL, "%s: rule %s, want none", who,
                      out.rule != NULL ? model_rule_key(out.rule) : "");
    } else if (r->rule.s != NULL) {
        ck_assert_msg(out.rule != NULL && strcmp(model_rule_key(out.rule), r->rule.s) == 0,
                      "%s: rule %s, want %s", who,
                      out.rule != NULL ? model_rule_key(out.rule) : "(none)", r->rule.s);
        ck_assert_msg(out.endpoint != NULL, "%s: a rule without an endpoint", who);
    }
    if (r->detail.s != NULL && r->detail.len == 0) {
        ck_assert_msg(out.detail[0] == '\0', "%s: detail '%s', want none", who, out.detail);
    } else if (r->detail.s != NULL) {
        ck_assert_msg(strstr(out.detail, r->detail.s) != NULL, "%s: detail '%s' lacks '%s'", who,
                      out.detail, r->detail.s);
    }
    if (out.allow) {
        ck_assert_msg(out.grant, "%s: allow without grant", who);
        ck_assert_msg(out.binary != NULL, "%s: allow without binary", who);
    }
    ck_assert_msg(memchr(out.detail, '\0', sizeof(out.detail)) != NULL, "%s: detail unterminated",
                  who);
}

/* A load-error row: the policy is refused with a diagnostic holding the
 * expected text. */
static void run_load_error(const struct eval_row *r, const char *who, struct model_policy *p,
                           struct model_diags *d)
{
    bool found = false;

    ck_assert_msg(p == NULL, "%s: policy '%s' loads, want an error with '%s'", who, r->policy_key,
                  r->load_error.s);
    for (size_t i = 0; i < model_diags_count(d); i++) {
        if (strstr(model_diags_msg(d, i), r->load_error.s) != NULL) {
            found = true;
        }
    }
    ck_assert_msg(found, "%s: no diagnostic with '%s' (first: %s)", who, r->load_error.s,
                  model_diags_count(d) > 0 ? model_diags_line(d, 0) : "none");
}

START_TEST(test_data_row)
{
    const struct eval_row *r = &data.rows[_i];
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    char who[700];

    snprintf(who, sizeof(who), "%s:%u: %s", r->file, r->line, r->name);
    ck_assert_ptr_nonnull(d);
    /* Diagnostics name the policy; its line numbers count from its text. */
    p = model_policy_load(r->policy_key, r->policy.s, r->policy.len, MODEL_FMT_YAML, d);
    if (r->load_error.s != NULL) {
        run_load_error(r, who, p, d);
    } else {
        ck_assert_msg(p != NULL, "%s: policy '%s' (line %u) does not load: %s", who, r->policy_key,
                      r->policy_line,
                      model_diags_count(d) > 0 ? model_diags_line(d, 0) : "no diagnostic");
        run_row(r, who, p);
        /* A recompiled policy decides the same. */
        ck_assert_msg(pv_ok(model_policy_compile(p)), "%s: recompiling fails", who);
        run_row(r, who, p);
    }
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* ===========================================================================
 * Policies of the tests that are code
 * ========================================================================= */

#define HDR "version: 1\nnetwork_policies:\n"
#define CURL "    binaries:\n      - path: /usr/bin/curl\n"

static const char P_API[] = HDR "  api:\n"
                                "    endpoints:\n"
                                "      - host: api.example.com\n"
                                "        port: 443\n" CURL;

static const char P_LAN_IP[] = HDR "  lanip:\n"
                                   "    endpoints:\n"
                                   "      - host: 192.168.1.100\n"
                                   "        port: 8567\n"
                                   "      - host: fd00::1\n"
                                   "        port: 8443\n" CURL;

static const char P_REST[] = HDR "  repos:\n"
                                 "    endpoints:\n"
                                 "      - host: api.example.com\n"
                                 "        port: 8080\n"
                                 "        protocol: rest\n"
                                 "        enforcement: enforce\n"
                                 "        rules:\n"
                                 "          - allow: {method: GET, path: '/repos/**'}\n"
                                 "          - allow: {method: POST, path: '/repos/*/issues'}\n"
                                 "          - allow: {method: '*', path: /any}\n" CURL;

static const char P_RO[] = HDR "  ro:\n"
                               "    endpoints:\n"
                               "      - host: ro.example.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        access: read-only\n"
                               "      - host: rw.example.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        access: read-write\n"
                               "      - host: full.example.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        access: full\n" CURL;

static const char P_QUERY[] = HDR "  dl:\n"
                                  "    endpoints:\n"
                                  "      - host: dl.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        rules:\n"
                                  "          - allow:\n"
                                  "              method: GET\n"
                                  "              path: /download\n"
                                  "              query: {tag: 'foo-*'}\n"
                                  "          - allow:\n"
                                  "              method: GET\n"
                                  "              path: /v\n"
                                  "              query: {v: '*'}\n"
                                  "          - allow:\n"
                                  "              method: GET\n"
                                  "              path: /any\n"
                                  "              query:\n"
                                  "                tag: {any: ['a*', 'b*']}\n"
                                  "                ver: {glob: 'v*'}\n" CURL;

static const char P_SANDBOX[] = HDR "  peer:\n"
                                    "    endpoints:\n"
                                    "      - host: peer.internal.example\n"
                                    "        port: 8080\n"
                                    "        target_sandbox: peer-1\n" CURL;

static struct model_policy *load(const char *yaml)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    ck_assert_ptr_nonnull(d);
    p = model_policy_load("test.yaml", yaml, strlen(yaml), MODEL_FMT_YAML, d);
    if (p == NULL) {
        for (size_t i = 0; i < model_diags_count(d); i++) {
            fprintf(stderr, "%s\n", model_diags_line(d, i));
        }
    }
    model_diags_free(d);
    return p;
}

/* ===========================================================================
 * Compile: presets, recompilation, resolved target_sandbox
 * ========================================================================= */

static const struct {
    const char *host;
    size_t n;
    const char *methods[6];
} preset_rows[] = {
    {"ro.example.com", 3, {"GET", "HEAD", "OPTIONS"}},
    {"rw.example.com", 6, {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"}},
    {"full.example.com", 1, {"*"}},
};

START_TEST(test_preset_expansion)
{
    struct model_policy *p = load(P_RO);
    const struct model_endpoint *e = NULL;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < p->rules[0].nendpoints; i++) {
        if (strcmp(p->rules[0].endpoints[i].host.s, preset_rows[_i].host) == 0) {
            e = &p->rules[0].endpoints[i];
        }
    }
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->nrules, 0);
    ck_assert_uint_eq(e->neff_rules, preset_rows[_i].n);
    for (size_t i = 0; i < e->neff_rules; i++) {
        ck_assert_str_eq(e->eff_rules[i].method.s, preset_rows[_i].methods[i]);
        ck_assert_str_eq(e->eff_rules[i].path.s, "**");
        ck_assert_ptr_nonnull(e->eff_rules[i].path_glob);
    }
    model_policy_free(p);
}
END_TEST

START_TEST(test_compile_fields)
{
    struct model_policy *p = load(P_QUERY);
    const struct model_endpoint *e;

    ck_assert_ptr_nonnull(p);
    ck_assert(p->compiled);
    ck_assert_ptr_nonnull(p->index);
    e = &p->rules[0].endpoints[0];
    ck_assert_ptr_nonnull(e->host_glob);
    ck_assert(!e->host_is_ip);
    /* Explicit rules are deep copies, compiled independently. */
    ck_assert_uint_eq(e->neff_rules, e->nrules);
    ck_assert_ptr_ne(e->eff_rules[0].method.s, e->rules[0].method.s);
    ck_assert_str_eq(e->eff_rules[2].query[0].key.s, "tag");
    ck_assert_ptr_nonnull(e->eff_rules[2].query[0].compiled);
    ck_assert_ptr_nonnull(e->eff_rules[2].query[0].compiled[1]);
    ck_assert_ptr_nonnull(e->rules[0].path_glob);
    ck_assert_ptr_nonnull(p->rules[0].binaries[0].glob);
    model_policy_free(p);

    p = load(P_LAN_IP);
    ck_assert_ptr_nonnull(p);
    e = &p->rules[0].endpoints[0];
    ck_assert(e->host_is_ip);
    ck_assert_ptr_null(e->host_glob);
    model_policy_free(p);
}
END_TEST

static void decide_simple(const struct model_policy *p, const char *host, uint16_t port,
                          const char *ip, struct model_decision *out)
{
    static const char *const bins[] = {"/usr/bin/curl"};
    struct model_request req;
    struct model_ip addr;

    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = host;
    req.host_len = strlen(host);
    req.port = port;
    if (ip != NULL) {
        ck_assert(model_ip_parse(ip, strlen(ip), &addr));
        req.dest = &addr;
    }
    model_decide(p, &req, out);
}

static const struct {
    const char *ip;
    bool allow;
    enum model_reason reason;
} sandbox_rows[] = {
    {"10.9.0.7", true, MODEL_REASON_ALLOWED},
    {"10.9.0.8", false, MODEL_REASON_DEST_ALLOWED_IPS},
    {"8.8.8.8", false, MODEL_REASON_DEST_ALLOWED_IPS},
    {NULL, true, MODEL_REASON_ALLOWED},
};

static const char *const *peer_fn(void *arg, const char *name)
{
    static const char *const none[] = {NULL};

    return strcmp(name, "peer-1") == 0 || strcmp(name, "db") == 0 ? (const char *const *)arg : none;
}

/* Composition resolves target_sandbox into resolved_ips; the endpoint then
 * admits exactly the peer's address, and unresolving it admits nothing. */
START_TEST(test_resolved_target_sandbox)
{
    static const char *const addrs[] = {"10.9.0.7", "10.9.0.7", NULL};
    static const char *const none[] = {NULL};
    struct model_policy *p = load(P_SANDBOX);
    struct model_diags *d = model_diags_new();
    struct model_decision out;
    char *yaml;

    ck_assert_ptr_nonnull(p);
    decide_simple(p, "peer.internal.example", 8080, sandbox_rows[_i].ip, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_DEST_UNRESOLVED);
    ck_assert(pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(addrs), d)));
    ck_assert_uint_eq(p->rules[0].endpoints[0].resolved_ips.n, 1); /* unique */
    decide_simple(p, "peer.internal.example", 8080, sandbox_rows[_i].ip, &out);
    ck_assert_int_eq(out.allow, sandbox_rows[_i].allow);
    ck_assert_int_eq(out.reason, sandbox_rows[_i].reason);
    yaml = model_policy_to_yaml(p, NULL);
    ck_assert_ptr_nonnull(strstr(yaml, "resolved_ips"));
    free(yaml);
    ck_assert(pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(none), d)));
    decide_simple(p, "peer.internal.example", 8080, sandbox_rows[_i].ip, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_DEST_UNRESOLVED);
    model_diags_free(d);
    model_policy_free(p);
}
END_TEST

/* A peer address that is always-blocked (not loopback) fails composition. */
START_TEST(test_resolve_refuses_link_local)
{
    static const char *const addrs[] = {"169.254.169.254", NULL};
    struct model_policy *p = load(P_SANDBOX);
    struct model_diags *d = model_diags_new();

    ck_assert(!pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(addrs), d)));
    ck_assert_uint_ge(model_diags_count(d), 1);
    ck_assert_ptr_nonnull(strstr(model_diags_line(d, 0), "is always blocked"));
    model_diags_free(d);
    model_policy_free(p);
}
END_TEST

static const char P_PEER[] = HDR "  peer:\n"
                                 "    endpoints:\n"
                                 "      - target_sandbox: db\n"
                                 "        port: 8080\n" CURL;

/* docs/semantics.md#test-loopback: under the switch a loopback peer address
 * is reached only when the request names that address literally. */
static const struct {
    const char *host;
    const char *ip;
    bool test_loopback;
    bool allow;
    enum model_reason reason;
} peer_lo_rows[] = {
    {"127.0.0.6", "127.0.0.6", true, true, MODEL_REASON_ALLOWED},
    {"127.0.0.6", "127.0.0.6", false, false, MODEL_REASON_DEST_BLOCKED},
    {"127.0.0.7", "127.0.0.7", true, false, MODEL_REASON_DEST_BLOCKED},
    {"db.local", "127.0.0.6", true, false, MODEL_REASON_DEST_BLOCKED},
    {"db.local", "10.1.1.1", true, false, MODEL_REASON_DEST_ALLOWED_IPS},
};

START_TEST(test_peer_loopback_switch)
{
    static const char *const addrs[] = {"127.0.0.6", NULL};
    static const char *const bins[] = {"/usr/bin/curl"};
    struct model_policy *p = load(P_PEER);
    struct model_diags *d = model_diags_new();
    struct model_request req;
    struct model_decision out;
    struct model_ip addr;

    ck_assert_ptr_nonnull(p);
    ck_assert(pv_ok(model_policy_resolve_peers(p, peer_fn, PV_UNCONST(addrs), d)));
    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = peer_lo_rows[_i].host;
    req.host_len = strlen(req.host);
    req.port = 8080;
    req.test_loopback = peer_lo_rows[_i].test_loopback;
    ck_assert(model_ip_parse(peer_lo_rows[_i].ip, strlen(peer_lo_rows[_i].ip), &addr));
    req.dest = &addr;
    model_decide(p, &req, &out);
    ck_assert_int_eq(out.allow, peer_lo_rows[_i].allow);
    ck_assert_int_eq(out.reason, peer_lo_rows[_i].reason);
    model_diags_free(d);
    model_policy_free(p);
}
END_TEST

/* ===========================================================================
 * Many candidates: the scan fallback sees the same units
 * ========================================================================= */

#define BIG_RULES 300

static char *big_policy(bool hostless)
{
    size_t cap = 400u * BIG_RULES + 64;
    char *y = malloc(cap);
    size_t len;

    ck_assert_ptr_nonnull(y);
    len = (size_t)snprintf(y, cap, "%s", HDR);
    for (int i = 0; i < BIG_RULES; i++) {
        int n;
        if (hostless) {
            n = snprintf(y + len, cap - len,
                         "  r%03d:\n    endpoints:\n      - port: 443\n        protocol: rest\n"
                         "        enforcement: enforce\n        access: full\n"
                         "        allowed_ips: [10.0.%d.0/24]\n%s"
                         "    binaries:\n      - path: /opt/b%03d/*\n",
                         i, i % 250,
                         i == 150 ? "        deny_rules:\n"
                                    "          - {method: GET, path: /deny}\n"
                                  : "",
                         i);
        } else {
            n = snprintf(y + len, cap - len,
                         "  r%03d:\n    endpoints:\n      - host: '*.big.example.com'\n"
                         "        port: 443\n    binaries:\n      - path: /opt/b%03d/*\n",
                         i, i);
        }
        ck_assert(n > 0 && (size_t)n < cap - len);
        len += (size_t)n;
    }
    if (hostless) {
        /* Only the scan visits wildcards for an IP host: it must skip them. */
        int n = snprintf(y + len, cap - len,
                         "  zz_tenstar:\n    endpoints:\n      - host: '10.*.*.*'\n"
                         "        port: 443\n    binaries:\n      - path: /opt/tenstar\n");
        ck_assert(n > 0 && (size_t)n < cap - len);
    }
    return y;
}

static const struct {
    bool hostless;
    const char *host;
    const char *bin;
    const char *method;
    const char *target;
    const char *ip;
    bool allow;
    enum model_reason reason;
    const char *rule;
} big_rows[] = {
    {false, "a.big.example.com", "/opt/b299/x", NULL, NULL, NULL, true, MODEL_REASON_ALLOWED,
     "r299"},
    {false, "a.big.example.com", "/opt/b000/x", NULL, NULL, NULL, true, MODEL_REASON_ALLOWED,
     "r000"},
    {false, "a.big.example.com", "/opt/b999/x", NULL, NULL, NULL, false, MODEL_REASON_BINARY,
     "r000"},
    {false, "a.big.example.com", "/opt/b123/x", NULL, NULL, "10.0.0.1", false,
     MODEL_REASON_DEST_INTERNAL, "r123"},
    {true, "a.big.example.com", "/opt/b150/x", "GET", "/deny", "10.0.150.1", false,
     MODEL_REASON_L7_DENY_RULE, "r150"},
    {true, "a.big.example.com", "/opt/b150/x", "GET", "/ok", "10.0.150.1", true,
     MODEL_REASON_ALLOWED, "r150"},
    {true, "a.big.example.com", "/opt/b270/x", "GET", "/deny", "10.0.20.1", true,
     MODEL_REASON_ALLOWED, "r270"},
    {true, "a.big.example.com", "/opt/b270/x", "GET", "/ok", "10.0.21.1", false,
     MODEL_REASON_DEST_ALLOWED_IPS, "r270"},
    {true, "10.0.0.5", "/opt/tenstar", NULL, NULL, "10.0.0.5", false, MODEL_REASON_BINARY, "r000"},
    {true, "10.0.0.5", "/opt/b000/x", "GET", "/", NULL, true, MODEL_REASON_ALLOWED, "r000"},
};

START_TEST(test_scan_fallback)
{
    char *y = big_policy(big_rows[_i].hostless);
    struct model_policy *p = load(y);
    const char *bins[1] = {big_rows[_i].bin};
    struct model_request req;
    struct model_decision out;
    struct model_ip ip;

    ck_assert_ptr_nonnull(p);
    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = big_rows[_i].host;
    req.host_len = strlen(req.host);
    req.port = 443;
    req.method = big_rows[_i].method;
    req.target = big_rows[_i].target;
    req.target_len = req.target != NULL ? strlen(req.target) : 0;
    if (big_rows[_i].ip != NULL) {
        ck_assert(model_ip_parse(big_rows[_i].ip, strlen(big_rows[_i].ip), &ip));
        req.dest = &ip;
    }
    model_decide(p, &req, &out);
    ck_assert_msg(out.allow == big_rows[_i].allow, "row %d: %s", _i, out.detail);
    ck_assert_int_eq(out.reason, big_rows[_i].reason);
    ck_assert_ptr_nonnull(out.rule);
    ck_assert_str_eq(model_rule_key(out.rule), big_rows[_i].rule);
    model_policy_free(p);
    free(y);
}
END_TEST

/* ===========================================================================
 * Defensive inputs, names, method validity
 * ========================================================================= */

START_TEST(test_defensive)
{
    struct model_policy *p = load(P_API);
    struct model_policy *empty = model_policy_new_empty();
    const char *bins[MODEL_MAX_IDENTITY + 1];
    struct model_request req;
    struct model_decision out;

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i <= MODEL_MAX_IDENTITY; i++) {
        bins[i] = "/usr/bin/curl";
    }
    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = "api.example.com";
    req.host_len = strlen(req.host);
    req.port = 443;
    model_decide(p, &req, &out);
    ck_assert(out.allow);
    /* NULL policy or request: deny. */
    model_decide(NULL, &req, &out);
    ck_assert(!out.allow && !out.grant);
    model_decide(p, NULL, &out);
    ck_assert(!out.allow);
    model_decide(p, &req, NULL); /* must not crash */
    /* Empty (uncompiled or rule-less) policy. */
    if (empty != NULL) {
        model_decide(empty, &req, &out);
        ck_assert(!out.allow);
        ck_assert_int_eq(out.reason, MODEL_REASON_NO_POLICY);
        model_policy_free(empty);
    }
    /* Too many identity entries: fail closed. */
    req.nbinaries = MODEL_MAX_IDENTITY + 1;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    req.nbinaries = MODEL_MAX_IDENTITY;
    model_decide(p, &req, &out);
    ck_assert(out.allow);
    /* NULL host, NULL target with a method. */
    req.nbinaries = 1;
    req.host = NULL;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_BAD_HOST);
    model_policy_free(p);

    p = load(P_REST);
    ck_assert_ptr_nonnull(p);
    req.host = "api.example.com";
    req.port = 8080;
    req.method = "GET";
    req.target = NULL;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    ck_assert_int_eq(out.reason, MODEL_REASON_BAD_TARGET);
    /* The target length is honoured: "/repos/x" cut to "/rep". */
    req.target = "/repos/x";
    req.target_len = 4;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    req.target_len = 8;
    model_decide(p, &req, &out);
    ck_assert(out.allow);
    /* A host with an embedded NUL is not the host before it. */
    req.host = "api.example.com\0.evil";
    req.host_len = 21;
    model_decide(p, &req, &out);
    ck_assert(!out.allow);
    model_policy_free(p);
}
END_TEST

START_TEST(test_names)
{
    static const enum model_reason all[] = {
        MODEL_REASON_ALLOWED,
        MODEL_REASON_AUDIT,
        MODEL_REASON_NO_POLICY,
        MODEL_REASON_NO_ENDPOINT,
        MODEL_REASON_BINARY,
        MODEL_REASON_BAD_HOST,
        MODEL_REASON_BAD_TARGET,
        MODEL_REASON_ENCODED_SLASH,
        MODEL_REASON_NO_L7_PATH,
        MODEL_REASON_L7_NOT_PERMITTED,
        MODEL_REASON_L7_DENY_RULE,
        MODEL_REASON_L7_UNSUPPORTED,
        MODEL_REASON_BAD_QUERY,
        MODEL_REASON_DEST_BLOCKED,
        MODEL_REASON_DEST_PORT,
        MODEL_REASON_DEST_INTERNAL,
        MODEL_REASON_DEST_ALLOWED_IPS,
        MODEL_REASON_DEST_UNRESOLVED,
        MODEL_REASON_GQL_NO_OPERATION,
        MODEL_REASON_GQL_BAD_METHOD,
        MODEL_REASON_GQL_BAD_OPERATION,
        MODEL_REASON_GQL_PERSISTED_DENIED,
        MODEL_REASON_GQL_PERSISTED_UNKNOWN,
    };

    for (size_t i = 0; i < PV_ARRAY_LEN(all); i++) {
        const char *n = model_reason_name(all[i]);
        ck_assert_str_ne(n, "unknown");
        for (const char *s = n; *s != '\0'; s++) {
            ck_assert(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'));
        }
        for (size_t j = 0; j < i; j++) {
            ck_assert_str_ne(n, model_reason_name(all[j]));
        }
    }
    ck_assert_str_eq(model_reason_name(MODEL_REASON_ALLOWED), "allowed");
    ck_assert_str_eq(model_reason_name(MODEL_REASON_AUDIT), "audit");
    ck_assert_str_eq(model_reason_name(MODEL_REASON_NO_ENDPOINT), "no_endpoint");
    ck_assert_str_eq(model_reason_name((enum model_reason)999), "unknown");
    ck_assert_str_eq(model_route_name(MODEL_ROUTE_NONE), "none");
    ck_assert_str_eq(model_route_name(MODEL_ROUTE_OPAQUE), "opaque");
    ck_assert_str_eq(model_route_name(MODEL_ROUTE_INSPECTED), "inspected");
}
END_TEST

static const struct {
    const char *m;
    bool ok;
} method_rows[] = {
    {"GET", true},
    {"get", true},
    {"WEBSOCKET_TEXT", true},
    {"*", true},
    {"M-SEARCH", true},
    {"", false},
    {"GE T", false},
    {"GET\r\n", false},
    {"GET/", false},
    {"(GET)", false},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG", false},
};

START_TEST(test_method_valid)
{
    const char *m = method_rows[_i].m;

    ck_assert_msg(model_method_valid(m, strlen(m)) == method_rows[_i].ok, "'%s'", m);
}
END_TEST

/* ===========================================================================
 * Host coverage for other callers: model_endpoint_matches_host and
 * model_endpoint_has_port answer as model_decide does (the envelope reads
 * them; docs/semantics.md#hosts)
 * ========================================================================= */

static const struct {
    const char *host;  /* the endpoint's host as written */
    const char *ports; /* "port: N" or "ports: [..]" */
    const char *req;   /* a request host */
    uint16_t port;
    bool host_ok; /* model_endpoint_matches_host */
    bool port_ok; /* model_endpoint_has_port */
} cover_rows[] = {
    {"a.example.com", "port: 443", "a.example.com", 443, true, true},
    {"a.example.com", "port: 443", "A.Example.COM.", 8443, true, false},
    {"a.example.com", "port: 443", "b.example.com", 443, false, true},
    {"A.EXAMPLE.com", "port: 443", "a.example.com", 443, true, true},
    {"*.wild.example", "port: 443", "a.wild.example", 8443, true, false},
    {"*.wild.example", "port: 443", "A.WILD.EXAMPLE", 443, true, true},
    {"*.wild.example", "port: 443", "wild.example", 443, false, true},
    {"*.wild.example", "port: 443", "a.b.wild.example", 443, false, true},
    {"**.wild.example", "port: 443", "a.b.wild.example", 443, true, true},
    {"**.wild.example", "port: 443", "wild.example", 443, false, true},
    {"*-api.example.com", "port: 443", "x-api.example.com", 443, true, true},
    {"*.wild.example", "ports: [443, 8443]", "a.wild.example", 8443, true, true},
    {"*.wild.example", "ports: [443, 8443]", "a.wild.example", 9443, true, false},
    {"10.0.0.1", "port: 443", "0xa.0.0.1", 443, true, true},
    {"10.0.0.1", "port: 443", "010.0.0.1", 443, false, true}, /* octal: 8.0.0.1 */
    {"10.0.0.1", "port: 443", "167772161", 443, true, true},
    {"10.0.0.1", "port: 443", "10.0.0.2", 443, false, true},
    {"*.example.com", "port: 443", "10.0.0.1", 443, false, true},
    {"a.example.com", "port: 443", "a..example.com", 443, false, true},
};

START_TEST(test_endpoint_cover)
{
    char yaml[512];
    struct model_policy *p;
    const struct model_endpoint *e;
    const char *bin = "/usr/bin/curl";
    struct model_request rq;
    struct model_decision d;

    snprintf(yaml, sizeof(yaml),
             "version: 1\nnetwork_policies:\n  r:\n    name: r\n    endpoints:\n"
             "      - host: \"%s\"\n        %s\n    binaries:\n      - path: %s\n",
             cover_rows[_i].host, cover_rows[_i].ports, bin);
    p = load(yaml);
    ck_assert_ptr_nonnull(p);
    e = model_rule_endpoint(model_policy_rule(p, 0), 0);
    ck_assert_msg(model_endpoint_matches_host(e, cover_rows[_i].req, strlen(cover_rows[_i].req)) ==
                      cover_rows[_i].host_ok,
                  "%s vs %s", cover_rows[_i].host, cover_rows[_i].req);
    ck_assert(model_endpoint_has_port(e, cover_rows[_i].port) == cover_rows[_i].port_ok);
    /* the evaluator's own answer for the same host and port */
    memset(&rq, 0, sizeof(rq));
    rq.binaries = &bin;
    rq.nbinaries = 1;
    rq.host = cover_rows[_i].req;
    rq.host_len = strlen(rq.host);
    rq.port = cover_rows[_i].port;
    model_decide(p, &rq, &d);
    ck_assert_msg(d.grant == (cover_rows[_i].host_ok && cover_rows[_i].port_ok), "%s:%u %s",
                  cover_rows[_i].req, cover_rows[_i].port, d.detail);
    model_policy_free(p);
}
END_TEST

static Suite *eval_suite(void)
{
    Suite *s = suite_create("model_eval");
    /* the table's rows, alone with CK_RUN_CASE=data (tests/model_eval_data.sh) */
    TCase *td = tcase_create("data");
    TCase *tc = tcase_create("eval");

    tcase_set_timeout(td, 60);
    tcase_add_test(td, test_data_files);
    tcase_add_loop_test(td, test_data_row, 0, (int)data.nrows);
    suite_add_tcase(s, td);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_preset_expansion, 0, (int)PV_ARRAY_LEN(preset_rows));
    tcase_add_test(tc, test_compile_fields);
    tcase_add_loop_test(tc, test_resolved_target_sandbox, 0, (int)PV_ARRAY_LEN(sandbox_rows));
    tcase_add_test(tc, test_resolve_refuses_link_local);
    tcase_add_loop_test(tc, test_peer_loopback_switch, 0, (int)PV_ARRAY_LEN(peer_lo_rows));
    tcase_add_loop_test(tc, test_scan_fallback, 0, (int)PV_ARRAY_LEN(big_rows));
    tcase_add_test(tc, test_defensive);
    tcase_add_test(tc, test_names);
    tcase_add_loop_test(tc, test_method_valid, 0, (int)PV_ARRAY_LEN(method_rows));
    tcase_add_loop_test(tc, test_endpoint_cover, 0, (int)PV_ARRAY_LEN(cover_rows));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    read_data();
    printf("check_model_eval: %zu data rows from %zu files\n", data.nrows, data.nfiles);
    sr = srunner_create(eval_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free_data();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
