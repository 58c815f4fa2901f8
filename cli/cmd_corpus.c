/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_corpus.c - `proviso corpus run PATH...`: data-driven prover cases
 *
 * Each case is one YAML file (docs/corpus.md): baseline plus candidate,
 * proposal, single policy or boundary, credentials, and the expected verdict,
 * exact category set, paths that must be reported and, optionally, the exact
 * validation_result or an error substring. Folders are walked recursively in
 * name order. One line per case, then "N passed, N failed"; exit 1 on any
 * failure, 2 on usage errors.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_dynbuf.h"
#include "model/model.h"
#include "prover/prover.h"

#define CASE_MAX_BYTES (4u * 1024u * 1024u)
#define ERR_LEN 1024

struct corpus_ctx {
    struct prover_session *session;
    struct model_registry *reg;
    unsigned timeout_ms;
    bool verbose;
    size_t passed;
    size_t failed;
};

/* Join every diagnostic into 'err', one a line, each without the leading
 * "CASEFILE:" so that what remains ("LINE:COL: text") does not depend on
 * the directory the corpus is run from. */
static void diags_to_err(struct model_diags *d, const char *casefile, char *err, size_t errlen)
{
    /* A line that does not fit is dropped whole and this marker stands in
     * its place (room for it is kept), so no cut line can match an
     * expectation. */
    static const char cut[] = "\n[more diagnostics cut]";
    size_t limit = errlen > sizeof(cut) ? errlen - sizeof(cut) + 1 : 0;
    size_t off = 0;
    size_t flen = strlen(casefile);

    err[0] = '\0';
    for (size_t i = 0; i < model_diags_count(d) && limit > 0; i++) {
        const char *line = model_diags_line(d, i);
        int n;

        if (strncmp(line, casefile, flen) == 0 && line[flen] == ':') {
            line += flen + 1;
        }
        n = snprintf(err + off, limit - off, "%s%s", i ? "\n" : "", line);
        if (n < 0 || (size_t)n >= limit - off) {
            memcpy(err + off, cut, sizeof(cut));
            break;
        }
        off += (size_t)n;
    }
    if (err[0] == '\0') {
        snprintf(err, errlen, "invalid input");
    }
}

/* Load the policy under top-level key 'part' of the case file: diagnostics
 * are located in the case file itself. NULL with 'err' filled on invalid
 * input. */
static struct model_policy *load_policy_part(const char *casefile, const char *buf, size_t len,
                                             const char *part, char *err, size_t errlen)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p = model_policy_load_member(casefile, buf, len, part, d);
    if (p == NULL) {
        diags_to_err(d, casefile, err, errlen);
    }
    model_diags_free(d);
    return p;
}

struct case_inputs {
    struct model_policy *baseline;
    struct model_policy *candidate;
    struct model_credset *creds;
    enum prover_mode mode;
};

static void case_inputs_clear(struct case_inputs *in)
{
    model_policy_free(in->baseline);
    model_policy_free(in->candidate);
    model_credset_free(in->creds);
    memset(in, 0, sizeof(*in));
}

/* Build the prover inputs from the case (its text 'buf' and its tree
 * 'root'); false + err on invalid input. */
static bool case_load(const char *file, const char *buf, size_t len, const json_t *root,
                      struct case_inputs *in, char *err, size_t errlen)
{
    const json_t *base = json_object_get(root, "baseline");
    const json_t *cand = json_object_get(root, "candidate");
    const json_t *prop = json_object_get(root, "proposal");
    const json_t *pol = json_object_get(root, "policy");
    const json_t *bound = json_object_get(root, "boundary");
    const json_t *creds = json_object_get(root, "credentials");
    const char *cand_key = "candidate";

