/* SPDX-License-Identifier: Apache-2.0 */
/* prover_job.c - the one prove/check job: documents in, the answer out
 *
 * `proviso prove`, `proviso check` and proviso-prover's /v1/prove and
 * /v1/check are thin callers of prover_job_run(). The job loads the
 * documents in a fixed order (prove: baseline, then the change - candidate,
 * policy or a proposal merged into the baseline - then the credentials;
 * check: boundary, then candidate), so the first invalid document is the one
 * reported, whoever calls. Diagnostics carry the document's name, and the
 * error code of each failure comes from one table (codes[] below). A loaded
 * job runs the prover; the answer is the result's JSON with HTTP status 200.
 *
 * Invariant: prover_job_run always fills its answer: status 200 with a
 * result, 400 with an error code (and diagnostics when a loader gave any),
 * or 500 (out of memory, internal). Nothing in the documents can crash it.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/prover.h"

#define MAX_DIAGNOSTICS 50

/* ===========================================================================
 * The invalid-input codes
 * ========================================================================= */

/* Which step failed; each has its code (docs/api.md "Errors"). */
enum step {
    STEP_POLICY,      /* baseline, candidate, policy or boundary did not load */
    STEP_PROPOSAL,    /* the proposal did not load */
    STEP_MERGE,       /* the proposal does not apply to its baseline */
    STEP_CREDENTIALS, /* the credentials did not load */
    STEP_REQUEST,     /* the request's shape (fields that do not go together) */
};

static const char *const codes[] = {
    [STEP_POLICY] = "invalid_policy",   [STEP_PROPOSAL] = "invalid_proposal",
    [STEP_MERGE] = "invalid_candidate", [STEP_CREDENTIALS] = "invalid_credentials",
    [STEP_REQUEST] = "invalid_request",
};

/* The fallback error of each step when the loader set no pv_errno. */
static const int step_err[] = {
    [STEP_POLICY] = PV_ERR_POLICY,     [STEP_PROPOSAL] = PV_ERR_PARSE, [STEP_MERGE] = PV_ERR_POLICY,
    [STEP_CREDENTIALS] = PV_ERR_PARSE, [STEP_REQUEST] = PV_ERR_USAGE,
};

/* pv_error category -> HTTP status of a failure without diagnostics: input
 * problems are 400 with the step's code, our own are 500 "internal". */
static const struct {
    enum pv_category cat;
    unsigned status;
} cat_status[] = {
    {PV_CAT_OK, 500},     {PV_CAT_USAGE, 400}, {PV_CAT_PARSE, 400}, {PV_CAT_POLICY, 400},
    {PV_CAT_SOLVER, 500}, {PV_CAT_IO, 500},    {PV_CAT_PROTO, 400}, {PV_CAT_INTERNAL, 500},
};

/* ===========================================================================
 * Answers
 * ========================================================================= */

static void answer_error(struct prover_answer *a, unsigned status, const char *code,
                         const char *detail)
{
    a->status = status;
    a->error = code;
    a->body = json_pack("{s:s,s:s}", "error", code, "detail", detail != NULL ? detail : "");
}

void prover_answer_free(struct prover_answer *a)
{
    if (a == NULL) {
        return;
    }
    json_decref(a->body);
    prover_result_free(a->result);
    model_diags_free(a->diags);
    prover_grants_free(&a->grants);
    memset(a, 0, sizeof(*a)); /* 'warnings' was borrowed from 'body' */
}

/* A 400 of a job also says "verdict": "invalid" (the CLI's invalid object). */
static void mark_invalid(struct prover_answer *a)
{
    if (a->status == 400 && a->body != NULL && json_object_get(a->body, "verdict") == NULL) {
        json_object_set_new(a->body, "verdict", json_string("invalid"));
    }
}

void prover_answer_body_error(struct prover_answer *out, pv_result res, const char *msg,
                              bool verdict)
{
    memset(out, 0, sizeof(*out));
    switch (pv_error_category(res.err)) {
    case PV_CAT_PARSE:
        answer_error(out, 400, "invalid_json", msg);
        break;
    case PV_CAT_USAGE:
        answer_error(out, 400, "invalid_request", msg);
        break;
    case PV_CAT_OK:
    case PV_CAT_POLICY:
    case PV_CAT_SOLVER:
    case PV_CAT_IO:
    case PV_CAT_PROTO:
    case PV_CAT_INTERNAL:
        answer_error(out, 500, "internal", msg);
        break;
    }
    if (verdict) {
        mark_invalid(out);
    }
}

