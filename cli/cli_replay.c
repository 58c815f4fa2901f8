/* SPDX-License-Identifier: Apache-2.0 */
/* cli_replay.c - `proviso audit replay`: decide every approval again
 *
 * For each CONFIG:APPROVED record of an export the recorded inputs (the
 * baseline and candidate policies, the credentials, the boundary: blobs
 * named in data.inputs) rebuild the request the advisor sent the prover;
 * the prover answers again and the answer is compared with the recorded
 * one (the evidence blob) on what does not depend on witness choice:
 * verdict, categories, each finding's category and paths without their
 * witnesses, validation_result, and the boundary verdict. An approval
 * recorded as automatic whose replay has findings, or leaves the boundary,
 * is a violation: the gate should never have let it through. A difference
 * under another prover version is reported as a version change, under the
 * same version as a mismatch.
 *
 * The replay does not check signatures (that is `audit verify`); it reads
 * whatever the file says, so it also judges a forged record on its merits.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cli/cli.h"
#include "cli/cli_replay.h"
#include "prover/prover.h"

#define MAX_THREADS 16

/* ===========================================================================
 * The prover: one function, request in, answer out
 * ========================================================================= */

struct cli_prover {
    struct cli_http *http;          /* --prover URL; NULL in process */
    struct prover_session *session; /* in process (one per thread) */
    char token[65];
};

struct cli_prover *cli_prover_http(const char *url, const char *token)
{
    struct cli_prover *p = pv_calloc(1, sizeof(*p));

