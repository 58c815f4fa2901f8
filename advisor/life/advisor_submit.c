/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_submit.c - the lifecycle's first step: a proposal becomes chunks
 * (docs/advisor.md#lifecycle). Each operation is evaluated without a lock
 * and committed through the store's group writer; see advisor_chunk.c for
 * how a decision is made safe.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/life/life.h"
#include "advisor/life/life_int.h"
#include "advisor/store/store.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "model/model.h"

/* ===========================================================================
 * Submit
 * ========================================================================= */

/* A proposal that adds nothing: proved, the verdict is empty and the
 * candidate is contained in the policy in force (no grant listed, or the
 * containment check says within; advisor_eval.c). Such a rule is never
 * stored: an
 * approval of it would carry authority the moment the rule that covers it
 * goes (docs/advisor.md#reproof). */
static bool adds_nothing(const struct advisor_eval *e)
{
    return advisor_eval_adds_nothing(e);
}

/* A list entry jansson could not add (out of memory, -1): the answer is
 * incomplete. */
static void note(struct advisor_submission *o, int rc)
{
    if (rc != 0) {
        o->incomplete = true;
    }
}

static void answer_already(struct advisor_submission *o, const struct advisor_snapshot *snap,
                           const char *name, const json_t *rule)
{
    json_t *by = advisor_rule_covering(snap->policy, rule);
    struct pv_dynbuf b;
    char *detail;
    size_t i;
    const json_t *n;

    pv_dynbuf_init(&b, 64u * 1024u);
    pv_dynbuf_putf(&b,
                   "the effective policy (revision %lld) already allows everything rule '%s' "
                   "would",
                   (long long)snap->rev, name);
    json_array_foreach(by, i, n)
    {
        pv_dynbuf_putf(&b, "%s'%s'", i == 0 ? ": covered by rule " : ", ", json_string_value(n));
    }
    pv_dynbuf_puts(&b, "; nothing was stored");
    detail = pv_dynbuf_finish(&b);
    note(o, json_array_append_new(o->already,
                                  json_pack("{s:s,s:o,s:s}", "rule_name", name, "covered_by",
                                            by != NULL ? by : json_array(), "detail",
                                            detail != NULL ? detail : "already allowed")));
    note(o, json_array_append_new(o->operations,
                                  json_pack("{s:s,s:s,s:s}", "rule_name", name, "outcome",
                                            "already_allowed", "reason",
                                            detail != NULL ? detail : "already allowed")));
    free(detail);
}

/* An operation refused before or after its evaluation: its reason goes
 * into the list the reference answers and into its own outcome. */
static void reject_early(struct advisor_submission *o, const char *name, const char *reason)
{
    o->rejected++;
    note(o, json_array_append_new(o->reasons, json_string(reason)));
    note(o,
         json_array_append_new(o->operations, json_pack("{s:s?,s:s,s:s}", "rule_name", name,
                                                        "outcome", "rejected", "reason", reason)));
}

static void accept_one(struct advisor_submission *o, const char *name, const char *id)
{
    o->accepted++;
    note(o, json_array_append_new(o->ids, json_string(id)));
    note(o, json_array_append_new(o->operations, json_pack("{s:s,s:s,s:s}", "rule_name", name,
                                                           "outcome", "accepted", "chunk_id", id)));
}

/* Supersede the other pending chunks of the same key. An agent's
 * submission supersedes pending chunks of any mode; a mechanistic one never
 * supersedes an agent's own proposal, nor a mechanistic one of another
 * dedup key (another endpoint's path on the same host and port). */
struct supersede_ctx {
    const struct store_chunk *by;
    struct advisor_ids ids; /* short (oom): supersede none, fail the submission */
};

static void supersede_collect(void *arg, const struct store_chunk *c)
{
    struct supersede_ctx *x = arg;

    if (strcmp(c->id, x->by->id) == 0) {
        return;
    }
    if (strcmp(x->by->analysis_mode, "mechanistic") == 0 &&
        (strcmp(c->analysis_mode, "mechanistic") != 0 ||
         strcmp(c->dedup_key != NULL ? c->dedup_key : "",
                x->by->dedup_key != NULL ? x->by->dedup_key : "") != 0)) {
        /* nor the mapper's proposal for another endpoint of the host:
         * its key names the endpoint's path (advisor_dedup_key) */
        return;
    }
    advisor_ids_add(&x->ids, c->id);
}

static pv_result supersede(struct advisor_worker *w, const char *sandbox_name,
                           const struct store_chunk *by)
{
    struct supersede_ctx x = {.by = by};
    char reason[128];
    pv_result res;

    if (by->host[0] == '\0' || by->port == 0 || by->binary[0] == '\0') {
        return PV_RESULT_OK;
    }
    res = store_chunk_each_key(w->st, by->sandbox, "pending", by->host, by->port, by->binary,
                               supersede_collect, &x);
    if (pv_ok(res) && x.ids.oom) {
        res = pv_fail(PV_ERR_NOMEM, __func__);
    }
    snprintf(reason, sizeof(reason), "superseded by chunk %s", by->id);
    for (size_t i = 0; i < x.ids.n && pv_ok(res); i++) {
        res = advisor_system_reject(w, sandbox_name, by->sandbox, x.ids.ids[i], reason, "supersede",
                                    by->created_ms);
    }
    advisor_ids_free(&x.ids);
    return res;
}

/* The commit of one submission, run by the store's group writer. 'w' is
 * the submitting worker; every write goes through the writer's connection
 * ('view' below), inside the group's transaction. */
struct submit_tx {
    struct advisor_worker *w;
    const struct advisor_snapshot *snap;
    const struct advisor_eval *e;
    const json_t *rule;
    const char *id;
    const char *name;
    const char *rule_text;
    const char *intent;
    const char *mode;
    const char *key;
    const char *host;
    int64_t port;
    const char *binary;
    const struct advisor_submit_meta *meta; /* the mapper's; NULL otherwise */
    bool may_approve;                       /* the caller holds the sandbox's stripe */
    /* out */
    bool stale;   /* the policy moved, or an approval needs the stripe */
    bool updated; /* dedup gave a pending chunk the wider rule */
    bool already; /* the rule adds nothing: nothing was stored */
    char chunk_id[37];
    char line[8192];
    char approved_line[8192];
};

static bool auto_gate(const struct advisor_eval *e)
{
    return e->empty && e->within_boundary && e->within_envelope && e->security_notes[0] == '\0' &&
           e->application_error[0] == '\0';
}

/* The mechanistic dedup: bump the hit count of the newest chunk of the same
 * key, unless it was rejected (a re-observed denial then makes a new
 * chunk). True when it was deduplicated (its id into x->chunk_id). */
/* A mechanistic submission whose key has a live chunk adds its hits to it.
 * When the mapper brings a wider rule for a pending chunk (samples a later
 * flush saw; advisor_mapper.c folds the chunk's own rules in), the chunk
 * takes that rule and its evaluation, and x->updated is set so the caller
 * applies the auto-approval gate to it. */
static bool dedup(struct advisor_worker *w, struct submit_tx *x, pv_result *res)
{
    struct store_chunk c;
    char evidence[65];
    bool done = false;

    *res = PV_RESULT_OK;
    if (!pv_ok(store_chunk_by_dedup(w->st, x->snap->sandbox, x->key, &c))) {
        return false;
    }
    if (strcmp(c.status, "approved") == 0 && x->meta != NULL && x->e->candidate != NULL &&
        !adds_nothing(x->e)) {
        /* Denials the approved rule does not cover: a client that needs two
         * requests (git asks for info/refs and, once that is allowed, POSTs
         * to upload-pack) would otherwise only add hits to the approved
         * chunk and never be proposed. They make a new chunk to decide. */
        store_chunk_clear(&c);
        return false;
    }
    if (strcmp(c.status, "rejected") != 0) {
        char *status = pv_strdup(c.status);
        bool widen = x->meta != NULL && strcmp(c.status, "pending") == 0 &&
                     strcmp(c.proposed_rule, x->rule_text) != 0 && x->e->candidate != NULL;
        struct store_chunk upd = c; /* c keeps its own strings; upd borrows */
        upd.hit_count += x->meta != NULL ? x->meta->hits : 1;
        upd.last_seen_ms = x->meta != NULL ? x->meta->last_seen_ms : advisor_now_ms();
        if (widen) {
            *res = advisor_evidence_put(w, x->e, evidence);
            upd.proposed_rule = PV_UNCONST(x->rule_text);
            upd.rationale = PV_UNCONST(x->intent != NULL ? x->intent : "");
            upd.confidence = x->meta->confidence;
            advisor_apply_eval(&upd, x->e, x->snap->hash, evidence);
        }
        if (pv_ok(*res)) {
            *res = status != NULL ? store_chunk_update(w->st, &upd, status)
                                  : pv_fail(PV_ERR_NOMEM, __func__);
        }
        if (pv_ok(*res) && widen) {
            char *summary = advisor_rule_summary(x->rule, c.rule_name);
            snprintf(x->line, sizeof(x->line),
                     "CONFIG:PROPOSED [INFO] mechanistic proposal chunk:%s %s (rule widened by "
                     "new denials)",
                     c.id, summary != NULL ? summary : "");
            free(summary);
            *res = advisor_event(w->st, x->snap->name, "CONFIG:PROPOSED", x->line,
                                 json_pack("{s:s,s:s,s:s,s:s,s:s,s:b}", "chunk_id", c.id,
                                           "analysis_mode", x->mode, "rule_name", c.rule_name,
                                           "validation_result", x->e->validation_result, "rule",
                                           x->rule_text, "updated", 1));
            x->updated = pv_ok(*res);
        }
        free(status);
        if (pv_ok(*res)) {
            snprintf(x->chunk_id, sizeof(x->chunk_id), "%s", c.id);
            done = true;
        }
    }
    store_chunk_clear(&c);
    return done;
}

/* The record of a new pending chunk of submission 'x' (strings borrowed). */
static void new_chunk(const struct submit_tx *x, int64_t draft, int64_t now, struct store_chunk *c)
{
    bool mechanistic = strcmp(x->mode, "mechanistic") == 0;

    memset(c, 0, sizeof(*c));
    c->id = PV_UNCONST(x->id);
    c->sandbox = x->snap->sandbox;
    c->draft_version = draft;
    c->status = PV_UNCONST("pending");
    c->rule_name = PV_UNCONST(x->name);
    c->proposed_rule = PV_UNCONST(x->rule_text);
    c->rationale = PV_UNCONST(x->intent != NULL ? x->intent : "");
    c->confidence = x->meta != NULL ? x->meta->confidence : mechanistic ? 0.5 : 0.75;
    c->created_ms = now;
    c->host = PV_UNCONST(x->host);
    c->port = x->port;
    c->binary = PV_UNCONST(x->binary);
    c->hit_count = x->meta != NULL ? x->meta->hits : 1;
    c->first_seen_ms = x->meta != NULL ? x->meta->first_seen_ms : now;
    c->last_seen_ms = x->meta != NULL ? x->meta->last_seen_ms : now;
    c->rejection_reason = PV_UNCONST("");
    c->analysis_mode = PV_UNCONST(x->mode);
    c->dedup_key = mechanistic ? PV_UNCONST(x->key) : PV_UNCONST("");
    c->stage = PV_UNCONST(x->meta != NULL ? x->meta->stage : mechanistic ? "mechanistic" : "agent");
    c->decided_by = PV_UNCONST("");
}

static pv_result submit_tx(struct store *st, void *arg)
{
    struct submit_tx *x = arg;
    struct advisor_worker view = *x->w;
    struct advisor_worker *w = &view;
    const struct advisor_snapshot *snap = x->snap;
    const struct advisor_eval *e = x->e;
    struct store_revision cur;
    struct store_chunk c;
    char evidence[65];
    const char *resolved_from = "default";
    bool mechanistic = strcmp(x->mode, "mechanistic") == 0;
    int64_t now = advisor_now_ms();
    char *summary;
    pv_result res = PV_RESULT_OK;

    view.st = st;
    view.pol_cache = NULL;
    view.pol_json = NULL;
    x->stale = false;
    x->line[0] = '\0';
    x->approved_line[0] = '\0';
    PV_GUARD(store_rev_latest(st, snap->sandbox, &cur));
    x->stale = strcmp(cur.hash, snap->hash) != 0;
    store_revision_clear(&cur);
    if (x->stale) {
        PV_BAIL(PV_ERR_CONFLICT); /* evaluated against an old policy */
    }
    x->updated = false;
    x->already = false;
    if (mechanistic && dedup(w, x, &res)) {
        PV_GUARD(res);
        if (x->updated && x->may_approve && advisor_mode_auto(st, snap->name, &resolved_from) &&
            auto_gate(e)) {
            struct store_chunk copy;
            PV_GUARD(store_chunk_get(st, snap->sandbox, x->chunk_id, &copy));
            res = advisor_approve_in_tx(w, snap, &copy, e, "pending", true, resolved_from,
                                        x->approved_line, sizeof(x->approved_line));
            store_chunk_clear(&copy);
            /* a peer moved since the evaluation: evaluate again */
            x->stale = res.err == PV_ERR_CONFLICT;
        }
        return res;
    }
    PV_GUARD(res);
    if (adds_nothing(e)) {
        /* A mechanistic observation of a live chunk still counted its hit
         * above; a new chunk that adds nothing is never stored. */
        x->already = true;
        return PV_RESULT_OK;
    }
    if (advisor_mode_auto(st, snap->name, &resolved_from) && auto_gate(e) && !x->may_approve) {
        /* An approval moves the policy: only under the sandbox's stripe. */
        x->stale = true;
        PV_BAIL(PV_ERR_CONFLICT);
    }
    PV_GUARD(advisor_evidence_put(w, e, evidence));
    new_chunk(x, store_chunk_max_draft(st, snap->sandbox) + 1, now, &c);
    advisor_apply_eval(&c, e, snap->hash, evidence);
    PV_GUARD(store_chunk_insert(st, &c));
    summary = advisor_rule_summary(x->rule, x->name);
    snprintf(x->line, sizeof(x->line), "CONFIG:PROPOSED [INFO] %s proposal chunk:%s %s", x->mode,
             x->id, summary != NULL ? summary : "");
    free(summary);
    {
        const char *env_note =
            json_string_value(json_object_get(json_object_get(e->evidence, "envelope"), "note"));
        PV_GUARD(advisor_event(st, snap->name, "CONFIG:PROPOSED", x->line,
                               json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "chunk_id", x->id,
                                         "analysis_mode", x->mode, "rule_name", x->name,
                                         "validation_result", e->validation_result, "rule",
                                         x->rule_text, "evidence_blob", c.evidence, "envelope_note",
                                         env_note != NULL ? env_note : "")));
    }
    PV_GUARD(supersede(w, snap->name, &c));
    snprintf(x->chunk_id, sizeof(x->chunk_id), "%s", x->id);
    if (x->may_approve && advisor_mode_auto(st, snap->name, &resolved_from) && auto_gate(e)) {
        struct store_chunk copy;
        PV_GUARD(store_chunk_get(st, snap->sandbox, x->id, &copy));
        res = advisor_approve_in_tx(w, snap, &copy, e, "pending", true, resolved_from,
                                    x->approved_line, sizeof(x->approved_line));
        store_chunk_clear(&copy);
        /* a peer moved since the evaluation: evaluate again */
        x->stale = res.err == PV_ERR_CONFLICT;
        PV_GUARD(res);
    }
    return PV_RESULT_OK;
}