void prover_answer_diags(struct prover_answer *a, const char *code, const char *name,
                         struct model_diags *diags, int err)
{
    size_t n = diags != NULL ? model_diags_count(diags) : 0;
    char detail[512];
    json_t *list;

    memset(a, 0, sizeof(*a));
    /* Running out of memory is ours, not the input's: a 500, even when the
     * loader wrote it down as a diagnostic ("candidate:1:62: out of
     * memory", the text of pv_strerror(PV_ERR_NOMEM)) and pv_errno has moved
     * on since; a 400 "invalid" would tell the client to change a valid
     * document. */
    if (n == 0 || err == PV_ERR_NOMEM || model_diags_nomem(diags)) {
        if (n > 0) {
            err = PV_ERR_NOMEM;
        }
        enum pv_category cat = pv_error_category(err);
        unsigned status = 500;

        for (size_t i = 0; i < PV_ARRAY_LEN(cat_status); i++) {
            if (cat_status[i].cat == cat) {
                status = cat_status[i].status;
            }
        }
        snprintf(detail, sizeof(detail), "%s: %s", name, pv_strerror(err));
        answer_error(a, status, status == 400 ? code : "internal", detail);
        return;
    }
    a->status = 400;
    a->error = code;
    a->body = prover_invalid_json(code, model_diags_line(diags, 0));
    list = json_array();
    for (size_t i = 0; i < n && i < MAX_DIAGNOSTICS && list != NULL; i++) {
        json_array_append_new(list, json_string(model_diags_line(diags, i)));
    }
    if (a->body == NULL || list == NULL || json_object_set_new(a->body, "diagnostics", list) != 0) {
        json_decref(a->body);
        answer_error(a, 500, "internal", "out of memory");
    }
}

/* Step 'st' on document 'name' failed with 'diags' and error 'err' (PV_OK:
 * the loader set none). */
static void answer_step(struct prover_answer *a, enum step st, const char *name,
                        struct model_diags *diags, int err)
{
    prover_answer_diags(a, codes[st], name, diags, err != PV_OK ? err : step_err[st]);
}

/* ===========================================================================
 * Loading
 * ========================================================================= */

struct loaded {
    struct model_diags *diags;
    const struct model_policy *first; /* baseline or boundary: owned or from the cache */
    struct model_policy *first_owned;
    struct model_policy *candidate;
    struct model_policy *empty;
    struct model_proposal *proposal;
    struct model_credset *creds;
};

static void loaded_free(struct loaded *l)
{
    model_policy_free(l->first_owned);
    model_policy_free(l->candidate);
    model_policy_free(l->empty);
    model_proposal_free(l->proposal);
    model_credset_free(l->creds);
    memset(l, 0, sizeof(*l));
}

static struct model_policy *load_policy(const struct prover_job_doc *d, struct model_diags *diags)
{
    if (d->text == NULL) {
        return model_policy_load_file(d->name, MODEL_FMT_AUTO, diags);
    }
    return model_policy_load(d->name, d->text, d->len, MODEL_FMT_AUTO, diags);
}

/* The baseline (prove) or boundary (check), through the caller's cache. */
static bool load_first(const struct prover_job *job, const struct prover_job_doc *d,
                       struct loaded *l, struct prover_answer *a)
{
    pv_errno = PV_OK;
    if (job->cache != NULL) {
        l->first = job->cache(job->cache_arg, d, l->diags, &l->first_owned);
    } else {
        l->first_owned = load_policy(d, l->diags);
        l->first = l->first_owned;
    }
    if (l->first == NULL) {
        answer_step(a, STEP_POLICY, d->name, l->diags, pv_errno);
        return false;
    }
    return true;
}

static bool load_proposal(const struct prover_job *job, struct loaded *l, struct prover_answer *a)
{
    const struct prover_job_doc *d = &job->proposal;

    pv_errno = PV_OK;
    l->proposal = d->text == NULL ? model_proposal_load_file(d->name, l->diags)
                                  : model_proposal_load(d->name, d->text, d->len, l->diags);
    if (l->proposal == NULL) {
        answer_step(a, STEP_PROPOSAL, d->name, l->diags, pv_errno);
        return false;
    }
    if (l->first == NULL) {
        l->empty = model_policy_new_empty();
        if (l->empty == NULL) {
            answer_error(a, 500, "internal", "out of memory");
            return false;
        }
    }
    pv_errno = PV_OK;
    l->candidate =
        model_policy_merge(l->first != NULL ? l->first : l->empty, l->proposal, true, l->diags);
    if (l->candidate == NULL) {
        answer_step(a, STEP_MERGE, d->name, l->diags, pv_errno);
        return false;
    }
    return true;
}