    if (p == NULL) {
        return NULL;
    }
    p->http = cli_http_new(url, token);
    if (p->http == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

struct cli_prover *cli_prover_inprocess(void)
{
    struct cli_prover *p = pv_calloc(1, sizeof(*p));

    if (p == NULL) {
        return NULL;
    }
    p->session = prover_session_new();
    if (p->session == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

struct cli_prover *cli_prover_clone(const struct cli_prover *p)
{
    if (p->session != NULL) {
        return cli_prover_inprocess();
    }
    return cli_prover_http(cli_http_base(p->http), p->token[0] != '\0' ? p->token : "");
}

void cli_prover_free(struct cli_prover *p)
{
    if (p == NULL) {
        return;
    }
    cli_http_free(p->http);
    prover_session_free(p->session);
    explicit_bzero(p->token, sizeof(p->token));
    free(p);
}

/* The prover's own pipeline, linked in: the answer proviso-prover gives. */
static json_t *ask_inprocess(struct cli_prover *p, const char *path, const json_t *request,
                             char *err, size_t errlen)
{
    enum prover_job_kind kind =
        strcmp(path, "/v1/check") == 0 ? PROVER_JOB_CHECK : PROVER_JOB_PROVE;
    char *text = json_dumps(request, JSON_COMPACT);
    struct prover_answer a;
    json_t *out = NULL;

    memset(&a, 0, sizeof(a));
    if (text == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    prover_job_answer(p->session, kind, text, strlen(text), NULL, &a);
    free(text);
    if (a.status == 200 && a.body != NULL) {
        out = json_incref(a.body);
    } else {
        const char *detail = json_string_value(json_object_get(a.body, "detail"));
        snprintf(err, errlen, "prover %s: %u %s", path, a.status, detail != NULL ? detail : "");
    }
    prover_answer_free(&a);
    return out;
}

json_t *cli_prover_ask(struct cli_prover *p, const char *path, const json_t *request, char *err,
                       size_t errlen)
{
    struct cli_answer a;
    int rc;
    json_t *out;

    if (p->session != NULL) {
        return ask_inprocess(p, path, request, err, errlen);
    }
    rc = cli_http_call(p->http, "POST", path, request, &a);
    if (rc != 0) {
        const char *detail = a.body != NULL ? cli_str(a.body, "detail") : a.error;
        snprintf(err, errlen, "prover %s: HTTP %ld %s", path, a.status, detail);
        cli_answer_clear(&a);
        return NULL;
    }
    out = a.body;
    a.body = NULL;
    cli_answer_clear(&a);
    return out;
}

/* 'v' is the JSON string 's'. */
static bool str_is(const json_t *v, const char *s)
{
    const char *t = json_string_value(v);

    return t != NULL && strcmp(t, s) == 0;
}

/* ===========================================================================
 * Comparing answers
 * ========================================================================= */

/* The witness-independent part of a prove answer (new reference). */
static json_t *essence(const json_t *answer)
{
    json_t *findings = json_array();
    json_t *f;
    size_t i;

    json_array_foreach(json_object_get(answer, "findings"), i, f)
    {
        json_t *paths = json_deep_copy(json_object_get(f, "paths"));
        json_t *pth;
        size_t k;
        json_array_foreach(paths, k, pth)
        {
            json_object_del(pth, "witness");
        }
        json_array_append_new(findings, json_pack("{s:O?,s:o?}", "category",
                                                  json_object_get(f, "category"), "paths", paths));
    }
    return json_pack("{s:O?,s:O?,s:o,s:O?}", "verdict", json_object_get(answer, "verdict"),
                     "categories", json_object_get(answer, "categories"), "findings", findings,
                     "validation_result", json_object_get(answer, "validation_result"));
}

/* Append to 'diffs' each top-level field of the essences that differs. */
static void compare(const json_t *recorded, const json_t *replayed, const char *prefix,
                    json_t *diffs)
{
    json_t *a = essence(recorded);
    json_t *b = essence(replayed);
    const char *key;
    json_t *v;

    json_object_foreach(a, key, v)
    {
        if (!json_equal(v, json_object_get(b, key))) {
            char name[64];
            snprintf(name, sizeof(name), "%s%s", prefix, key);
            json_array_append_new(diffs, json_string(name));
        }
    }
    json_decref(a);
    json_decref(b);
}

/* ===========================================================================
 * One approval
 * ========================================================================= */

struct job {
    const json_t *rec;
    json_t *result; /* set by the worker */
    json_t *pre;    /* violations of the recorded inputs (inputs_pass); NULL: none */
};

struct shared {
    struct job *jobs;
    size_t n;
    const json_t *blobs;
};

static const char *blob_text(const json_t *blobs, const json_t *inputs, const char *key)
{
    const char *sha = json_string_value(json_object_get(inputs, key));

    if (sha == NULL || sha[0] == '\0') {
        return "";
    }
    return json_string_value(json_object_get(blobs, sha));
}

/* long: one recorded decision asked again and compared field by field; the JSON it holds is freed
 * at one exit */
static json_t *replay_one(struct cli_prover *p, const json_t *blobs, const json_t *rec)
{
    const json_t *data = json_object_get(rec, "data");
    const json_t *inputs = json_object_get(data, "inputs");
    const char *baseline = blob_text(blobs, inputs, "baseline_blob");
    const char *candidate = blob_text(blobs, inputs, "candidate_blob");
    const char *creds = blob_text(blobs, inputs, "credentials_blob");
    const char *boundary = blob_text(blobs, inputs, "boundary_blob");
    const char *ev_text = blob_text(blobs, inputs, "evidence_blob");
    const char *rec_vr = json_string_value(json_object_get(inputs, "validation_result"));
    const char *rec_pv = json_string_value(json_object_get(inputs, "prover_version"));
    bool is_auto = json_is_true(json_object_get(data, "auto"));
    json_t *evidence = ev_text != NULL ? json_loads(ev_text, 0, NULL) : NULL;
    json_t *recorded = json_object_get(evidence, "prover");
    json_t *diffs = json_array();
    json_t *violations = json_array();
    json_t *req = NULL;
    json_t *ans = NULL;
    json_t *out;
    char err[512] = "";
    const char *status;
    const char *now_pv = "";

    if (baseline == NULL || candidate == NULL || creds == NULL || boundary == NULL ||
        !json_is_object(recorded) || candidate[0] == '\0') {
        snprintf(err, sizeof(err),
                 "the recorded inputs are incomplete (a blob is missing or the "
                 "evidence has no prover answer)");
        goto done;
    }
    req = json_pack("{s:s,s:s}", "baseline", baseline, "candidate", candidate);
    if (req != NULL && creds[0] != '\0') {
        json_object_set_new(req, "credentials", json_string(creds));
    }
    ans = req != NULL ? cli_prover_ask(p, "/v1/prove", req, err, sizeof(err)) : NULL;
    if (ans == NULL) {
        goto done;
    }
    now_pv = json_string_value(json_object_get(ans, "prover_version"));
    now_pv = now_pv != NULL ? now_pv : "";
    compare(recorded, ans, "", diffs);
    if (rec_vr != NULL &&
        !json_equal(json_object_get(ans, "validation_result"),
                    json_object_get(inputs, "validation_result")) &&
        !json_equal(json_object_get(recorded, "validation_result"),
                    json_object_get(inputs, "validation_result"))) {
        json_array_append_new(diffs, json_string("recorded validation_result"));
    }
    if (is_auto) {
        const char *v = json_string_value(json_object_get(ans, "verdict"));
        if (v == NULL || strcmp(v, "empty") != 0) {
            json_array_append_new(violations,
                                  json_pack("{s:s,s:s}", "what",
                                            "auto-approved, but the replayed proof has findings",
                                            "verdict", v != NULL ? v : ""));
        }
        if (!str_is(json_object_get(data, "prover_delta"), "empty")) {
            json_array_append_new(violations,
                                  json_pack("{s:s}", "what",
                                            "auto-approved with a recorded prover delta that is "
                                            "not empty"));
        }
    }
    if (boundary[0] != '\0') {
        json_t *breq = json_pack("{s:s,s:s}", "candidate", candidate, "boundary", boundary);
        json_t *bans = breq != NULL ? cli_prover_ask(p, "/v1/check", breq, err, sizeof(err)) : NULL;
        const json_t *brec = json_object_get(evidence, "boundary");
        json_decref(breq);
        if (bans == NULL) {
            goto done;
        }
        if (!json_equal(json_object_get(bans, "verdict"), json_object_get(brec, "verdict"))) {
            json_array_append_new(diffs, json_string("boundary.verdict"));
        }
        if (is_auto && !str_is(json_object_get(bans, "verdict"), "within")) {
            json_array_append_new(
                violations,
                json_pack("{s:s}", "what", "auto-approved, but the candidate leaves the boundary"));
        }
        json_decref(bans);
    }
    err[0] = '\0';
done:
    if (err[0] != '\0') {
        status = "unavailable";
    } else if (json_array_size(diffs) == 0) {
        status = "same";
    } else if (strcmp(rec_pv != NULL ? rec_pv : "", now_pv) != 0) {
        status = "version change";
    } else {
        status = "mismatch";
    }
    out = json_pack(
        "{s:O?,s:s,s:b,s:s,s:o,s:o,s:s,s:s}", "seq", json_object_get(rec, "seq"), "chunk_id",
        json_string_value(json_object_get(data, "chunk_id")) != NULL
            ? json_string_value(json_object_get(data, "chunk_id"))
            : "",
        "auto", is_auto, "status", status, "differences", diffs, "violations", violations,
        "recorded_prover_version", rec_pv != NULL ? rec_pv : "", "prover_version", now_pv);
    if (out != NULL && err[0] != '\0') {
        json_object_set_new(out, "error", json_string(err));
    }
    json_decref(req);
    json_decref(ans);
    json_decref(evidence);
    return out;
}

/* ===========================================================================
 * The inputs an approval rested on (docs/audit.md#inputs)
 * ========================================================================= */

/* 'digest' of the chain's bound 'inputs' under 'key', "" when unset. */
static const char *bound(const json_t *inputs, const char *key)
{
    const char *v = json_string_value(json_object_get(inputs, key));
    return v != NULL ? v : "";
}

static void add_violation(json_t *arr, const char *what)
{
    json_array_append_new(arr, json_pack("{s:s}", "what", what));
}

/* The approval 'rec' against the inputs the chain had bound when it was
 * written ('implied', folded up to the record before it): the credentials
 * and the boundary it was proved with must be the sandbox's, and an
 * automatic approval needs proposal_approval_mode auto. A scope the chain
 * never bound (a chain from before the binding) is not judged. New
 * array. */
static json_t *input_violations(const json_t *implied, const json_t *rec)
{
    const json_t *data = json_object_get(rec, "data");
    const json_t *in = json_object_get(data, "inputs");
    const json_t *sb = json_object_get(json_object_get(implied, cli_str(rec, "sandbox")), "inputs");
    const json_t *gl = json_object_get(json_object_get(implied, ""), "inputs");
    json_t *out = json_array();
    char auto_digest[65];
    char what[400];

    if (out == NULL || !json_is_object(sb)) {
        return out;
    }
    if (strcmp(bound(in, "credentials_blob"), bound(sb, "credentials")) != 0) {
        snprintf(what, sizeof(what),
                 "approved with credentials '%.16s', but the chain's credentials of the sandbox "
                 "are '%.16s'",
                 bound(in, "credentials_blob"), bound(sb, "credentials"));
        add_violation(out, what);
    }
    if (json_is_object(gl)) {
        const char *b = bound(sb, "boundary")[0] != '\0'
                            ? bound(sb, "boundary")
                            : bound(gl, "setting:@auto_approval_boundary");
        const char *mode = bound(gl, "setting:proposal_approval_mode")[0] != '\0'
                               ? bound(gl, "setting:proposal_approval_mode")
                               : bound(sb, "setting:proposal_approval_mode");
        if (strcmp(bound(in, "boundary_blob"), b) != 0) {
            snprintf(what, sizeof(what),
                     "approved with boundary '%.16s', but the chain's boundary is '%.16s'",
                     bound(in, "boundary_blob"), b);
            add_violation(out, what);
        }
        audit_sha256_hex("\"auto\"", 6, auto_digest);
        if (json_is_true(json_object_get(data, "auto")) && strcmp(mode, auto_digest) != 0) {
            add_violation(out, "auto-approved, but the chain's proposal_approval_mode is not auto");
        }
    }
    return out;
}

/* Fold the records in order and judge each approval's inputs by the state
 * before it. False when out of memory. */
static bool inputs_pass(struct shared *sh, const json_t *records)
{
    json_t *implied = audit_state_new();
    const json_t *rec;
    size_t i;
    size_t k = 0;
    bool ok = implied != NULL;

    json_array_foreach(records, i, rec)
    {
        if (!ok) {
            break;
        }
        if (k < sh->n && sh->jobs[k].rec == rec) {
            sh->jobs[k++].pre = input_violations(implied, rec);
        }
        ok = pv_ok(audit_state_fold(implied, rec));
    }
    json_decref(implied);
    return ok;
}

struct worker {
    struct shared *sh;
    struct cli_prover *p;
    size_t start;
    size_t step;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    for (size_t i = w->start; i < w->sh->n; i += w->step) {
        w->sh->jobs[i].result = replay_one(w->p, w->sh->blobs, w->sh->jobs[i].rec);
    }
    return NULL;
}

/* ===========================================================================
 * The command
 * ========================================================================= */

static char *read_token(const char *path)
{
    size_t len = 0;
    char *t = cli_read_file(path, 8192, &len);

    while (t != NULL && len > 0 &&
           (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ')) {
        t[--len] = '\0';
    }
    return t;
}

/* docs/audit.md#state: the approved chunks of the store's state (the
 * header of a whole-chain export) whose last record is not an approval -
 * approvals replay cannot see. New array of {"sandbox", "chunk_id",
 * "chain_says"}; empty when the header has no state or the export is
 * partial. */
static json_t *unbacked(const json_t *header, const json_t *records)
{
    const json_t *state = json_object_get(header, "state");
    json_t *implied = audit_state_new();
    json_t *out = json_array();
    const json_t *rec;
    const char *name;
    json_t *sb;
    size_t i;

    if (implied == NULL || out == NULL || !json_is_object(state) ||
        json_integer_value(json_object_get(header, "since")) != 0) {
        json_decref(implied);
        return out;
    }
    json_array_foreach(records, i, rec)
    {
        if (!pv_ok(audit_state_fold(implied, rec))) {
            break;
        }
    }
    json_object_foreach((json_t *)PV_UNCONST(state), name, sb)
    {
        const char *id;
        json_t *st;
        json_object_foreach(json_object_get(sb, "chunks"), id, st)
        {
            const json_t *imp = json_object_get(json_object_get(implied, name), "chunks");
            const char *chain = json_string_value(json_object_get(imp, id));
            if (str_is(st, "approved") && (chain == NULL || strcmp(chain, "approved") != 0)) {
                json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "sandbox", name, "chunk_id",
                                                     id, "chain_says",
                                                     chain != NULL ? chain : "(no record)"));
            }
        }
    }
    json_decref(implied);
    return out;
}

static void print_text(const json_t *results, size_t same, size_t differ, size_t violations,
                       const json_t *unb)
{
    const json_t *r;
    size_t i;

    json_array_foreach(results, i, r)
    {
        const json_t *v;
        size_t k;
        if (strcmp(cli_str(r, "status"), "same") != 0) {
            char *d = json_dumps(json_object_get(r, "differences"), JSON_COMPACT);
            printf("seq %lld chunk %s: %s%s%s%s%s\n",
                   (long long)json_integer_value(json_object_get(r, "seq")), cli_str(r, "chunk_id"),
                   cli_str(r, "status"),
                   d != NULL && json_array_size(json_object_get(r, "differences")) > 0 ? " " : "",
                   d != NULL && json_array_size(json_object_get(r, "differences")) > 0 ? d : "",
                   json_object_get(r, "error") != NULL ? ": " : "", cli_str(r, "error"));
            if (strcmp(cli_str(r, "status"), "version change") == 0) {
                printf("  recorded under %s, replayed under %s\n",
                       cli_str(r, "recorded_prover_version"), cli_str(r, "prover_version"));
            }
            free(d);
        }
        json_array_foreach(json_object_get(r, "violations"), k, v)
        {
            printf("VIOLATION seq %lld chunk %s: %s\n",
                   (long long)json_integer_value(json_object_get(r, "seq")), cli_str(r, "chunk_id"),
                   cli_str(v, "what"));
        }
    }
    json_array_foreach(unb, i, r)
    {
        printf("UNBACKED sandbox %s chunk %s: approved in the store, but the chain says %s\n",
               cli_str(r, "sandbox"), cli_str(r, "chunk_id"), cli_str(r, "chain_says"));
    }
    printf("%zu replayed, %zu same, %zu differ, %zu violations", json_array_size(results), same,
           differ, violations);
    if (json_array_size(unb) > 0) {
        printf(", %zu approved chunks without a CONFIG:APPROVED record", json_array_size(unb));
    }
    if (json_array_size(results) == 0) {
        printf(" (the file holds no CONFIG:APPROVED record)");
    }
    printf("\n");
}

/* long: load, fan out over threads, gather in record order; the threads and the gather share the
 * job table and its one cleanup */
int cli_replay(const struct cli_replay_opts *o)
{
    struct cli_prover *provers[MAX_THREADS] = {NULL};
    struct worker workers[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    struct shared sh;
    json_t *records = NULL;
    json_t *blobs = NULL;
    json_t *results = json_array();
    json_t *header = NULL;
    json_t *unb = NULL;
    const json_t *rec;
    char err[512];
    size_t len = 0;
    size_t i;
    size_t same = 0;
    size_t differ = 0;
    size_t nviol = 0;
    unsigned threads = o->threads == 0 ? 1 : o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    char *buf = cli_read_file(o->file, AUDIT_FILE_MAX, &len);
    int rc = 2;

    memset(&sh, 0, sizeof(sh));
    if (buf == NULL) {
        fprintf(stderr, "proviso audit replay: %s: cannot read the file\n", o->file);
        goto out;
    }
    if (results == NULL || !pv_ok(audit_load(buf, len, &records, &blobs, err, sizeof(err)))) {
        fprintf(stderr, "proviso audit replay: %s: %s\n", o->file, err);
        goto out;
    }
    sh.jobs = pv_calloc(json_array_size(records) + 1, sizeof(*sh.jobs));
    if (sh.jobs == NULL) {
        goto out;
    }
    json_array_foreach(records, i, rec)
    {
        if (str_is(json_object_get(rec, "kind"), "CONFIG:APPROVED")) {
            sh.jobs[sh.n++].rec = rec;
        }
    }
    sh.blobs = blobs;
    if (!inputs_pass(&sh, records)) {
        fprintf(stderr, "proviso audit replay: out of memory\n");
        goto out;
    }
    rc = 3;
    if (o->prover_url != NULL) {
        char *tok = read_token(o->prover_token_file);
        if (tok == NULL) {
            fprintf(stderr, "proviso audit replay: cannot read %s\n", o->prover_token_file);
            rc = 2;
            goto out;
        }
        provers[0] = cli_prover_http(o->prover_url, tok);
        if (provers[0] != NULL) {
            snprintf(provers[0]->token, sizeof(provers[0]->token), "%s", tok);
        }
        explicit_bzero(tok, strlen(tok));
        free(tok);
    } else if (sh.n > 0) {
        provers[0] = cli_prover_inprocess();
        if (provers[0] == NULL) {
            fprintf(stderr, "proviso audit replay: cannot start the prover\n");
            goto out;
        }
    }
    if (sh.n > 0 && provers[0] == NULL) {
        fprintf(stderr, "proviso audit replay: cannot set up the prover client\n");
        goto out;
    }
    if (threads > sh.n) {
        threads = sh.n > 0 ? (unsigned)sh.n : 1;
    }
    for (unsigned t = 0; t < threads && sh.n > 0; t++) {
        if (t > 0) {
            provers[t] = cli_prover_clone(provers[0]);
        }
        workers[t] = (struct worker){.sh = &sh,
                                     .p = provers[t] != NULL ? provers[t] : provers[0],
                                     .start = t,
                                     .step = threads};
    }
    /* A clone that failed shares nothing: its slots run on the main thread. */
    for (unsigned t = 1; t < threads && sh.n > 0; t++) {
        started[t] =
            provers[t] != NULL && pthread_create(&tid[t], NULL, worker_main, &workers[t]) == 0;
    }
    if (sh.n > 0) {
        worker_main(&workers[0]);
    }
    for (unsigned t = 1; t < threads && sh.n > 0; t++) {
        if (started[t]) {
            pthread_join(tid[t], NULL);
        } else {
            workers[t].p = provers[0];
            worker_main(&workers[t]);
        }
    }
    for (i = 0; i < sh.n; i++) {
        json_t *r = sh.jobs[i].result;
        if (r == NULL) {
            r = json_pack("{s:s,s:s}", "status", "unavailable", "error", "out of memory");
        }
        if (r != NULL && strcmp(cli_str(r, "status"), "same") == 0) {
            same++;
        } else {
            differ++;
        }
        if (r != NULL && json_array_size(sh.jobs[i].pre) > 0) {
            json_array_extend(json_object_get(r, "violations"), sh.jobs[i].pre);
        }
        json_decref(sh.jobs[i].pre);
        sh.jobs[i].pre = NULL;
        nviol += r != NULL && json_array_size(json_object_get(r, "violations")) > 0;
        json_array_append_new(results, r);
        sh.jobs[i].result = NULL;
    }
    header = audit_header(buf, len);
    unb = unbacked(header, records);
    if (unb == NULL) {
        rc = 2;
        goto out;
    }
    if (o->json) {
        json_t *j = json_pack("{s:I,s:I,s:I,s:I,s:O,s:O}", "replayed", (json_int_t)sh.n, "same",
                              (json_int_t)same, "differ", (json_int_t)differ, "violations",
                              (json_int_t)nviol, "results", results, "unbacked", unb);
        if (j != NULL) {
            cli_print_json(j);
        }
        json_decref(j);
    } else {
        print_text(results, same, differ, nviol, unb);
    }
    rc = differ == 0 && nviol == 0 && json_array_size(unb) == 0 ? 0 : 1;
out:
    json_decref(header);
    json_decref(unb);
    for (unsigned t = 0; t < MAX_THREADS; t++) {
        cli_prover_free(provers[t]);
    }
    for (i = 0; sh.jobs != NULL && i < sh.n; i++) {
        json_decref(sh.jobs[i].pre);
    }
    free(sh.jobs);
    json_decref(records);
    json_decref(blobs);
    json_decref(results);
    free(buf);
    return rc;
}
