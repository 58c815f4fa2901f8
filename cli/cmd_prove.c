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
};

static const struct pv_cmd prove_cmd = {
    .prog = "proviso prove",
    .synopsis = "[--baseline FILE] (--candidate FILE | --proposal FILE | --policy FILE)\n"
                "                     [--credentials FILE] [--registry DIR]\n"
                "                     [--format text|json|shorthand] [--timeout-ms N]",
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
};

static const struct pv_cmd check_cmd = {
    .prog = "proviso check",
    .synopsis = "--candidate FILE --boundary FILE [--format text|json] [--timeout-ms N]",
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
    return 1;
}

static int emit(const struct prove_opts *o, const struct prover_result *r)
{
    if (o->fmt == OUT_JSON) {
        json_t *j = prover_result_to_json(r);

        print_json(j);
        json_decref(j);
    } else {
        char *s = o->fmt == OUT_SHORTHAND ? prover_validation_result(r) : prover_result_text(r);

        if (s == NULL) {
            fprintf(stderr, "proviso: out of memory\n");
            return 3;
        }
        fputs(s, stdout);
        if (o->fmt == OUT_SHORTHAND || s[0] == '\0' || s[strlen(s) - 1] != '\n') {
            fputc('\n', stdout);
        }
        free(s);
    }
    switch (r->verdict) {
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

static int run(const struct prove_opts *o, struct prover_input *in)
{
    struct prover_session *s = prover_session_new();
    struct prover_result *r;
    int rc;

    if (s == NULL) {
        fprintf(stderr, "proviso: cannot create a solver context\n");
        return 3;
    }
    in->timeout_ms = o->timeout_ms;
    r = prover_run(s, in);
    if (r == NULL) {
        fprintf(stderr, "proviso: out of memory\n");
        prover_session_free(s);
        return 3;
    }
    rc = emit(o, r);
    prover_result_free(r);
    prover_session_free(s);
    prover_finalize();
    return rc;
}

static struct model_policy *load_policy(const struct prove_opts *o, const char *path,
                                        int *rc)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = NULL;
    char err[PATH_MAX + 64];
    size_t len = 0;
    char *buf = NULL;

    if (d == NULL) {
        *rc = invalid(o, "nomem", NULL, "out of memory", NULL);
        return NULL;
    }
    if (!pv_ok(pv_file_read(path, MODEL_MAX_POLICY_BYTES, true, &buf, &len, err, sizeof(err)))) {
        *rc = invalid(o, "invalid_policy", NULL, err, NULL);
    } else {
        p = model_policy_load(path, buf, len, MODEL_FMT_AUTO, d);
        if (p == NULL) {
            *rc = invalid(o, "invalid_policy", d, path,
                          cli_doc_hint(path, buf, len, CLI_DOC_POLICY));
        }
    }
    free(buf);
    model_diags_free(d);
    return p;
}

static struct model_policy *merge_proposal(const struct prove_opts *o,
                                           const struct model_policy *base, int *rc)
{
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr = NULL;
    struct model_policy *p = NULL;
    char err[PATH_MAX + 64];
    size_t len = 0;
    char *buf = NULL;

    if (d == NULL) {
        *rc = invalid(o, "nomem", NULL, "out of memory", NULL);
        return NULL;
    }
    if (!pv_ok(pv_file_read(o->proposal, MODEL_MAX_POLICY_BYTES, true, &buf, &len, err,
                            sizeof(err)))) {
        *rc = invalid(o, "invalid_proposal", NULL, err, NULL);
    } else {
        pr = model_proposal_load(o->proposal, buf, len, d);
        if (pr == NULL) {
            *rc = invalid(o, "invalid_proposal", d, o->proposal,
                          cli_doc_hint(o->proposal, buf, len, CLI_DOC_PROPOSAL));
        } else {
            p = model_policy_merge(base, pr, true, d);
            if (p == NULL) {
                *rc = invalid(o, "invalid_candidate", d, o->proposal, NULL);
            }
        }
    }
    free(buf);
    model_proposal_free(pr);
    model_diags_free(d);
    return p;
}

int cli_prove(int argc, char **argv)
{
    struct prove_opts o;
    struct model_policy *base = NULL;
    struct model_policy *cand = NULL;
    struct model_credset *creds = NULL;
    struct model_registry *reg = NULL;
    struct model_diags *d = NULL;
    struct prover_input in;
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
    memset(&in, 0, sizeof(in));
    d = model_diags_new();
    if (d == NULL) {
        return invalid(&o, "nomem", NULL, "out of memory", NULL);
    }
    reg = o.registry != NULL ? model_registry_load_dir(o.registry, d) : model_registry_embedded(d);
    if (reg == NULL) {
        rc = invalid(&o, "invalid_registry", d, o.registry ? o.registry : "embedded registry",
                     NULL);
        goto out;
    }
    if (o.credentials != NULL) {
        char err[PATH_MAX + 64];
        size_t len = 0;
        char *buf = NULL;

        if (!pv_ok(pv_file_read(o.credentials, MODEL_MAX_POLICY_BYTES, true, &buf, &len, err,
                                sizeof(err)))) {
            rc = invalid(&o, "invalid_credentials", NULL, err, NULL);
            goto out;
        }
        creds = model_credset_load(o.credentials, buf, len, d);
        free(buf);
        if (creds == NULL) {
            rc = invalid(&o, "invalid_credentials", d, o.credentials, NULL);
            goto out;
        }
    }
    if (o.baseline != NULL) {
        base = load_policy(&o, o.baseline, &rc);
        if (base == NULL) {
            goto out;
        }
    }
    if (o.proposal != NULL) {
        if (base == NULL) {
            base = model_policy_new_empty();
            if (base == NULL) {
                rc = invalid(&o, "nomem", NULL, "out of memory", NULL);
                goto out;
            }
        }
        cand = merge_proposal(&o, base, &rc);
    } else {
        cand = load_policy(&o, o.candidate != NULL ? o.candidate : o.policy, &rc);
    }
    if (cand == NULL) {
        goto out;
    }
    in.baseline = base;
    in.candidate = cand;
    in.creds = creds;
    in.reg = reg;
    in.mode = o.policy != NULL ? PROVER_AUDIT : PROVER_DELTA;
    rc = run(&o, &in);
out:
    model_policy_free(base);
    model_policy_free(cand);
    model_credset_free(creds);
    model_registry_free(reg);
    model_diags_free(d);
    return rc;
}

int cli_check(int argc, char **argv)
{
    struct prove_opts o;
    struct model_policy *bound = NULL;
    struct model_policy *cand = NULL;
    struct prover_input in;
    int rc = 2;
    int pr = parse_opts(argc, argv, &o, true);

    if (pr <= 0) {
        return pr < 0 ? 2 : 0;
    }
    if (o.candidate == NULL || o.boundary == NULL) {
        return pv_args_usage(&check_cmd, "--candidate and --boundary are required");
    }
    bound = load_policy(&o, o.boundary, &rc);
    if (bound != NULL) {
        cand = load_policy(&o, o.candidate, &rc);
    }
    if (bound != NULL && cand != NULL) {
        memset(&in, 0, sizeof(in));
        in.baseline = bound;
        in.candidate = cand;
        in.mode = PROVER_CHECK;
        rc = run(&o, &in);
    }
    model_policy_free(bound);
    model_policy_free(cand);
    return rc;
}
