/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_reprove.c - approvals that stay proven (docs/advisor.md#reproof)
 *
 * An approval is proved against the effective policy of its moment. When
 * that context changes under it - a new base revision, an undo or reject of
 * an earlier chunk, a peer's new address, new credentials, a new boundary -
 * what the chunk grants can change too: an L4 rule folded into an operator's
 * L7 rule adds nothing until the operator removes that rule, and then it is
 * opaque access to a credentialed host. So every recomposition walks the
 * approved chunks in approval order and proves each again against the
 * policy composed so far. The invariant: no effective revision grants what
 * no decision covered.
 *
 *  - A chunk whose inputs are exactly those of its stored evaluation (same
 *    context, candidate, credentials and boundary: its review token names
 *    them all) keeps its proof without a prover call.
 *  - Otherwise it is proved again, and the new evidence is held against the
 *    evidence its approval rested on (advisor_evidence_covered). Covered:
 *    the chunk stays, with the new evaluation stored. Not covered: it is
 *    suspended - left out of the composition, status `suspended`, back in
 *    the inbox with both evidences, a CONFIG:SUSPENDED event - until a
 *    reviewer approves it again or rejects it.
 *  - A chunk that no longer merges, or that the prover cannot decide, is
 *    suspended too: a proof that did not happen covers nothing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/life/life.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "model/model.h"

/* ===========================================================================
 * Evidence coverage
 * ========================================================================= */

/* Is every string of array 'a' in array 'b'? (Absent arrays are empty.) */
static bool strings_within(const json_t *a, const json_t *b)
{
    size_t i;
    const json_t *x;

    json_array_foreach(a, i, x)
    {
        bool found = false;
        size_t j;
        const json_t *y;
        json_array_foreach(b, j, y)
        {
            if (json_equal(x, y)) {
                found = true;
                break;
            }
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

static bool same_member(const json_t *a, const json_t *b, const char *key)
{
    const json_t *x = json_object_get(a, key);
    const json_t *y = json_object_get(b, key);

    return (x == NULL && y == NULL) || (x != NULL && y != NULL && json_equal(x, y));
}

/* A grant is covered by an approved grant of the same binary pattern, host,
 * route and peer whose ports, access, credentials, destinations (every
 * allowed_ips / resolved_ips range) and flags include its own. */
static bool grant_covered(const json_t *g, const json_t *approved)
{
    size_t i;
    const json_t *a;

    json_array_foreach(approved, i, a)
    {
        if (same_member(g, a, "binary") && same_member(g, a, "host") &&
            same_member(g, a, "route") && same_member(g, a, "target_sandbox") &&
            strings_within(json_object_get(g, "ports"), json_object_get(a, "ports")) &&
            strings_within(json_object_get(g, "access"), json_object_get(a, "access")) &&
            strings_within(json_object_get(g, "credentials"), json_object_get(a, "credentials")) &&
            strings_within(json_object_get(g, "private_destinations"),
                           json_object_get(a, "private_destinations")) &&
            strings_within(json_object_get(g, "destinations"),
                           json_object_get(a, "destinations")) &&
            strings_within(json_object_get(g, "flags"), json_object_get(a, "flags"))) {
            return true;
        }
    }
    return false;
}

/* A finding path without what depends on the context's wording: its
 * witness (one concrete request of many) and the rule it is attributed to
 * (the merge may fold the chunk into another rule). */
static json_t *path_key(const json_t *path)
{
    json_t *k = json_deep_copy(path);

    if (k != NULL) {
        json_object_del(k, "witness");
        json_object_del(k, "rule");
    }
    return k;
}

static const json_t *category_of(const json_t *findings, const char *category)
{
    size_t i;
    const json_t *f;

    json_array_foreach(findings, i, f)
    {
        const char *c = json_string_value(json_object_get(f, "category"));
        if (c != NULL && strcmp(c, category) == 0) {
            return f;
        }
    }
    return NULL;
}

static bool path_in(const json_t *path, const json_t *finding)
{
    json_t *k = path_key(path);
    size_t i;
    const json_t *p;
    bool found = false;

    json_array_foreach(json_object_get(finding, "paths"), i, p)
    {
        json_t *pk = path_key(p);
        found = k != NULL && pk != NULL && json_equal(k, pk);
        json_decref(pk);
        if (found) {
            break;
        }
    }
    json_decref(k);
    return found;
}

static json_int_t paths_total(const json_t *finding)
{
    const json_t *t = json_object_get(finding, "paths_total");

    return json_is_integer(t) ? json_integer_value(t)
                              : (json_int_t)json_array_size(json_object_get(finding, "paths"));
}

/* "binary -> host:port" of a grant or finding path, for a reason. */
static void describe(const json_t *x, char *out, size_t len)
{
    const char *bin = json_string_value(json_object_get(x, "binary"));
    const char *host = json_string_value(json_object_get(x, "host"));
    const char *peer = json_string_value(json_object_get(x, "target_sandbox"));
    const json_t *ports = json_object_get(x, "ports");
    const json_t *port = json_object_get(x, "port");
    const char *route = json_string_value(json_object_get(x, "route"));
    json_int_t p = json_is_integer(port)        ? json_integer_value(port)
                   : json_array_size(ports) > 0 ? json_integer_value(json_array_get(ports, 0))
                                                : 0;

    snprintf(out, len, "%.300s -> %.300s:%lld%s%.20s", bin != NULL ? bin : "?",
             host != NULL && host[0] != '\0' ? host
             : peer != NULL                  ? peer
                                             : "(hostless)",
             (long long)p, route != NULL ? " " : "", route != NULL ? route : "");
}

bool advisor_evidence_covered(const json_t *approved, const struct advisor_eval *e,
                              bool auto_approved, char *why, size_t len)
{
    const json_t *ap = json_object_get(approved, "prover");
    const json_t *np = json_object_get(e->evidence, "prover");
    const json_t *ab = json_object_get(approved, "boundary");
    const char *averdict = json_string_value(json_object_get(ab, "verdict"));
    size_t i;
    const json_t *x;
    char what[700];

    if (e->candidate == NULL || e->application_error[0] != '\0') {
        snprintf(why, len, "could not be proved again: %s",
                 e->application_error[0] != '\0' ? e->application_error : "no candidate");
        return false;
    }
    if (e->reused) {
        return true;
    }
    json_array_foreach(json_object_get(np, "findings"), i, x)
    {
        const char *cat = json_string_value(json_object_get(x, "category"));
        const json_t *af = cat != NULL ? category_of(json_object_get(ap, "findings"), cat) : NULL;
        size_t j;
        const json_t *path;

        if (af == NULL) {
            describe(json_array_get(json_object_get(x, "paths"), 0), what, sizeof(what));
            snprintf(why, len, "new finding %s: %s", cat != NULL ? cat : "?", what);
            return false;
        }
        if (paths_total(x) > paths_total(af)) {
            snprintf(why, len, "%s now has %lld paths, %lld when approved", cat,
                     (long long)paths_total(x), (long long)paths_total(af));
            return false;
        }
        json_array_foreach(json_object_get(x, "paths"), j, path)
        {
            if (!path_in(path, af) &&
                json_array_size(json_object_get(af, "paths")) == (size_t)paths_total(af)) {
                describe(path, what, sizeof(what));
                snprintf(why, len, "new finding %s: %s", cat, what);
                return false;
            }
        }
    }
    json_array_foreach(json_object_get(np, "grants"), i, x)
    {
        if (!grant_covered(x, json_object_get(ap, "grants"))) {
            describe(x, what, sizeof(what));
            snprintf(why, len, "new grant: %s", what);
            return false;
        }
    }
    if (!e->within_boundary &&
        ((averdict != NULL && strcmp(averdict, "within") == 0) || (ab == NULL && auto_approved))) {
        snprintf(why, len, "the candidate is no longer within the auto-approval boundary");
        return false;
    }
    if (auto_approved && e->security_notes[0] != '\0') {
        snprintf(why, len, "approved automatically, and now carries security notes: %.600s",
                 e->security_notes);
        return false;
    }
    return true;
}

/* ===========================================================================
 * Composition
 * ========================================================================= */

void advisor_composed_clear(struct advisor_composed *c)
{
    json_decref(c->chunks);
    json_decref(c->suspended);
    memset(c, 0, sizeof(*c));
}

/* A chunk that cannot be appended makes the list one short; the caller
 * compares the count with the rows it saw and fails instead. */
struct approved_ids {
    json_t *ids;
    size_t seen;
};

static void ids_collect(void *arg, const struct store_chunk *c)
{
    struct approved_ids *x = arg;

    x->seen++;
    json_array_append_new(x->ids, json_string(c->id));
}

/* The approved chunk ids of 'sandbox', in approval order; NULL when the
 * store failed or any id could not be kept (a list one short would
 * drop an approved rule from the composition). */
static json_t *approved_ids(struct advisor_worker *w, int64_t sandbox)
{
    struct approved_ids x = {.ids = json_array()};

    if (x.ids == NULL || !pv_ok(store_chunk_each_approved(w->st, sandbox, ids_collect, &x)) ||
        json_array_size(x.ids) != x.seen) {
        json_decref(x.ids);
        return NULL;
    }
    return x.ids;
}

json_t *advisor_composition(struct advisor_worker *w, int64_t sandbox)
{
    struct store_revision base;
    json_t *ids;
    json_t *out;

    if (!pv_ok(store_base_latest(w->st, sandbox, &base))) {
        return NULL;
    }
    ids = approved_ids(w, sandbox);
    if (ids == NULL) {
        store_revision_clear(&base);
        return NULL;
    }
    out = json_pack("{s:s,s:o}", "base_blob", base.blob, "chunks", ids);
    store_revision_clear(&base);
    return out;
}

/* The base revision's policy with its peers resolved (new reference), its
 * blob digest into 'blob'; NULL with 'err' set when it cannot be read or
 * resolved ('*r' says why). */
static struct model_policy *base_policy(struct advisor_worker *w, int64_t sandbox, char blob[65],
                                        char *err, size_t errlen, pv_result *r)
{
    struct store_revision base;
    struct model_diags *d = model_diags_new();
    struct model_policy *p = NULL;
    char *yaml = NULL;
    size_t len = 0;

    *r = pv_fail(PV_ERR_POLICY, __func__);
    if (d == NULL || !pv_ok(store_base_latest(w->st, sandbox, &base))) {
        snprintf(err, errlen, "the sandbox has no base policy");
        model_diags_free(d);
        return NULL;
    }
    snprintf(blob, 65, "%s", base.blob);
    yaml = store_blob_get(w->st, base.blob, &len);
    store_revision_clear(&base);
    if (yaml != NULL) {
        p = model_policy_load("base", yaml, len, MODEL_FMT_YAML, d);
    }
    free(yaml);
    model_diags_free(d);
    if (p == NULL) {
        snprintf(err, errlen, "cannot read the base policy");
        return NULL;
    }
    *r = advisor_resolve_peers(w, p, err, errlen);
    if (!pv_ok(*r)) {
        model_policy_free(p);
        return NULL;
    }
    return p;
}

/* The base revision's policy with its peers resolved, as the snapshot's
 * context; its blob digest into 'blob'. */
static pv_result base_context(struct advisor_worker *w, int64_t sandbox,
                              struct advisor_snapshot *snap, char blob[65], char *err,
                              size_t errlen)
{
    pv_result r;
    struct model_policy *p = base_policy(w, sandbox, blob, err, errlen, &r);

    if (p == NULL) {
        return r;
    }
    return advisor_snapshot_set_policy(snap, p);
}

/* Store a fresh evaluation of an approved chunk that stays, or suspend it
 * (status 'suspended', the reason, the new evaluation beside the approved
 * evidence). Compare-and-set on "approved". */
static pv_result chunk_after(struct advisor_worker *w, struct store_chunk *c,
                             const struct advisor_eval *e /* NULL: keep */, const char *context,
                             const char *why)
{
    char evidence[65] = "";
    struct store_chunk upd = *c; /* borrows c's strings and e's */
    char *old_approved = NULL;

    if (e != NULL) {
        PV_GUARD(advisor_evidence_put(w, e, evidence));
        upd.validation_result = e->validation_result;
        upd.application_error = e->application_error;
        upd.security_notes = e->security_notes;
        upd.review_token = e->review_token;
        upd.current_hash = PV_UNCONST(context);
        upd.candidate_hash = PV_UNCONST(e->candidate_hash);
        upd.evidence = evidence[0] != '\0' ? evidence : c->evidence;
    }
    if (c->approved_evidence[0] == '\0') {
        old_approved = c->evidence; /* an approval from before schema 5 */
        upd.approved_evidence = old_approved;
    }
    if (why != NULL) {
        upd.status = PV_UNCONST("suspended");
        upd.suspension_reason = PV_UNCONST(why);
        upd.approved_seq = 0;
        upd.decided_ms = advisor_now_ms();
        upd.decided_by = PV_UNCONST("reproof");
    }
    return store_chunk_update(w->st, &upd, "approved");
}

static json_t *approved_evidence(struct advisor_worker *w, const struct store_chunk *c)
{
    const char *blob = c->approved_evidence[0] != '\0' ? c->approved_evidence : c->evidence;
    char *text = blob[0] != '\0' ? store_blob_get(w->st, blob, NULL) : NULL;
    json_t *j = text != NULL ? json_loads(text, 0, NULL) : NULL;

    free(text);
    return j != NULL ? j : json_object();
}

/* The record of a suspension, for its CONFIG:SUSPENDED event. */
static pv_result reason_add(json_t *reasons, const struct store_chunk *c, const char *why,
                            const char *context)
{
    PV_ENSURE(
        json_array_append_new(
            reasons, json_pack("{s:s,s:s,s:s,s:s,s:s}", "chunk_id", c->id, "rule_name",
                               c->rule_name, "reason", why, "approved_evidence_blob",
                               c->approved_evidence[0] != '\0' ? c->approved_evidence : c->evidence,
                               "context_hash", context)) == 0,
        PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

/* Prove approved chunk 'id' again in the snapshot's context: it stays (its
 * candidate becomes the context, its id joins 'out->chunks') or it is
 * suspended (its id and reason join 'reasons'). */
/* "after the base policy changed: " and the like: what a suspension
 * followed, first in its reason, so that a reviewer sees which change
 * suspended the chunk (cause: "base", "undo ID", "reject ID" or the
 * setting that changed). */
static void cause_words(const char *cause, char *out, size_t len)
{
    if (cause == NULL || cause[0] == '\0') {
        out[0] = '\0';
    } else if (strcmp(cause, "base") == 0) {
        snprintf(out, len, "after the base policy changed: ");
    } else if (strncmp(cause, "undo ", 5) == 0 || strncmp(cause, "reject ", 7) == 0) {
        snprintf(out, len, "after the %s of chunk %.80s: ", cause[0] == 'u' ? "undo" : "rejection",
                 strchr(cause, ' ') + 1);
    } else {
        snprintf(out, len, "after the sandbox's %.80s changed: ", cause);
    }
}

static pv_result reprove_one(struct advisor_worker *w, struct advisor_snapshot *snap,
                             const char *id, const char *cause, struct advisor_composed *out,
                             json_t *reasons)
{
    struct store_chunk c;
    struct advisor_eval e;
    json_t *rule;
    json_t *approved;
    char why[1200] = "";
    char context[65];
    bool keep;
    pv_result r;

    PV_GUARD(store_chunk_get(w->st, snap->sandbox, id, &c));
    rule = json_loads(c.proposed_rule, 0, NULL);
    if (rule == NULL) {
        store_chunk_clear(&c);
        PV_BAIL(PV_ERR_IO);
    }
    /* the gate's checks (containment, envelope) decide submissions only */
    r = advisor_evaluate_reuse(w, snap, c.rule_name, rule, c.review_token, ADVISOR_EVAL_PROOF_ONLY,
                               &e);
    json_decref(rule);
    if (!pv_ok(r)) {
        store_chunk_clear(&c);
        return r;
    }
    approved = approved_evidence(w, &c);
    cause_words(cause, why, sizeof(why));
    keep = advisor_evidence_covered(approved, &e, c.auto_approved, why + strlen(why),
                                    sizeof(why) - strlen(why));
    json_decref(approved);
    memcpy(context, snap->hash, sizeof(context));
    if (keep && e.reused && c.approved_evidence[0] != '\0') {
        r = PV_RESULT_OK; /* nothing to write: the stored evaluation holds */
    } else {
        /* a reused evaluation has nothing new to store: only the legacy
         * approved evidence is filled in */
        r = chunk_after(w, &c, e.reused ? NULL : &e, context, keep ? NULL : why);
    }
    if (pv_ok(r) && keep) {
        r = advisor_snapshot_set_policy(snap, e.candidate);
        e.candidate = NULL;
        if (pv_ok(r) && json_array_append_new(out->chunks, json_string(c.id)) != 0) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
    } else if (pv_ok(r)) {
        r = reason_add(reasons, &c, why, context);
    }
    advisor_eval_clear(&e);
    store_chunk_clear(&c);
    return r;
}

/* One CONFIG:SUSPENDED event per suspended chunk, naming the revision that
 * left it out. */
static pv_result suspended_events(struct advisor_worker *w, const char *sandbox_name,
                                  const json_t *reasons, const struct advisor_composed *out,
                                  const char *cause)
{
    size_t i;
    const json_t *s;
    char suffix[160];

    advisor_event_suffix(suffix, sizeof(suffix), out->rev, out->hash);
    json_array_foreach(reasons, i, s)
    {
        const char *id = json_string_value(json_object_get(s, "chunk_id"));
        const char *why = json_string_value(json_object_get(s, "reason"));
        char line[2048];
        json_t *extra = json_deep_copy(s);

        snprintf(line, sizeof(line),
                 "CONFIG:SUSPENDED [MEDIUM] gateway suspended approved chunk %s after %s: %s [%s]",
                 id, cause, why, suffix);
        PV_ENSURE(extra != NULL, PV_ERR_NOMEM);
        json_object_set_new(extra, "cause", json_string(cause));
        json_object_set_new(extra, "version", json_integer(out->rev));
        json_object_set_new(extra, "hash", json_string(out->hash));
        json_object_set_new(extra, "base_blob", json_string(out->base_blob));
        json_object_set(extra, "chunks", out->chunks);
        PV_GUARD(advisor_event(w->st, sandbox_name, "CONFIG:SUSPENDED", line, extra));
        pv_log_info("OCSF %s", line);
        json_array_append_new(out->suspended, json_string(id));
    }
    return PV_RESULT_OK;
}

/* The effective policy in force when the recomposition began (O): taken
 * from the snapshot before its context becomes the base. */
struct before {
    char *yaml;
    char hash[65];
    struct model_policy *policy;
};

static void before_take(struct advisor_snapshot *snap, struct before *o)
{
    o->yaml = snap->yaml;
    o->policy = snap->policy;
    memcpy(o->hash, snap->hash, sizeof(o->hash));
    snap->yaml = NULL;
    snap->policy = NULL;
}

static void before_clear(struct before *o)
{
    free(o->yaml);
    model_policy_free(o->policy);
    memset(o, 0, sizeof(*o));
}

/* Every approved chunk but 'skip' proved again, in approval order, on the
 * base: the ones that stay compose the snapshot's policy and join
 * 'out->chunks'; the others are suspended and join 'reasons'. */
static pv_result walk(struct advisor_worker *w, struct advisor_snapshot *snap, const char *skip,
                      const char *cause, struct advisor_composed *out, json_t *reasons, char *err,
                      size_t errlen)
{
    json_t *ids = NULL;
    size_t i;
    const json_t *id;
    pv_result r = base_context(w, snap->sandbox, snap, out->base_blob, err, errlen);

    ids = pv_ok(r) ? approved_ids(w, snap->sandbox) : NULL;
    if (pv_ok(r) && ids == NULL) {
        r = pv_fail(PV_ERR_IO, __func__);
    }
    json_array_foreach(ids, i, id)
    {
        if (!pv_ok(r)) {
            break;
        }
        if (skip != NULL && strcmp(json_string_value(id), skip) == 0) {
            continue;
        }
        r = reprove_one(w, snap, json_string_value(id), cause, out, reasons);
    }
    json_decref(ids);
    return r;
}

/* Suspend approved chunk 'id' for 'why' (a widening the walk's coverage
 * test did not see); '*n' counts it. A chunk named twice is suspended
 * once. */
static pv_result suspend_one(struct advisor_worker *w, const struct advisor_snapshot *snap,
                             const char *id, const char *why, json_t *reasons, size_t *n)
{
    struct store_chunk c;
    bool approved;
    pv_result r = PV_RESULT_OK;

    PV_GUARD(store_chunk_get(w->st, snap->sandbox, id, &c));
    approved = strcmp(c.status, "approved") == 0;
    if (approved) {
        r = chunk_after(w, &c, NULL, snap->hash, why);
    }
    if (pv_ok(r) && approved) {
        r = reason_add(reasons, &c, why, snap->hash);
        *n += pv_ok(r) ? 1 : 0;
    }
    store_chunk_clear(&c);
    return r;
}

/* The composed policy proved against the one in force (advisor_widen.c):
 * each chunk that gains authority is suspended and '*again' set. */
static pv_result no_widening(struct advisor_worker *w, const struct advisor_snapshot *snap,
                             const char *cause, const struct before *o,
                             struct advisor_composed *out, json_t *reasons, bool *again, char *err,
                             size_t errlen)
{
    struct advisor_widen_in in = {.sandbox = snap->sandbox,
                                  .cause = cause,
                                  .before_yaml = o->yaml,
                                  .before_hash = o->hash,
                                  .before = o->policy,
                                  .now = snap->policy,
                                  .now_yaml = snap->yaml,
                                  .now_hash = snap->hash,
                                  .chunks = out->chunks};
    struct model_policy *base = NULL;
    json_t *culprits;
    size_t i;
    const json_t *x;
    char blob[65];
    size_t n = 0;
    pv_result r = PV_RESULT_OK;

    *again = false;
    if (json_array_size(out->chunks) == 0 || strcmp(o->hash, snap->hash) == 0 ||
        o->policy == NULL) {
        return PV_RESULT_OK;
    }
    base = base_policy(w, snap->sandbox, blob, err, errlen, &r);
    culprits = base != NULL ? json_array() : NULL;
    if (base != NULL && culprits == NULL) {
        r = pv_fail(PV_ERR_NOMEM, __func__);
    }
    in.base = base;
    r = culprits != NULL ? advisor_widening(w, &in, culprits) : r;
    json_array_foreach(culprits, i, x)
    {
        if (pv_ok(r)) {
            char why[2048];

            cause_words(cause, why, sizeof(why));
            snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s",
                     json_string_value(json_object_get(x, "reason")) != NULL
                         ? json_string_value(json_object_get(x, "reason"))
                         : "widened");
            r = suspend_one(w, snap, json_string_value(json_object_get(x, "chunk_id")), why,
                            reasons, &n);
        }
    }
    /* every pass that composes again has suspended a chunk: it ends */
    *again = n > 0;
    if (pv_ok(r) && n == 0 && json_array_size(culprits) > 0) {
        r = pv_fail(PV_ERR_INTERNAL, "a widening named no approved chunk");
    }
    json_decref(culprits);
    model_policy_free(base);
    return r;
}

/* The revision (when the policy moved) and the suspensions' events. */
static pv_result finish(struct advisor_worker *w, const struct store_sandbox *sb, const char *cause,
                        const struct advisor_snapshot *snap, struct advisor_composed *out,
                        const json_t *reasons)
{
    struct store_revision cur;

    PV_GUARD(store_rev_latest(w->st, sb->id, &cur));
    out->rev = cur.rev;
    memcpy(out->hash, snap->hash, sizeof(out->hash));
    if (strcmp(cur.hash, snap->hash) != 0) {
        pv_result r = advisor_revision_write(w, sb->id, snap->policy, snap->yaml, cause, &out->rev,
                                             out->hash);
        if (!pv_ok(r)) {
            store_revision_clear(&cur);
            return r;
        }
    }
    store_revision_clear(&cur);
    return suspended_events(w, sb->name, reasons, out, cause);
}

/* One composition from the base, then its proof against the policy in
 * force; '*again' when that proof suspended a chunk (compose once more),
 * else the revision and the events are written. */
static pv_result compose_once(struct advisor_worker *w, const struct store_sandbox *sb,
                              const char *skip, const char *cause, struct advisor_composed *out,
                              json_t *reasons, bool *again, char *err, size_t errlen)
{
    struct advisor_snapshot snap;
    struct before o;
    pv_result r;

    *again = false;
    memset(&o, 0, sizeof(o));
    PV_ENSURE(json_array_clear(out->chunks) == 0, PV_ERR_NOMEM);
    PV_GUARD(advisor_snapshot_take(w, sb->name, &snap));
    before_take(&snap, &o);
    r = walk(w, &snap, skip, cause, out, reasons, err, errlen);
    if (pv_ok(r)) {
        r = no_widening(w, &snap, cause, &o, out, reasons, again, err, errlen);
    }
    if (pv_ok(r) && !*again) {
        r = finish(w, sb, cause, &snap, out, reasons);
    }
    before_clear(&o);
    advisor_snapshot_clear(&snap);
    return r;
}

pv_result advisor_recompose(struct advisor_worker *w, int64_t sandbox, const char *skip,
                            const char *cause, struct advisor_composed *out, char *err,
                            size_t errlen)
{
    struct store_sandbox sb;
    json_t *reasons = json_array();
    bool again = true;
    pv_result r = PV_RESULT_OK;

    memset(out, 0, sizeof(*out));
    out->chunks = json_array();
    out->suspended = json_array();
    if (reasons == NULL || out->chunks == NULL || out->suspended == NULL) {
        json_decref(reasons);
        PV_BAIL(PV_ERR_NOMEM);
    }
    r = store_sandbox_get_id(w->st, sandbox, &sb);
    if (!pv_ok(r)) {
        json_decref(reasons);
        return r;
    }
    /* each pass that composes again has suspended at least one chunk */
    while (pv_ok(r) && again) {
        r = compose_once(w, &sb, skip, cause, out, reasons, &again, err, errlen);
    }
    store_sandbox_clear(&sb);
    json_decref(reasons);
    return r;
}

/* ===========================================================================
 * Inputs that change without a new policy: credentials, boundaries
 * ========================================================================= */

pv_result advisor_reprove_sandbox(struct advisor_worker *w, int64_t sandbox, const char *cause,
                                  json_t *suspended)
{
    struct advisor_composed comp;
    char err[1024] = "";
    pv_result r = advisor_recompose(w, sandbox, NULL, cause, &comp, err, sizeof(err));

    if (!pv_ok(r) && err[0] != '\0') {
        pv_log_warnx("re-proof after %s: %s", cause, err);
    }
    if (pv_ok(r) && suspended != NULL) {
        json_array_extend(suspended, comp.suspended);
    }
    advisor_composed_clear(&comp);
    return r;
}

pv_result advisor_reprove_unbounded(struct advisor_worker *w, const char *cause, json_t *suspended)
{
    /* a sandbox's own boundary wins over the global one */
    struct advisor_sandboxes u;
    pv_result r = advisor_sandboxes_list(w->st, true, &u);

    for (size_t i = 0; pv_ok(r) && i < u.n; i++) {
        r = advisor_reprove_sandbox(w, u.ids[i], cause, suspended);
    }
    advisor_sandboxes_free(&u);
    return r;
}