    memset(in, 0, sizeof(*in));
    in->mode = PROVER_DELTA;
    if (bound != NULL) {
        in->mode = PROVER_CHECK;
        in->baseline = load_policy_part(file, buf, len, "boundary", err, errlen);
    } else if (pol != NULL) {
        in->mode = PROVER_AUDIT;
        in->baseline = model_policy_new_empty();
        cand = pol;
        cand_key = "policy";
    } else if (base != NULL) {
        in->baseline = load_policy_part(file, buf, len, "baseline", err, errlen);
    } else {
        in->baseline = model_policy_new_empty();
    }
    if (in->baseline == NULL) {
        if (err[0] == '\0') {
            snprintf(err, errlen, "out of memory");
        }
        return false;
    }
    if (prop != NULL && in->mode == PROVER_DELTA) {
        struct model_diags *d = model_diags_new();
        struct model_proposal *pr = NULL;

        if (d != NULL) {
            pr = model_proposal_load_member(file, buf, len, "proposal", d);
            if (pr != NULL) {
                in->candidate = model_policy_merge(in->baseline, pr, true, d);
            }
        }
        if (in->candidate == NULL) {
            if (d != NULL) {
                diags_to_err(d, file, err, errlen);
            } else {
                snprintf(err, errlen, "out of memory");
            }
        }
        model_proposal_free(pr);
        model_diags_free(d);
        if (in->candidate == NULL) {
            return false;
        }
    } else if (cand != NULL) {
        in->candidate = load_policy_part(file, buf, len, cand_key, err, errlen);
        if (in->candidate == NULL) {
            return false;
        }
    } else {
        snprintf(err, errlen, "case has no candidate, proposal or policy");
        return false;
    }
    if (creds != NULL && !json_is_null(creds)) {
        json_t *wrap = json_pack("{s:O}", "credentials", creds);
        char *cbuf = wrap ? json_dumps(wrap, JSON_INDENT(1)) : NULL;
        struct model_diags *d = model_diags_new();
        char name[512];
        snprintf(name, sizeof(name), "%s#credentials", file);
        if (cbuf != NULL && d != NULL) {
            in->creds = model_credset_load(name, cbuf, strlen(cbuf), d);
        }
        if (in->creds == NULL) {
            if (d != NULL) {
                diags_to_err(d, name, err, errlen);
            } else {
                snprintf(err, errlen, "out of memory");
            }
        }
        model_diags_free(d);
        free(cbuf);
        json_decref(wrap);
        if (in->creds == NULL) {
            return false;
        }
    }
    return true;
}

static bool path_matches(const struct prover_path *p, const json_t *want)
{
    const char *cat = json_string_value(json_object_get(want, "category"));
    const char *bin = json_string_value(json_object_get(want, "binary"));
    const char *host = json_string_value(json_object_get(want, "host"));
    const char *method = json_string_value(json_object_get(want, "method"));
    json_t *port = json_object_get(want, "port");

    if (cat != NULL && strcmp(cat, prover_category_name(p->cat)) != 0) {
        return false;
    }
    if (bin != NULL && strcmp(bin, p->binary) != 0) {
        return false;
    }
    if (host != NULL && strcmp(host, p->host) != 0) {
        return false;
    }
    if (json_is_integer(port) && json_integer_value(port) != (json_int_t)p->port) {
        return false;
    }
    if (method != NULL && (p->method == NULL || strcmp(method, p->method) != 0)) {
        return false;
    }
    return true;
}

/* Compare the result with 'expect'; false + why on mismatch. */
static bool case_compare(const struct prover_result *r, const json_t *expect, char *why,
                         size_t whylen)
{
    const char *verdict = json_string_value(json_object_get(expect, "verdict"));
    const json_t *cats = json_object_get(expect, "categories");
    const json_t *paths = json_object_get(expect, "paths");
    const char *vr = json_string_value(json_object_get(expect, "validation_result"));
    size_t i;
    const json_t *v;

    if (verdict != NULL && strcmp(verdict, prover_verdict_name(r->verdict)) != 0) {
        snprintf(why, whylen, "verdict %s, expected %s%s%s", prover_verdict_name(r->verdict),
                 verdict, r->unknown != PROVER_UNKNOWN_NONE ? ": " : "",
                 prover_unknown_text(r->unknown));
        return false;
    }
    if (json_is_array(cats)) {
        bool seen[PROVER_CAT__COUNT] = {false};
        bool want[PROVER_CAT__COUNT] = {false};
        for (i = 0; i < r->npaths; i++) {
            seen[r->paths[i].cat] = true;
        }
        json_array_foreach(cats, i, v)
        {
            bool known = false;
            for (int c = 0; c < PROVER_CAT__COUNT; c++) {
                if (json_is_string(v) &&
                    strcmp(json_string_value(v), prover_category_name((enum prover_category)c)) ==
                        0) {
                    want[c] = true;
                    known = true;
                }
            }
            if (!known) {
                snprintf(why, whylen, "unknown category in expect: %s",
                         json_is_string(v) ? json_string_value(v) : "?");
                return false;
            }
        }
        for (int c = 0; c < PROVER_CAT__COUNT; c++) {
            if (!prover_category_in_mode((enum prover_category)c, PROVER_DELTA)) {
                continue; /* a CHECK-mode category: the corpus proves */
            }
            if (seen[c] != want[c]) {
                snprintf(why, whylen, "category %s %s",
                         prover_category_name((enum prover_category)c),
                         seen[c] ? "reported but not expected" : "expected but not reported");
                return false;
            }
        }
    }
    if (json_is_array(paths)) {
        json_array_foreach(paths, i, v)
        {
            bool found = false;
            for (size_t k = 0; k < r->npaths && !found; k++) {
                found = path_matches(&r->paths[k], v);
            }
            if (!found) {
                char *s = json_dumps(v, JSON_COMPACT);
                snprintf(why, whylen, "expected path not reported: %s", s ? s : "?");
                free(s);
                return false;
            }
        }
    }
    if (vr != NULL) {
        char *got = prover_validation_result(r);
        bool same = got != NULL && strcmp(got, vr) == 0;
        if (!same) {
            snprintf(why, whylen, "validation_result mismatch:\n    got:      %s\n    expected: %s",
                     got ? got : "(null)", vr);
        }
        free(got);
        if (!same) {
            return false;
        }
    }
    return true;
}

