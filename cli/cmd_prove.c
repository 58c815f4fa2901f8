/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_prove.c - `proviso prove` and `proviso check`
 *
 *   proviso prove [--baseline FILE] (--candidate FILE | --proposal FILE |
 *                 --policy FILE) [--credentials FILE] [--registry DIR]
 *                 [--format text|json|shorthand] [--timeout-ms N]
 *   proviso check --candidate FILE --boundary FILE [--format text|json]
 *                 [--timeout-ms N]
 *
 * Exit: prove 0 empty, 1 findings, 3 unknown; check 0 within, 1 exceeds,
 * 3 unknown; both 2 on invalid input or usage (the JSON invalid object with
 * --format json, "FILE:LINE:COL: ..." lines on stderr otherwise).
 *
 * The work is the prover's job (prover_job_run, the pipeline proviso-prover
 * runs too): this file parses options, loads the registry and prints.
 */
#include "config.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_file.h"
#include "model/model.h"
#include "prover/prover.h"

enum out_format { OUT_TEXT, OUT_JSON, OUT_SHORTHAND };

struct prove_opts {
    const char *baseline, *candidate, *proposal, *policy, *boundary;
    const char *credentials, *registry;
    enum out_format fmt;
    unsigned timeout_ms;
    bool strict; /* warnings are errors (exit 2) */
};

static const struct pv_opt prove_opts_table[] = {
    {"baseline", "FILE", "the policy in force (default: none)", 0},
    {"candidate", "FILE", "the changed policy", 0},
    {"proposal", "FILE", "a proposal, merged into the baseline", 0},
    {"policy", "FILE", "audit one policy on its own (no --baseline)", 0},
    {"credentials", "FILE", "the credentials the sandbox holds", 0},
    {"registry", "DIR", "binary descriptors (default: the built-in registry)", 0},
    {"format", "text|json|shorthand", "output format (default text)", 0},
    {"timeout-ms", "N", "solver time limit, 1..3600000", 0},
    {"strict", NULL, "treat any warning as an error (exit 2)", 0},
};

static const struct pv_cmd prove_cmd = {
    .prog = "proviso prove",
    .synopsis = "[--baseline FILE] (--candidate FILE | --proposal FILE | --policy FILE)\n"
                "                     [--credentials FILE] [--registry DIR]\n"
                "                     [--format text|json|shorthand] [--timeout-ms N] [--strict]",
    .summary = "Prove what new authority a change grants (or, with --policy, what a policy\n"
               "grants at all).",
    .opts = prove_opts_table,
    .nopts = PV_ARRAY_LEN(prove_opts_table),
    .example = "proviso prove --baseline policy.yaml --proposal proposal.json",
    .epilog = "exit: 0 empty, 1 findings, 2 invalid input or usage, 3 unknown",
};

static const struct pv_opt check_opts_table[] = {
    {"candidate", "FILE", "the policy to check", 0},
    {"boundary", "FILE", "the most it may allow", 0},
    {"format", "text|json", "output format (default text)", 0},
    {"timeout-ms", "N", "solver time limit, 1..3600000", 0},
    {"strict", NULL, "treat any warning as an error (exit 2)", 0},
};

static const struct pv_cmd check_cmd = {
    .prog = "proviso check",
    .synopsis = "--candidate FILE --boundary FILE [--format text|json] [--timeout-ms N]\n"
                "                     [--strict]",
    .summary = "Check that a policy stays within a boundary policy.",
    .opts = check_opts_table,
    .nopts = PV_ARRAY_LEN(check_opts_table),
    .example = "proviso check --candidate policy.yaml --boundary boundary.yaml",
    .epilog = "exit: 0 within, 1 exceeds, 2 invalid input or usage, 3 unknown",
};

static void print_json(json_t *o)
{
    char *s = o != NULL ? json_dumps(o, JSON_INDENT(2)) : NULL;

    if (s != NULL) {
        printf("%s\n", s);
        free(s);
    } else {
        fprintf(stderr, "proviso: out of memory\n");
    }
}

/* Report invalid input once and return exit status 2: with --format json
 * the invalid object on stdout ("diagnostics" as in the HTTP API), and each
 * diagnostic (or 'fallback', a whole message) and 'hint' once on stderr. */