/* The change of a prove job: a candidate, a single policy (audit) or a
 * proposal merged into the baseline. */
static bool load_change(const struct prover_job *job, struct loaded *l, enum prover_mode *mode,
                        struct prover_answer *a)
{
    const struct prover_job_doc *d = job->candidate.name != NULL ? &job->candidate : &job->policy;

    *mode = PROVER_DELTA;
    if (job->candidate.name == NULL && job->policy.name == NULL) {
        return load_proposal(job, l, a);
    }
    if (job->candidate.name == NULL) {
        if (job->baseline.name != NULL) {
            answer_error(a, 400, codes[STEP_REQUEST],
                         "policy: audits one policy against the empty baseline; send "
                         "candidate to compare with a baseline");
            return false;
        }
        *mode = PROVER_AUDIT;
    }
    pv_errno = PV_OK;
    l->candidate = load_policy(d, l->diags);
    if (l->candidate == NULL) {
        answer_step(a, STEP_POLICY, d->name, l->diags, pv_errno);
        return false;
    }
    return true;
}

static bool load_creds(const struct prover_job *job, struct loaded *l, struct prover_answer *a)
{
    const struct prover_job_doc *d = &job->credentials;

    if (d->name == NULL) {
        return true;
    }
    pv_errno = PV_OK;
    l->creds = d->text == NULL ? model_credset_load_file(d->name, l->diags)
                               : model_credset_load(d->name, d->text, d->len, l->diags);
    if (l->creds == NULL) {
        answer_step(a, STEP_CREDENTIALS, d->name, l->diags, pv_errno);
        return false;
    }
    return true;
}

/* Load the documents of 'job' in the job's order into 'l' and 'in'. */
static bool load_job(const struct prover_job *job, struct loaded *l, struct prover_input *in,
                     struct prover_answer *a)
{
    memset(in, 0, sizeof(*in));
    in->timeout_ms = job->timeout_ms;
    if (job->kind == PROVER_JOB_CHECK) {
        /* No credentials, no registry: containment is about the rules. */
        if (job->boundary.name == NULL || job->candidate.name == NULL) {
            answer_error(a, 400, codes[STEP_REQUEST], "check: boundary and candidate required");
            return false;
        }
        if (!load_first(job, &job->boundary, l, a)) {
            return false;
        }
        pv_errno = PV_OK;
        l->candidate = load_policy(&job->candidate, l->diags);
        if (l->candidate == NULL) {
            answer_step(a, STEP_POLICY, job->candidate.name, l->diags, pv_errno);
            return false;
        }
        in->mode = PROVER_CHECK;
        in->baseline = l->first;
        in->candidate = l->candidate;
        return true;
    }
    if ((job->candidate.name != NULL) + (job->policy.name != NULL) + (job->proposal.name != NULL) !=
        1) {
        answer_error(a, 400, codes[STEP_REQUEST],
                     "prove: exactly one of candidate, proposal, policy is required");
        return false;
    }
    if (job->baseline.name != NULL && !load_first(job, &job->baseline, l, a)) {
        return false;
    }
    if (!load_change(job, l, &in->mode, a) || !load_creds(job, l, a)) {
        return false;
    }
    in->baseline = l->first;
    in->candidate = l->candidate;
    in->creds = l->creds;
    in->reg = job->reg;
    return true;
}

/* ===========================================================================
 * The job
 * ========================================================================= */

/* ===========================================================================
 * Warnings
 * ========================================================================= */

struct warn_ctx {
    const char *proposal_name;             /* the proposal file, or NULL */
    const struct model_proposal *proposal; /* its operations, or NULL */
    json_t *list;
    json_t *seen;  /* the listed warnings' keys (a set: a policy of ten
                   * thousand rules can have ten thousand warnings) */
    bool boundary; /* the policy is a check boundary */
    bool failed;
};

/* Append one warning unless the same one is already listed. */
static void warn_add(struct warn_ctx *c, const char *code, const char *loc, const char *msg)
{
    json_t *w;
    size_t klen = strlen(code) + strlen(loc) + strlen(msg) + 48;
    char *key = pv_malloc(klen);

    if (key != NULL) {
        /* length-prefixed fields: no two warnings share a key */
        (void)snprintf(key, klen, "%zu:%s%zu:%s%s", strlen(code), code, strlen(loc), loc, msg);
    } else {
        c->failed = true;
        return;
    }
    if (json_object_get(c->seen, key) != NULL) {
        free(key);
        return;
    }
    w = json_pack("{s:s,s:s,s:s}", "code", code, "location", loc, "message", msg);
    if (w == NULL || json_array_append_new(c->list, w) != 0 ||
        json_object_set_new_nocheck(c->seen, key, json_true()) != 0) {
        c->failed = true;
    }
    free(key);
}