/* An expectation the runner would silently ignore is a broken case: an
 * unknown key (a misspelling), a text field that is not a string, or an
 * invalid verdict that names no error at all. */
static bool expect_well_formed(json_t *expect, const char *verdict, char *why, size_t whylen)
{
    static const char *const keys[] = {"verdict",           "categories", "paths",
                                       "validation_result", "error",      "message"};
    const char *k;
    const json_t *v;

    json_object_foreach(expect, k, v)
    {
        bool known = false;

        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            known = known || strcmp(k, keys[i]) == 0;
        }
        if (!known) {
            snprintf(why, whylen, "unknown key expect.%s", k);
            return false;
        }
        if ((strcmp(k, "error") == 0 || strcmp(k, "message") == 0 ||
             strcmp(k, "validation_result") == 0) &&
            !json_is_string(v)) {
            snprintf(why, whylen, "expect.%s must be a string", k);
            return false;
        }
    }
    if (strcmp(verdict, "invalid") == 0 && json_object_get(expect, "error") == NULL &&
        json_object_get(expect, "message") == NULL) {
        snprintf(why, whylen, "an invalid case must give expect.message (or expect.error)");
        return false;
    }
    return true;
}

/* Whether one of the newline-separated lines of 'text' is exactly 'line'. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);

    for (const char *p = text; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n') {
            p++;
        }
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) {
            return true;
        }
    }
    return false;
}

static void run_case(struct corpus_ctx *ctx, const char *file)
{
    size_t len = 0;
    char err[ERR_LEN] = "";
    char why[ERR_LEN] = "";
    char *buf = cli_read_file(file, CASE_MAX_BYTES, &len);
    json_t *root = NULL;
    json_t *expect;
    const char *name;
    const char *want_verdict;
    struct case_inputs in;
    bool ok = false;

    memset(&in, 0, sizeof(in));
    if (buf == NULL) {
        snprintf(why, sizeof(why), "cannot read case");
        goto out;
    }
    /* duplicates are no error here: the policy parts are read again from
     * the text, strictly (load_policy_part), and report them there */
    root = cli_yaml_to_json(file, buf, len, true, err, sizeof(err));
    if (!json_is_object(root)) {
        snprintf(why, sizeof(why), "case is not a YAML mapping: %s", err);
        goto out;
    }
    expect = json_object_get(root, "expect");
    want_verdict = json_string_value(json_object_get(expect, "verdict"));
    if (!json_is_object(expect) || want_verdict == NULL) {
        snprintf(why, sizeof(why), "case has no expect.verdict");
        goto out;
    }
    if (!expect_well_formed(expect, want_verdict, why, sizeof(why))) {
        goto out;
    }
    if (!case_load(file, buf, len, root, &in, err, sizeof(err))) {
        const char *want_err = json_string_value(json_object_get(expect, "error"));
        const char *want_msg = json_string_value(json_object_get(expect, "message"));
        if (strcmp(want_verdict, "invalid") != 0) {
            snprintf(why, sizeof(why), "invalid input: %s", err);
        } else if (want_err != NULL && strstr(err, want_err) == NULL) {
            snprintf(why, sizeof(why), "error '%s' does not contain '%s'", err, want_err);
        } else if (want_msg != NULL && !has_line(err, want_msg)) {
            snprintf(why, sizeof(why), "no diagnostic reads exactly '%s'; they were:\n%s", want_msg,
                     err);
        } else {
            ok = true;
        }
        goto out;
    }
    if (strcmp(want_verdict, "invalid") == 0) {
        snprintf(why, sizeof(why), "expected invalid input, but it loaded");
        goto out;
    }
    {
        struct prover_input pin = {
            .baseline = in.baseline,
            .candidate = in.candidate,
            .creds = in.creds,
            .reg = ctx->reg,
            .mode = in.mode,
            .timeout_ms = ctx->timeout_ms,
        };
        struct prover_result *r = prover_run(ctx->session, &pin);
        if (r == NULL) {
            snprintf(why, sizeof(why), "prover failed: out of memory");
            goto out;
        }
        ok = case_compare(r, expect, why, sizeof(why));
        if (ctx->verbose || !ok) {
            char *vr = prover_validation_result(r);
            if (vr != NULL && !ok) {
                size_t used = strlen(why);
                snprintf(why + used, sizeof(why) - used, "\n    prover said: %s", vr);
            }
            free(vr);
        }
        prover_result_free(r);
    }