static int invalid(const struct prove_opts *o, const char *code, struct model_diags *d,
                   const char *fallback, const char *hint)
{
    size_t n = d != NULL ? model_diags_count(d) : 0;
    const char *detail = n > 0 ? model_diags_line(d, 0) : fallback;

    if (o->fmt == OUT_JSON) {
        json_t *j = prover_invalid_json(code, detail);
        json_t *list = json_array();

        for (size_t i = 0; i < n && list != NULL; i++) {
            json_array_append_new(list, json_string(model_diags_line(d, i)));
        }
        if (n == 0 && list != NULL && fallback != NULL) {
            json_array_append_new(list, json_string(fallback));
        }
        if (j != NULL && list != NULL) {
            json_object_set_new(j, "diagnostics", list);
            list = NULL;
        }
        if (j != NULL && hint != NULL) {
            json_object_set_new(j, "hint", json_string(hint));
        }
        print_json(j);
        json_decref(list);
        json_decref(j);
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "%s\n", model_diags_line(d, i));
    }
    if (n == 0) {
        fprintf(stderr, "proviso: %s\n", detail != NULL ? detail : code);
    }
    if (hint != NULL) {
        fprintf(stderr, "%s\n", hint);
    }
    return 2;
}

/* 1 to go on, 0 after --help, -1 after a usage error (reported). */
static int parse_opts(int argc, char **argv, struct prove_opts *o, bool check)
{
    const struct pv_cmd *cmd = check ? &check_cmd : &prove_cmd;
    struct pv_args a;
    const char *fmt;
    uint64_t t = 0;

    memset(o, 0, sizeof(*o));
    switch (pv_args_parse(cmd, argc, argv, &a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return -1;
    }
    if (a.npos > 0) {
        pv_args_usage(cmd, "unexpected operand '%s'", a.pos[0]);
        return -1;
    }
    if (!check) {
        o->baseline = pv_args_get(&a, "baseline");
        o->proposal = pv_args_get(&a, "proposal");
        o->policy = pv_args_get(&a, "policy");
        o->credentials = pv_args_get(&a, "credentials");
        o->registry = pv_args_get(&a, "registry");
    } else {
        o->boundary = pv_args_get(&a, "boundary");
    }
    o->candidate = pv_args_get(&a, "candidate");
    fmt = pv_args_get(&a, "format");
    if (fmt == NULL || strcmp(fmt, "text") == 0) {
        o->fmt = OUT_TEXT;
    } else if (strcmp(fmt, "json") == 0) {
        o->fmt = OUT_JSON;
    } else if (strcmp(fmt, "shorthand") == 0 && !check) {
        o->fmt = OUT_SHORTHAND;
    } else {
        pv_args_usage(cmd, "unknown format '%s'", fmt);
        return -1;
    }
    if (!pv_args_number(&a, "timeout-ms", 1, 3600000u, &t)) {
        return -1;
    }
    o->timeout_ms = (unsigned)t;
    o->strict = pv_args_has(&a, "strict");
    return 1;
}

/* Exit status of a verdict. */
static int verdict_exit(enum prover_verdict v)
{
    switch (v) {
    case PROVER_VERDICT_EMPTY:
    case PROVER_VERDICT_WITHIN:
        return 0;
    case PROVER_VERDICT_FINDINGS:
    case PROVER_VERDICT_EXCEEDS:
        return 1;
    case PROVER_VERDICT_UNKNOWN:
        return 3;
    }
    return 3;
}

/* Print the warnings of 'a' once each on stderr ("LOCATION: warning: MESSAGE
 * [code]"; --format json has them in the answer instead); with --strict any
 * warning turns exit status 'rc' into 2. */
static int warned(const struct prove_opts *o, const struct prover_answer *a, int rc)
{
    size_t n = json_array_size(a->warnings);
    size_t i;
    json_t *w;

    json_array_foreach(o->fmt == OUT_JSON ? NULL : a->warnings, i, w)
    {
        const char *loc = json_string_value(json_object_get(w, "location"));

        fprintf(stderr, "%s%swarning: %s [%s]\n", loc != NULL && loc[0] != '\0' ? loc : "",
                loc != NULL && loc[0] != '\0' ? ": " : "",
                json_string_value(json_object_get(w, "message")),
                json_string_value(json_object_get(w, "code")));
    }
    if (o->strict && n > 0) {
        fprintf(stderr, "proviso: --strict: %zu warning%s treated as error%s\n", n,
                n == 1 ? "" : "s", n == 1 ? "" : "s");
        return 2;
    }
    return rc;
}

/* A document given as the wrong kind (a proposal as --candidate, a policy
 * as --proposal): the hint for the first such file, else NULL. */
static const char *doc_hint(const struct prove_opts *o)
{
    const struct {
        const char *path;
        enum cli_doc want;
    } docs[] = {{o->candidate, CLI_DOC_POLICY},
                {o->baseline, CLI_DOC_POLICY},
                {o->policy, CLI_DOC_POLICY},
                {o->boundary, CLI_DOC_POLICY},
                {o->proposal, CLI_DOC_PROPOSAL}};
    const char *hint = NULL;

    for (size_t i = 0; i < PV_ARRAY_LEN(docs) && hint == NULL; i++) {
        char err[256];
        char *buf = NULL;
        size_t len = 0;

        if (docs[i].path == NULL || !pv_ok(pv_file_read(docs[i].path, MODEL_MAX_POLICY_BYTES, true,
                                                        &buf, &len, err, sizeof(err)))) {
            continue;
        }
        hint = cli_doc_hint(docs[i].path, buf, len, docs[i].want);
        free(buf);
    }
    return hint;
}

/* Print the job's answer 'a' in the chosen format; return the exit status. */
static int emit(const struct prove_opts *o, const struct prover_answer *a)
{
    const struct prover_result *r = a->result;
    char *s;

    if (a->status != 200 || r == NULL) {
        if (o->fmt == OUT_JSON) {
            print_json(a->body);
        }
        if (a->diags != NULL && model_diags_count(a->diags) > 0) {
            for (size_t i = 0; i < model_diags_count(a->diags); i++) {
                fprintf(stderr, "%s\n", model_diags_line(a->diags, i));
            }
        } else {
            const char *detail = json_string_value(json_object_get(a->body, "detail"));

            fprintf(stderr, "proviso: %s\n", detail != NULL ? detail : "internal error");
        }
        if (a->status == 400) {
            const char *hint = doc_hint(o);
            if (hint != NULL) {
                fprintf(stderr, "%s\n", hint);
            }
        }
        return a->status == 400 ? 2 : 3;
    }
    if (o->fmt == OUT_JSON) {
        print_json(a->body);
        return warned(o, a, verdict_exit(r->verdict));
    }
    if (o->fmt == OUT_TEXT && r->verdict != PROVER_VERDICT_WITHIN &&
        r->verdict != PROVER_VERDICT_EXCEEDS) {
        /* The reviewer's view first, always: what the change grants, in one
         * sentence with the verdict, then each grant with its breadth. */
        s = prover_review_text(a->body, o->policy != NULL);
        if (s == NULL) {
            fprintf(stderr, "proviso: out of memory\n");
            return 3;
        }
        printf("%s\n", s);
        free(s);
    }
    s = o->fmt == OUT_SHORTHAND ? prover_validation_result(r) : prover_result_text(r);
    if (s == NULL) {
        fprintf(stderr, "proviso: out of memory\n");
        return 3;
    }
    fputs(s, stdout);
    if (o->fmt == OUT_SHORTHAND || s[0] == '\0' || s[strlen(s) - 1] != '\n') {
        fputc('\n', stdout);
    }
    free(s);
    return warned(o, a, verdict_exit(r->verdict));
}

/* Run 'job' (the prover's one prove/check pipeline) and print its answer. */
static int run(const struct prove_opts *o, struct prover_job *job)
{
    struct prover_session *s = prover_session_new();
    struct prover_answer a;
    int rc;

    if (s == NULL) {
        fprintf(stderr, "proviso: cannot create a solver context: %s\n",
                pv_strerror(pv_errno ? pv_errno : PV_ERR_NOMEM));
        return 3;
    }
    job->timeout_ms = o->timeout_ms;
    job->warn_flags = MODEL_WARN_FS;
    prover_job_run(s, job, &a);
    rc = emit(o, &a);
    prover_answer_free(&a);
    prover_session_free(s);
    prover_finalize();
    return rc;
}

/* The documents of one run, read with the one reader of user-named files
 * (common/pv_file.h) so that a missing, unreadable or oversized file, or a
 * directory, reads "proviso: FILE: reason" as in every other command. */
struct docs {
    char *buf[6];
    size_t n;
};

static void docs_free(struct docs *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        free(ds->buf[i]);
    }
}