/* Take the snapshot and evaluate one operation in it; a chunk a reviewer
 * must decide also gets its narrowed suggestion (docs/advisor.md#suggestion).
 * On success both are the caller's to clear. */
static pv_result evaluate_op(struct advisor_worker *w, const char *sandbox, const char *name,
                             const json_t *rule, struct advisor_snapshot *snap,
                             struct advisor_eval *e)
{
    PV_GUARD(advisor_snapshot_take(w, sandbox, snap));
    if (!pv_ok(advisor_evaluate(w, snap, name, rule, e))) {
        advisor_snapshot_clear(snap);
        PV_BAIL(PV_ERR_NOMEM);
    }
    if (!auto_gate(e)) {
        advisor_suggest(w, snap, name, rule, e);
    }
    return PV_RESULT_OK;
}

/* The outcome of a commit 'x' that returned '*res': true when it went
 * stale and is to be evaluated again (then *res is cleared); otherwise the
 * operation's outcome is recorded in 'o' and a stored chunk logged. */
static bool committed(struct advisor_worker *w, const struct submit_tx *x, pv_result *res,
                      struct advisor_submission *o)
{
    if (!pv_ok(*res) && x->stale) {
        *res = PV_RESULT_OK;
        return true;
    }
    if (pv_ok(*res) && x->already) {
        answer_already(o, x->snap, x->name, x->rule);
    } else if (pv_ok(*res)) {
        accept_one(o, x->name, x->chunk_id);
        if (x->line[0] != '\0') {
            advisor_log_line(x->line);
        }
        if (x->approved_line[0] != '\0') {
            advisor_log_line(x->approved_line);
        }
        advisor_changed(w->a);
    }
    return false;
}