/* Where in the proposal a warning about a rule it added lies: "FILE:
 * operations[I] (rule 'NAME')" for the operation that names the rule the
 * message starts with ("rule 'NAME': ..."), else the file alone. */
static void proposal_loc(const struct warn_ctx *c, const char *msg, char *loc, size_t len)
{
    const char *name = strncmp(msg, "rule '", 6) == 0 ? msg + 6 : NULL;
    const char *end = name != NULL ? strchr(name, '\'') : NULL;
    size_t n = c->proposal != NULL ? model_proposal_nops(c->proposal) : 0;

    for (size_t i = 0; end != NULL && i < n; i++) {
        const char *r = model_proposal_rule_name(c->proposal, i);

        if (r != NULL && strlen(r) == (size_t)(end - name) &&
            strncmp(r, name, (size_t)(end - name)) == 0) {
            (void)snprintf(loc, len, "%s: operations[%zu]", c->proposal_name, i);
            return;
        }
    }
    (void)snprintf(loc, len, "%s", c->proposal_name);
}

/* model_warn_fn: a policy warning, located "FILE:LINE:COL". */
static void on_warning(void *arg, enum model_warning w, const char *file, uint32_t line,
                       uint32_t col, const char *msg)
{
    struct warn_ctx *c = arg;
    char loc[512];
    char text[512];

    if (line > 0) {
        (void)snprintf(loc, sizeof(loc), "%s:%u:%u", file != NULL ? file : "-", (unsigned)line,
                       (unsigned)col);
    } else if (c->proposal_name != NULL) {
        /* a rule without a line in a merged candidate is the proposal's */
        proposal_loc(c, msg, loc, sizeof(loc));
    } else {
        (void)snprintf(loc, sizeof(loc), "%s", file != NULL ? file : "");
    }
    if (c->boundary) {
        if (w != MODEL_WARN_L7_AUDIT) {
            return; /* the boundary's other oddities are the operator's business */
        }
        (void)snprintf(text, sizeof(text),
                       "boundary: %s; the check cannot bound methods or "
                       "paths there",
                       msg);
        warn_add(c, "boundary-audit", loc, text);
        return;
    }
    warn_add(c, model_warning_code(w), loc, msg);
}

/* "prove ran without credentials: A, B and C can never fire": the
 * categories that need credentials, in the words of the category table. */
static const char *no_creds_text(char *text, size_t len)
{
    size_t n = 0;
    size_t k = 0;
    size_t at;

    for (int c = 0; c < PROVER_CAT__COUNT; c++) {
        n += prover_category_needs_creds((enum prover_category)c);
    }
    (void)snprintf(text, len, "prove ran without credentials: ");
    for (int c = 0; c < PROVER_CAT__COUNT; c++) {
        if (!prover_category_needs_creds((enum prover_category)c)) {
            continue;
        }
        k++;
        at = strlen(text);
        (void)snprintf(text + at, len - at, "%s%s", k == 1 ? "" : (k == n ? " and " : ", "),
                       prover_category_name((enum prover_category)c));
    }
    at = strlen(text);
    (void)snprintf(text + at, len - at, " can never fire");
    return text;
}

/* The warnings of a loaded job into 'out' and its body ("warnings"). */
static bool add_warnings(const struct prover_job *job, const struct prover_input *in,
                         const struct model_proposal *proposal, struct prover_answer *out)
{
    struct warn_ctx c = {proposal != NULL ? job->proposal.name : NULL,
                         proposal,
                         json_array(),
                         json_object(),
                         false,
                         false};
    char why[256];
    bool ok;

    if (c.list == NULL || c.seen == NULL || out->body == NULL) {
        json_decref(c.list);
        json_decref(c.seen);
        return false;
    }
    if (job->kind == PROVER_JOB_CHECK) {
        c.boundary = true;
        model_policy_warnings(in->baseline, 0, on_warning, &c);
        c.boundary = false;
    } else if (in->creds == NULL) {
        warn_add(&c, "no-credentials", "", no_creds_text(why, sizeof(why)));
    }
    model_policy_warnings(in->candidate, job->warn_flags, on_warning, &c);
    json_decref(c.seen);
    ok = !c.failed && json_object_set_new(out->body, "warnings", c.list) == 0;
    if (!ok) {
        return false;
    }
    out->warnings = c.list;
    return true;
}