out:
    name = json_string_value(json_object_get(root, "name"));
    if (ok) {
        ctx->passed++;
        printf("PASS %s%s%s\n", file, name ? " " : "", name ? name : "");
    } else {
        ctx->failed++;
        printf("FAIL %s%s%s: %s\n", file, name ? " " : "", name ? name : "", why);
    }
    case_inputs_clear(&in);
    json_decref(root);
    free(buf);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_yaml_suffix(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && strcmp(n + l - 5, ".yaml") == 0) || (l > 4 && strcmp(n + l - 4, ".yml") == 0);
}

static int run_path(struct corpus_ctx *ctx, const char *path, int depth)
{
    struct stat st;
    DIR *dir;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    size_t cap = 0;
    int rc = 0;

    if (stat(path, &st) != 0) {
        fprintf(stderr, "proviso: %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        run_case(ctx, path);
        return 0;
    }
    if (depth > 16) {
        return 0;
    }
    dir = opendir(path);
    if (dir == NULL) {
        fprintf(stderr, "proviso: %s: %s\n", path, strerror(errno));
        return 2;
    }
    while ((de = readdir(dir)) != NULL) {
        char *full;
        struct stat cst;
        size_t need;
        if (de->d_name[0] == '.') {
            continue;
        }
        need = strlen(path) + strlen(de->d_name) + 2;
        full = pv_malloc(need);
        if (full == NULL) {
            rc = 2;
            break;
        }
        snprintf(full, need, "%s/%s", path, de->d_name);
        if (stat(full, &cst) != 0 || (!S_ISDIR(cst.st_mode) && !has_yaml_suffix(de->d_name))) {
            free(full);
            continue;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            char **nn = pv_realloc(names, ncap * sizeof(*names));
            if (nn == NULL) {
                free(full);
                rc = 2;
                break;
            }
            names = nn;
            cap = ncap;
        }
        names[n++] = full;
    }
    closedir(dir);
    if (n > 0) {
        qsort(names, n, sizeof(*names), name_cmp);
    }
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            int r = run_path(ctx, names[i], depth + 1);
            if (r != 0) {
                rc = r;
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static const struct pv_opt corpus_opts[] = {
    {"verbose", NULL, "print every case, not only failures", 0},
    {"timeout-ms", "N", "solver time limit per case, 1..600000 (default 2000)", 0},
};

static const struct pv_cmd corpus_cmd = {
    .prog = "proviso corpus",
    .synopsis = "run [--verbose] [--timeout-ms N] PATH...",
    .summary = "Run corpus cases: each PATH is a case file or a directory of them\n"
               "(docs/corpus.md).",
    .opts = corpus_opts,
    .nopts = PV_ARRAY_LEN(corpus_opts),
    .example = "proviso corpus run corpus/",
    .epilog = "exit: 0 all passed, 1 a case failed, 2 invalid input or usage",
};

int cli_corpus(int argc, char **argv)
{
    struct corpus_ctx ctx;
    struct model_diags *d;
    struct pv_args a;
    uint64_t t = 2000;
    int rc = 0;
    int i;

    memset(&ctx, 0, sizeof(ctx));
    switch (pv_args_parse(&corpus_cmd, argc, argv, &a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    if (a.npos < 1 || strcmp(a.pos[0], "run") != 0) {
        return pv_args_usage(&corpus_cmd, "the only subcommand is 'run'");
    }
    if (a.npos < 2) {
        return pv_args_usage(&corpus_cmd, "no PATH given");
    }
    if (!pv_args_number(&a, "timeout-ms", 1, 600000, &t)) {
        return 2;
    }
    ctx.timeout_ms = (unsigned)t;
    ctx.verbose = pv_args_has(&a, "verbose");
    d = model_diags_new();
    ctx.reg = d ? model_registry_embedded(d) : NULL;
    model_diags_free(d);
    ctx.session = prover_session_new();
    if (ctx.reg == NULL || ctx.session == NULL) {
        fprintf(stderr, "proviso: cannot initialise the prover or the registry\n");
        model_registry_free(ctx.reg);
        prover_session_free(ctx.session);
        return 2;
    }
    for (i = 1; i < a.npos; i++) {
        int r = run_path(&ctx, a.pos[i], 0);
        if (r != 0) {
            rc = r;
        }
    }
    printf("%zu passed, %zu failed\n", ctx.passed, ctx.failed);
    prover_session_free(ctx.session);
    model_registry_free(ctx.reg);
    prover_finalize();
    if (rc != 0) {
        return rc;
    }
    return ctx.failed ? 1 : 0;
}