/* One operation of a submission: evaluate without any lock, commit through
 * the group writer. The commit re-checks that the policy is the one that was
 * evaluated; if it moved, the operation is evaluated again holding the
 * sandbox's stripe, so it cannot be overtaken twice (a busy sandbox costs
 * waiting, never a refusal). An approval (auto mode, empty delta) always
 * commits under the stripe: revisions move one at a time per sandbox. */
static pv_result submit_one(struct advisor_worker *w, const char *sandbox, const char *mode,
                            const struct advisor_submit_meta *meta, const char *intent,
                            const char *name, const json_t *rule, struct advisor_submission *o)
{
    struct advisor *a = w->a;
    char host[256];
    char binary[1024];
    char key[1400];
    char id[37];
    int64_t port = 0;
    char *rule_text = advisor_json_canonical(rule);
    pv_result res;

    PV_ENSURE(rule_text != NULL, PV_ERR_NOMEM);
    advisor_rule_key(rule, host, sizeof(host), &port, binary, sizeof(binary));
    {
        const json_t *ep0 = json_array_get(json_object_get(rule, "endpoints"), 0);
        advisor_dedup_key(host, port, binary, json_string_value(json_object_get(ep0, "protocol")),
                          json_string_value(json_object_get(ep0, "path")), key, sizeof(key));
    }
    res = advisor_uuid(id);
    for (int attempt = 0; pv_ok(res) && attempt < 3; attempt++) {
        struct advisor_snapshot snap;
        struct advisor_eval e;
        struct submit_tx x;
        pthread_mutex_t *held = NULL;
        const char *from;
        bool retry = false;

        if (attempt > 0) {
            int64_t sid = 0;
            res = advisor_sandbox_id(w, sandbox, &sid);
            if (!pv_ok(res)) {
                break;
            }
            held = advisor_stripe(a, sid);
            pthread_mutex_lock(held);
        }
        res = evaluate_op(w, sandbox, name, rule, &snap, &e);
        if (pv_ok(res) && e.nomem && e.candidate == NULL) {
            advisor_eval_clear(&e); /* our memory, not the rule's: no refusal */
            advisor_snapshot_clear(&snap);
            res = pv_fail(PV_ERR_NOMEM, __func__);
        }
        if (!pv_ok(res)) {
            if (held != NULL) {
                pthread_mutex_unlock(held);
            }
            break;
        }
        if (strcmp(mode, "mechanistic") != 0 && e.candidate == NULL) {
            /* The rule does not merge or validate: the agent redrafts. */
            char reason[2300];
            snprintf(reason, sizeof(reason), "chunk '%s': %s", name, e.application_error);
            reject_early(o, name, reason);
        } else {
            if (held == NULL && auto_gate(&e) && advisor_mode_auto(w->st, snap.name, &from)) {
                held = advisor_stripe(a, snap.sandbox);
                pthread_mutex_lock(held);
            }
            memset(&x, 0, sizeof(x));
            x.w = w;
            x.snap = &snap;
            x.e = &e;
            x.rule = rule;
            x.id = id;
            x.name = name;
            x.rule_text = rule_text;
            x.intent = intent;
            x.mode = mode;
            x.key = key;
            x.host = host;
            x.port = port;
            x.binary = binary;
            x.meta = meta;
            x.may_approve = held != NULL;
            res = store_group_write(a->group, submit_tx, &x);
            retry = committed(w, &x, &res, o);
        }
        if (held != NULL) {
            pthread_mutex_unlock(held);
        }
        advisor_eval_clear(&e);
        advisor_snapshot_clear(&snap);
        if (!retry) {
            free(rule_text);
            return res;
        }
    }
    free(rule_text);
    if (pv_ok(res)) {
        /* Under the stripe only a peer that moved again can make it stale. */
        reject_early(o, name, "the sandbox's policy or a peer changed during evaluation; resubmit");
    }
    return res;
}

