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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
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

static void usage_prove(FILE *f)
{
    fprintf(f, "usage: proviso prove [--baseline FILE] (--candidate FILE | --proposal FILE |"
               " --policy FILE)\n"
               "                     [--credentials FILE] [--registry DIR]\n"
               "                     [--format text|json|shorthand] [--timeout-ms N] [--strict]\n");
}

static void usage_check(FILE *f)
{
    fprintf(f, "usage: proviso check --candidate FILE --boundary FILE [--format text|json]"
               " [--timeout-ms N] [--strict]\n");
}

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

/* Report invalid input and return exit status 2. */
static int invalid(const struct prove_opts *o, const char *code, struct model_diags *d,
                   const char *fallback)
{
    const char *detail = fallback;

    if (d != NULL && model_diags_count(d) > 0) {
        detail = model_diags_line(d, 0);
    }
    if (o->fmt == OUT_JSON) {
        json_t *j = prover_invalid_json(code, detail);

        print_json(j);
        json_decref(j);
    }
    if (d != NULL && model_diags_count(d) > 0) {
        for (size_t i = 0; i < model_diags_count(d); i++) {
            fprintf(stderr, "%s\n", model_diags_line(d, i));
        }
    } else {
        fprintf(stderr, "proviso: %s\n", detail != NULL ? detail : code);
    }
    return 2;
}

static int parse_opts(int argc, char **argv, struct prove_opts *o, bool check)
{
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = NULL;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (check) {
                usage_check(stdout);
            } else {
                usage_prove(stdout);
            }
            return 0;
        }
        if (strcmp(a, "--strict") == 0) {
            o->strict = true;
            continue;
        }
        if (strcmp(a, "--baseline") == 0 && !check) {
            slot = &o->baseline;
        } else if (strcmp(a, "--candidate") == 0) {
            slot = &o->candidate;
        } else if (strcmp(a, "--proposal") == 0 && !check) {
            slot = &o->proposal;
        } else if (strcmp(a, "--policy") == 0 && !check) {
            slot = &o->policy;
        } else if (strcmp(a, "--boundary") == 0 && check) {
            slot = &o->boundary;
        } else if (strcmp(a, "--credentials") == 0 && !check) {
            slot = &o->credentials;
        } else if (strcmp(a, "--registry") == 0 && !check) {
            slot = &o->registry;
        } else if (strcmp(a, "--format") == 0 && v != NULL) {
            if (strcmp(v, "text") == 0) {
                o->fmt = OUT_TEXT;
            } else if (strcmp(v, "json") == 0) {
                o->fmt = OUT_JSON;
            } else if (strcmp(v, "shorthand") == 0 && !check) {
                o->fmt = OUT_SHORTHAND;
            } else {
                fprintf(stderr, "proviso: unknown format '%s'\n", v);
                return -1;
            }
            i++;
            continue;
        } else if (strcmp(a, "--timeout-ms") == 0 && v != NULL) {
            uint64_t n;

            if (!pv_ok(pv_parse_u64(v, strlen(v), 3600000u, &n)) || n == 0) {
                fprintf(stderr, "proviso: --timeout-ms wants 1..3600000\n");
                return -1;
            }
            o->timeout_ms = (unsigned)n;
            i++;
            continue;
        } else {
            fprintf(stderr, "proviso: unknown or incomplete option '%s'\n", a);
            return -1;
        }
        if (v == NULL) {
            fprintf(stderr, "proviso: %s needs an argument\n", a);
            return -1;
        }
        *slot = v;
        i++;
    }
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

    json_array_foreach(o->fmt == OUT_JSON ? NULL : a->warnings, i, w) {
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
        return a->status == 400 ? 2 : 3;
    }
    if (o->fmt == OUT_JSON) {
        print_json(a->body);
        return warned(o, a, verdict_exit(r->verdict));
    }
    if (o->fmt == OUT_TEXT && r->verdict != PROVER_VERDICT_WITHIN &&
        r->verdict != PROVER_VERDICT_EXCEEDS) {
        /* The reviewer's view first, always: what the change grants. */
        s = prover_grants_text(&a->grants);
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
        fprintf(stderr, "proviso: cannot create a solver context\n");
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

/* A document of the job read from file 'path' (NULL: absent). */
static struct prover_job_doc file_doc(const char *path)
{
    struct prover_job_doc d = {path, NULL, 0};

    return d;
}

int cli_prove(int argc, char **argv)
{
    struct prove_opts o;
    struct model_registry *reg = NULL;
    struct model_diags *d = NULL;
    struct prover_job job;
    int nsrc;
    int rc;
    int pr = parse_opts(argc, argv, &o, false);

    if (pr <= 0) {
        if (pr < 0) {
            usage_prove(stderr);
            return invalid(&o, "usage", NULL, "invalid usage");
        }
        return 0;
    }
    nsrc = (o.candidate != NULL) + (o.proposal != NULL) + (o.policy != NULL);
    if (nsrc != 1 || (o.policy != NULL && o.baseline != NULL)) {
        usage_prove(stderr);
        return invalid(&o, "usage",
                       NULL, "exactly one of --candidate, --proposal, --policy is required"
                             " (--policy takes no --baseline)");
    }
    d = model_diags_new();
    if (d == NULL) {
        return invalid(&o, "nomem", NULL, "out of memory");
    }
    reg = o.registry != NULL ? model_registry_load_dir(o.registry, d) : model_registry_embedded(d);
    if (reg == NULL) {
        rc = invalid(&o, "invalid_registry", d, o.registry ? o.registry : "embedded registry");
        model_diags_free(d);
        return rc;
    }
    memset(&job, 0, sizeof(job));
    job.kind = PROVER_JOB_PROVE;
    job.baseline = file_doc(o.baseline);
    job.candidate = file_doc(o.candidate);
    job.proposal = file_doc(o.proposal);
    job.policy = file_doc(o.policy);
    job.credentials = file_doc(o.credentials);
    job.reg = reg;
    rc = run(&o, &job);
    model_registry_free(reg);
    model_diags_free(d);
    return rc;
}

int cli_check(int argc, char **argv)
{
    struct prove_opts o;
    struct prover_job job;
    int pr = parse_opts(argc, argv, &o, true);

    if (pr <= 0) {
        if (pr < 0) {
            usage_check(stderr);
            return invalid(&o, "usage", NULL, "invalid usage");
        }
        return 0;
    }
    if (o.candidate == NULL || o.boundary == NULL) {
        usage_check(stderr);
        return invalid(&o, "usage", NULL, "--candidate and --boundary are required");
    }
    memset(&job, 0, sizeof(job));
    job.kind = PROVER_JOB_CHECK;
    job.boundary = file_doc(o.boundary);
    job.candidate = file_doc(o.candidate);
    return run(&o, &job);
}