/* Read 'path' (NULL: absent) into a job document; false after reporting
 * the error (exit status in '*rc'). */
static bool read_doc(const struct prove_opts *o, struct docs *ds, const char *path,
                     const char *code, struct prover_job_doc *out, int *rc)
{
    char err[PATH_MAX + 64];
    char *buf = NULL;
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    if (path == NULL) {
        return true;
    }
    if (!pv_ok(pv_file_read(path, MODEL_MAX_POLICY_BYTES, true, &buf, &len, err, sizeof(err)))) {
        *rc = invalid(o, code, NULL, err, NULL);
        return false;
    }
    ds->buf[ds->n++] = buf;
    out->name = path;
    out->text = buf;
    out->len = len;
    return true;
}

int cli_prove(int argc, char **argv)
{
    struct prove_opts o;
    struct model_registry *reg = NULL;
    struct model_diags *d = NULL;
    struct prover_job job;
    struct docs ds = {{NULL}, 0};
    int nsrc;
    int rc = 2;
    int pr = parse_opts(argc, argv, &o, false);

    if (pr <= 0) {
        return pr < 0 ? 2 : 0;
    }
    nsrc = (o.candidate != NULL) + (o.proposal != NULL) + (o.policy != NULL);
    if (nsrc != 1 || (o.policy != NULL && o.baseline != NULL)) {
        return pv_args_usage(&prove_cmd, "exactly one of --candidate, --proposal, --policy is "
                                         "required (--policy takes no --baseline)");
    }
    d = model_diags_new();
    if (d == NULL) {
        return invalid(&o, "nomem", NULL, "out of memory", NULL);
    }
    reg = o.registry != NULL ? model_registry_load_dir(o.registry, d) : model_registry_embedded(d);
    if (reg == NULL) {
        /* without a diagnostic the registry could only fail to allocate */
        char what[1200];
        snprintf(what, sizeof(what), "%s: out of memory",
                 o.registry != NULL ? o.registry : "embedded registry");
        rc = invalid(&o, "invalid_registry", d, what, NULL);
        model_diags_free(d);
        return rc;
    }
    memset(&job, 0, sizeof(job));
    job.kind = PROVER_JOB_PROVE;
    if (read_doc(&o, &ds, o.baseline, "invalid_policy", &job.baseline, &rc) &&
        read_doc(&o, &ds, o.candidate, "invalid_policy", &job.candidate, &rc) &&
        read_doc(&o, &ds, o.proposal, "invalid_proposal", &job.proposal, &rc) &&
        read_doc(&o, &ds, o.policy, "invalid_policy", &job.policy, &rc) &&
        read_doc(&o, &ds, o.credentials, "invalid_credentials", &job.credentials, &rc)) {
        job.reg = reg;
        rc = run(&o, &job);
    }
    docs_free(&ds);
    model_registry_free(reg);
    model_diags_free(d);
    return rc;
}

int cli_check(int argc, char **argv)
{
    struct prove_opts o;
    struct prover_job job;
    struct docs ds = {{NULL}, 0};
    int rc = 2;
    int pr = parse_opts(argc, argv, &o, true);

    if (pr <= 0) {
        return pr < 0 ? 2 : 0;
    }
    if (o.candidate == NULL || o.boundary == NULL) {
        return pv_args_usage(&check_cmd, "--candidate and --boundary are required");
    }
    memset(&job, 0, sizeof(job));
    job.kind = PROVER_JOB_CHECK;
    if (read_doc(&o, &ds, o.boundary, "invalid_policy", &job.boundary, &rc) &&
        read_doc(&o, &ds, o.candidate, "invalid_policy", &job.candidate, &rc)) {
        rc = run(&o, &job);
    }
    docs_free(&ds);
    return rc;
}