/* ===========================================================================
 * The lifecycle's entry: a parsed proposal in, its outcomes out
 * ========================================================================= */

pv_result advisor_proposal_parse(const char *body, size_t len, struct advisor_proposal *out,
                                 struct model_diags *d)
{
    memset(out, 0, sizeof(*out));
    out->model = model_proposal_load("proposal", body, len, d);
    if (out->model == NULL) {
        PV_BAIL(pv_errno == PV_ERR_NOMEM ? PV_ERR_NOMEM : PV_ERR_POLICY);
    }
    out->doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    if (json_array_size(json_object_get(out->doc, "operations")) !=
        model_proposal_nops(out->model)) {
        /* The model accepts YAML too; the lifecycle takes JSON. */
        advisor_proposal_clear(out);
        PV_BAIL(PV_ERR_PARSE);
    }
    return PV_RESULT_OK;
}

void advisor_proposal_clear(struct advisor_proposal *p)
{
    model_proposal_free(p->model);
    json_decref(p->doc);
    memset(p, 0, sizeof(*p));
}

pv_result advisor_submission_init(struct advisor_submission *s)
{
    memset(s, 0, sizeof(*s));
    s->ids = json_array();
    s->reasons = json_array();
    s->already = json_array();
    s->operations = json_array();
    if (s->ids == NULL || s->reasons == NULL || s->already == NULL || s->operations == NULL) {
        advisor_submission_clear(s);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

void advisor_submission_clear(struct advisor_submission *s)
{
    json_decref(s->ids);
    json_decref(s->reasons);
    json_decref(s->already);
    json_decref(s->operations);
    memset(s, 0, sizeof(*s));
}

pv_result advisor_submit_admit(struct advisor_worker *w, const char *sandbox)
{
    struct store_sandbox sb;
    bool on;

    PV_GUARD(store_sandbox_get(w->st, sandbox, &sb)); /* PV_ERR_NOTFOUND: none */
    store_sandbox_clear(&sb);
    PV_GUARD(advisor_proposals_on(w->st, sandbox, &on));
    PV_ENSURE(on, PV_ERR_USAGE);
    return PV_RESULT_OK;
}

/* The checks an operation passes before it is evaluated: its reason into
 * 'reason' when it fails one. */
static bool op_refused(struct advisor_worker *w, const char *name, const json_t *rule, char *reason,
                       size_t len)
{
    const char *blocked;

    if (name == NULL || name[0] == '\0') {
        snprintf(reason, len, "chunk missing rule_name");
        return true;
    }
    if (strncmp(name, "_provider_", 10) == 0) {
        snprintf(reason, len, "chunk '%s' uses reserved '_provider_' rule-name prefix", name);
        return true;
    }
    if (!json_is_object(rule)) {
        snprintf(reason, len, "chunk '%s' missing proposed_rule", name);
        return true;
    }
    blocked = advisor_rule_blocked_host(rule, w->a->cfg.test_allow_loopback);
    if (blocked != NULL) {
        snprintf(reason, len,
                 "chunk '%s': proposed rule endpoint host '%s' is an always-blocked "
                 "destination (loopback, link-local, cloud metadata or unspecified)",
                 name, blocked);
        return true;
    }
    return false;
}

pv_result advisor_submit(struct advisor_worker *w, const char *sandbox, const char *mode_arg,
                         const struct advisor_submit_meta *meta, const struct advisor_proposal *p,
                         struct advisor_submission *out)
{
    const json_t *ops = json_object_get(p->doc, "operations");
    const char *mode =
        mode_arg != NULL && strcmp(mode_arg, "mechanistic") == 0 ? "mechanistic" : "agent_authored";
    pv_result res;

    PV_GUARD(advisor_submission_init(out));
    res = advisor_submit_admit(w, sandbox);
    for (size_t i = 0; i < model_proposal_nops(p->model) && pv_ok(res); i++) {
        const char *name = model_proposal_rule_name(p->model, i);
        const json_t *rule =
            json_object_get(json_object_get(json_array_get(ops, i), "addRule"), "rule");
        char reason[1024];

        if (op_refused(w, name, rule, reason, sizeof(reason))) {
            reject_early(out, name, reason);
            continue;
        }
        res = submit_one(w, sandbox, mode, meta, model_proposal_intent(p->model), name, rule, out);
    }
    return res;
}

void advisor_dedup_key(const char *host, int64_t port, const char *binary, const char *protocol,
                       const char *path, char *out, size_t len)
{
    /* an endpoint with a path of its own (the one a rule merges into):
     * GraphQL, WebSocket, MCP and JSON-RPC groups are keyed by it too */
    if (protocol != NULL &&
        (strcmp(protocol, "graphql") == 0 || strcmp(protocol, "websocket") == 0 ||
         strcmp(protocol, "mcp") == 0 || strcmp(protocol, "json-rpc") == 0)) {
        snprintf(out, len, "%s|%lld|%s|%s|%s", host, (long long)port, binary, protocol,
                 path != NULL ? path : "");
    } else {
        snprintf(out, len, "%s|%lld|%s", host, (long long)port, binary);
    }
}