/* List what the change grants into 'out' and its body ("grants"). */
static bool add_grants(const struct prover_input *in, struct prover_answer *out)
{
    json_t *j;

    if (!pv_ok(prover_grants_list(in->mode == PROVER_AUDIT ? NULL : in->baseline, in->candidate,
                                  in->creds, &out->grants))) {
        return false;
    }
    j = prover_grants_json(&out->grants);
    /* json_object_set_new steals 'j' even when it fails. */
    return j != NULL && json_object_set_new(out->body, "grants", j) == 0;
}

void prover_job_run(struct prover_session *s, const struct prover_job *job,
                    struct prover_answer *out)
{
    struct prover_input in;
    struct loaded l;

    memset(out, 0, sizeof(*out));
    memset(&l, 0, sizeof(l));
    l.diags = model_diags_new();
    if (s == NULL || job == NULL || l.diags == NULL) {
        model_diags_free(l.diags);
        answer_error(out, 500, "internal",
                     s == NULL ? "prover session unavailable" : "out of memory");
        return;
    }
    if (load_job(job, &l, &in, out)) {
        out->result = prover_run(s, &in);
        if (out->result == NULL) {
            answer_error(out, 500, "internal", "out of memory");
        } else {
            out->status = 200;
            out->body = prover_result_to_json(out->result);
            if ((job->kind == PROVER_JOB_PROVE && !add_grants(&in, out)) ||
                !add_warnings(job, &in, l.proposal, out)) {
                json_decref(out->body);
                out->body = NULL;
            }
        }
    }
    if (out->status == 400) {
        out->diags = l.diags;
        l.diags = NULL;
        mark_invalid(out);
    }
    model_diags_free(l.diags);
    loaded_free(&l);
    if (out->body == NULL) {
        prover_answer_free(out);
        answer_error(out, 500, "internal", "out of memory");
    }
}

void prover_job_run_body(struct prover_session *s, enum prover_body_kind kind,
                         const struct prover_body *b, const struct prover_job_env *env,
                         struct prover_answer *out)
{
    struct prover_job job;
    const struct {
        enum prover_field f;
        struct prover_job_doc *slot;
    } docs[] = {
        {PROVER_F_BASELINE, &job.baseline}, {PROVER_F_CANDIDATE, &job.candidate},
        {PROVER_F_PROPOSAL, &job.proposal}, {PROVER_F_POLICY, &job.policy},
        {PROVER_F_BOUNDARY, &job.boundary}, {PROVER_F_CREDENTIALS, &job.credentials},
    };

    memset(&job, 0, sizeof(job));
    if (kind != PROVER_BODY_PROVE && kind != PROVER_BODY_CHECK) {
        memset(out, 0, sizeof(*out));
        answer_error(out, 500, "internal", "not a prove or check body");
        return;
    }
    job.kind = kind == PROVER_BODY_CHECK ? PROVER_JOB_CHECK : PROVER_JOB_PROVE;
    for (size_t i = 0; i < PV_ARRAY_LEN(docs); i++) {
        const struct prover_doc *d = &b->f[docs[i].f];

        if (d->present) {
            docs[i].slot->name = prover_field_name(docs[i].f);
            docs[i].slot->text = d->text;
            docs[i].slot->len = d->len;
        }
    }
    if (env != NULL) {
        job.reg = job.kind == PROVER_JOB_PROVE ? env->reg : NULL;
        job.timeout_ms = env->timeout_ms;
        job.cache = env->cache;
        job.cache_arg = env->cache_arg;
        job.warn_flags = env->warn_flags;
    }
    if (b->timeout_ms != 0) {
        job.timeout_ms = (unsigned)b->timeout_ms;
    }
    prover_job_run(s, &job, out);
}

void prover_job_answer(struct prover_session *s, enum prover_job_kind kind, const char *json,
                       size_t len, const struct prover_job_env *env, struct prover_answer *out)
{
    enum prover_body_kind bk = kind == PROVER_JOB_CHECK ? PROVER_BODY_CHECK : PROVER_BODY_PROVE;
    struct prover_body b;
    char err[512];
    pv_result res = prover_body_decode(bk, json, len, env != NULL ? env->max_timeout_ms : 30000u,
                                       &b, err, sizeof(err));

    if (!pv_ok(res)) {
        prover_answer_body_error(out, res, err, true);
        return;
    }
    prover_job_run_body(s, bk, &b, env, out);
    prover_body_free(&b);
}
