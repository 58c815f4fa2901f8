/* SPDX-License-Identifier: Apache-2.0 */
/* life.h - the lifecycle of a proposal (advisor/life/), a C API
 *
 * Parsed arguments in, result structs out (docs/architecture.md#advisor):
 * evaluation (advisor_eval.c, its policy diff advisor_diff.c), the
 * envelope (advisor_envelope.c), the proof that a removal never widens
 * (advisor_widen.c), a policy's peers (advisor_resolve.c), revision
 * writes (advisor_revision.c), re-proof (advisor_reprove.c), submission
 * (advisor_submit.c), decisions (advisor_decide.c), reading
 * (advisor_view.c), suggestions (advisor_suggest.c) and the steps they
 * share (advisor_chunk.c, life_int.h). Calls core/ and the store; makes no httpd call.
 */
#ifndef ADVISOR_LIFE_H
#define ADVISOR_LIFE_H

#include "advisor/core/core.h"

/* ===========================================================================
 * The auto-approval envelope (advisor_envelope.c)
 * ========================================================================= */

struct advisor_envelope {
    bool on;           /* auto_approval_envelope (default true) */
    bool binary_globs; /* the clauses an operator relaxed (default false) */
    bool host_wildcards;
    bool uninspected;
    bool access_presets;
    bool new_ports;
};
/* The envelope in force for 'sandbox' (settings, global wins). */
void advisor_envelope_get(struct store *st, const char *sandbox, struct advisor_envelope *out);
/* Is every grant of a proposal (the prover's 'grants', with their breadth
 * marks) and its rule within the envelope, given the policy in force? When
 * not, a note naming the clause and the grant into 'note'. */
bool advisor_envelope_within(const struct advisor_envelope *env, const struct model_policy *current,
                             const json_t *rule, const json_t *grants, char *note, size_t len);

/* ===========================================================================
 * Evaluation (advisor_eval.c)
 * ========================================================================= */

/* What evaluation reads: the current effective policy and the sandbox's
 * inputs, captured once per operation. */
struct advisor_snapshot {
    struct advisor_worker *w;
    int64_t sandbox;
    char *name;
    int64_t rev;   /* current effective revision (0: none yet) */
    char *yaml;    /* its canonical YAML */
    char hash[65]; /* its policy hash */
    char blob[65]; /* its blob digest */
    struct model_policy *policy;
    char *yaml_json;   /* 'yaml' as a JSON string literal (the prover's body) */
    char *credentials; /* credentials document; "" none */
    char *boundary;    /* auto-approval boundary (sandbox, else global); "" none */
};
pv_result advisor_snapshot_take(struct advisor_worker *w, const char *sandbox,
                                struct advisor_snapshot *out) PV_WUR;
void advisor_snapshot_clear(struct advisor_snapshot *s);
/* The policy diff of an evaluation (advisor_diff.c, docs/advisor.md#diff):
 * the line diff of two canonical YAML texts in unified form, hunks of
 * ' '/'-'/'+' lines with 3 lines of context, each headed "@@ PATH @@" (the
 * keys enclosing its first change). "" when they are equal; NULL when out
 * of memory. New string. */
char *advisor_policy_diff(const char *old_yaml, const char *new_yaml);
/* Make 'p' (stolen, also on failure) the snapshot's policy: its YAML, hash,
 * blob digest and escaped text follow; the sandbox's credentials and
 * boundary stay. For evaluating in another context than the latest
 * revision (a recomposition, advisor_reprove.c). */
pv_result advisor_snapshot_set_policy(struct advisor_snapshot *s, struct model_policy *p) PV_WUR;

struct advisor_eval {
    struct model_policy *candidate;
    char *candidate_yaml;
    char candidate_hash[65];
    char *validation_result;
    char *application_error; /* "" when none */
    char *security_notes;
    char *review_token;
    char *diff;
    json_t *evidence;     /* {"prover": answer, "boundary": check answer, "diff": ...} */
    bool empty;           /* verdict empty and nothing else stands in the way */
    bool within_boundary; /* true when no boundary or the check said within */
    bool reused;          /* advisor_evaluate_reuse: the known token matched; not proved */
    bool nomem;           /* application_error is our memory, not the proposal's */
    bool contained;       /* the candidate allows nothing the policy in force does not */
    bool within_envelope; /* every grant within the auto-approval envelope */
    const char *prover_version;
};
/* Does evaluation 'e' add nothing to the policy it was made against (proved,
 * verdict empty, contained)? Such a rule is answered already_allowed, on
 * submission and on approval alike (docs/advisor.md#reproof). */
bool advisor_eval_adds_nothing(const struct advisor_eval *e);
/* Evaluate adding rule 'name' = 'rule' (JSON) to the snapshot. Never fails
 * for a bad proposal or an unreachable prover (that goes into
 * application_error); fails only for out-of-memory. */
pv_result advisor_evaluate(struct advisor_worker *w, const struct advisor_snapshot *snap,
                           const char *name, const json_t *rule, struct advisor_eval *out) PV_WUR;
/* The same, but when the inputs (context, candidate, credentials,
 * boundary) are exactly those named by 'known_token' (a stored review
 * token), nothing is proved: 'reused' is set, the candidate and token are
 * filled, the evidence holds only the diff. */
/* 'flags': ADVISOR_EVAL_PROOF_ONLY skips what only a submission's gate
 * reads - the containment check (one more prover call, /v1/check) and the
 * envelope (settings reads) - for a re-proof, which holds the new evidence
 * against the approved one and reads neither: 'contained' and
 * 'within_envelope' stay false and the evidence has no "containment" or
 * "envelope" member. */
#define ADVISOR_EVAL_PROOF_ONLY 1u
pv_result advisor_evaluate_reuse(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                 const char *name, const json_t *rule, const char *known_token,
                                 unsigned flags, struct advisor_eval *out) PV_WUR;
/* Evaluate rule 'name' = 'rule' as a narrowing of evaluation 'bound'
 * (borrowed) of another rule in the same snapshot (advisor_suggest.c):
 * before anything is proved its candidate must be within bound's
 * (POST /v1/check, bound's candidate as the boundary); when it is not, or
 * the check cannot say, application_error says so and nothing else is
 * asked. When bound's candidate is within the operator's boundary, so is
 * this one (containment is transitive): the boundary is not asked again. */
pv_result advisor_evaluate_within(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                  const char *name, const json_t *rule,
                                  const struct advisor_eval *bound,
                                  struct advisor_eval *out) PV_WUR;
/* Does the prover prove that policy 'candidate' (YAML) allows a request
 * policy 'boundary' does not (POST /v1/check answers exceeds)? False when
 * it is within or the check could not say. */
bool advisor_eval_exceeds(struct advisor_worker *w, const char *candidate, const char *boundary);
void advisor_eval_clear(struct advisor_eval *e);
/* Recompute a sandbox's effective policy from its latest base revision and
 * its approved chunks (approval order), skipping chunk 'skip' (may be
 * NULL), without proving anything (reconcile's view). New policy, or NULL
 * with a message in 'err'. */
struct model_policy *advisor_compose(struct advisor_worker *w, int64_t sandbox, const char *skip,
                                     char *err, size_t errlen);

/* A narrowed suggestion for a chunk that is not approvable as it is
 * (advisor_suggest.c, docs/advisor.md#suggestion): built from the
 * sandbox's recent denials and the prover's witnesses, proved against the
 * same snapshot, and put into e->evidence as "suggestion": {rule,
 * review_token, validation_result, grants, candidate_hash} only when that
 * proof makes it approvable. Nothing otherwise. */
void advisor_suggest(struct advisor_worker *w, const struct advisor_snapshot *snap,
                     const char *name, const json_t *rule, struct advisor_eval *e);

/* ===========================================================================
 * Approvals that stay proven (advisor_reprove.c, docs/advisor.md#reproof)
 * ========================================================================= */

/* What a recomposition wrote. */
struct advisor_composed {
    int64_t rev;        /* the effective revision now (new or unchanged) */
    char hash[65];      /* its policy hash */
    char base_blob[65]; /* the base revision it starts from */
    json_t *chunks;     /* the approved chunk ids composed, in order */
    json_t *suspended;  /* the chunk ids this recomposition suspended */
};
void advisor_composed_clear(struct advisor_composed *c);
/* Recompose a sandbox's effective policy from its latest base revision and
 * its approved chunks, leaving out chunk 'skip' (may be NULL), and prove
 * every approved chunk again in its new context: one whose evidence grows
 * (a finding or a grant its approval did not cover, a boundary it now
 * crosses, a proof that fails) is suspended and left out, with a
 * CONFIG:SUSPENDED event. Writes a revision when the policy changed.
 * Inside a transaction, holding the sandbox's stripe. 'err' is set when
 * the base itself cannot be composed. */
pv_result advisor_recompose(struct advisor_worker *w, int64_t sandbox, const char *skip,
                            const char *cause, struct advisor_composed *out, char *err,
                            size_t errlen) PV_WUR;
/* The sandbox's credentials or boundary changed (already written in this
 * transaction): prove its approved chunks again; the ids it suspended are
 * appended to 'suspended' (may be NULL). */
pv_result advisor_reprove_sandbox(struct advisor_worker *w, int64_t sandbox, const char *cause,
                                  json_t *suspended) PV_WUR;
/* The global boundary changed: the same for every sandbox without a
 * boundary of its own. */
pv_result advisor_reprove_unbounded(struct advisor_worker *w, const char *cause,
                                    json_t *suspended) PV_WUR;
/* A removal never widens (advisor_widen.c): what a recomposition proves
 * the policy it composed against. All borrowed. */
struct advisor_widen_in {
    int64_t sandbox;
    const char *cause;       /* "undo <id>", "base", ... */
    const char *before_yaml; /* the effective policy in force, O */
    const char *before_hash;
    const struct model_policy *before; /* O, compiled */
    const struct model_policy *base;   /* the base it starts from, peers resolved */
    const struct model_policy *now;    /* the recomposed policy, N, compiled */
    const char *now_yaml;
    const char *now_hash;
    const json_t *chunks; /* the approved chunk ids N composes, in order */
};
/* Does N grant a request that neither O nor the base grants? Each kept
 * chunk that gains one is appended to 'culprits' as {chunk_id, reason}
 * (the witness); when it cannot be decided, every kept chunk is. Empty:
 * N is within. Needs no transaction of its own; asks the prover. */
pv_result advisor_widening(struct advisor_worker *w, const struct advisor_widen_in *in,
                           json_t *culprits) PV_WUR;
/* {"base_blob", "chunks"} of the sandbox's current composition, read in the
 * current transaction (for the records of revisions written elsewhere). */
json_t *advisor_composition(struct advisor_worker *w, int64_t sandbox);
/* Is the evidence of a new evaluation 'e' covered by 'approved' (the
 * evidence an approval rested on)? When not, why into 'why'. */
bool advisor_evidence_covered(const json_t *approved, const struct advisor_eval *e,
                              bool auto_approved, char *why, size_t len);

/* ===========================================================================
 * The lifecycle (advisor_submit.c, advisor_decide.c, advisor_view.c) - a C
 * API: parsed arguments in, result structs out; each advisor_route_* beside
 * it (advisor_routes_chunk.c) is its HTTP mapping
 * ========================================================================= */

/* Store 'p' (its canonical YAML when given) as the sandbox's next
 * effective revision; its number and hash out. Inside a transaction. */
pv_result advisor_revision_write(struct advisor_worker *w, int64_t sandbox,
                                 const struct model_policy *p, const char *yaml_or_null,
                                 const char *cause, int64_t *rev, char hash[65]) PV_WUR;
/* Store an evaluation's evidence document as a blob ('out' "" when none). */
pv_result advisor_evidence_put(struct advisor_worker *w, const struct advisor_eval *e,
                               char out[65]) PV_WUR;

/* A proposal as the lifecycle takes it, parsed once by its caller (the
 * route, the mapper): the model's reading (names, intent, validation) and
 * the JSON form whose operations[i].addRule.rule each chunk keeps. */
struct model_proposal;
struct model_diags;
struct advisor_proposal {
    struct model_proposal *model;
    json_t *doc;
};
/* Parse a request body. PV_ERR_POLICY (or PV_ERR_NOMEM) with the reasons
 * in 'd' when the model refuses it; PV_ERR_PARSE when it is not one JSON
 * object (the model also reads YAML). */
pv_result advisor_proposal_parse(const char *body, size_t len, struct advisor_proposal *out,
                                 struct model_diags *d) PV_WUR;
void advisor_proposal_clear(struct advisor_proposal *p);

/* The mechanistic dedup key: host|port|binary, and for a graphql or
 * websocket endpoint also |protocol|path (its proposals are scoped by the
 * endpoint's path, so two such endpoints of one host are two chunks). The
 * mapper groups its denials by it (advisor_submit.c). */
void advisor_dedup_key(const char *host, int64_t port, const char *binary, const char *protocol,
                       const char *path, char *out, size_t len);

/* What a submission did, operation by operation. */
struct advisor_submission {
    int accepted;       /* chunks stored (pending, or approved at once) */
    int rejected;       /* operations refused */
    json_t *ids;        /* the accepted chunk ids, in order */
    json_t *reasons;    /* the refused operations' reasons (strings) */
    json_t *already;    /* [{rule_name, covered_by, detail}]: added nothing, not stored */
    json_t *operations; /* per operation {rule_name, outcome: accepted | rejected |
                         * already_allowed, chunk_id | reason} */
    bool incomplete;    /* a list above lost an entry (out of memory): the
                         * answer would misreport what was stored */
};
pv_result advisor_submission_init(struct advisor_submission *s) PV_WUR;
void advisor_submission_clear(struct advisor_submission *s);
/* What the mapper knows of a mechanistic chunk (a NULL meta takes the
 * defaults: confidence 0.5/0.75, one hit, now, stage mechanistic/agent). */
struct advisor_submit_meta {
    double confidence;
    int64_t hits;
    int64_t first_seen_ms;
    int64_t last_seen_ms;
    const char *stage;
};
/* May 'sandbox' submit at all? PV_ERR_NOTFOUND: no such sandbox;
 * PV_ERR_USAGE: agent_policy_proposals_enabled is off. */
pv_result advisor_submit_admit(struct advisor_worker *w, const char *sandbox) PV_WUR;
/* Submit 'p' for 'sandbox' in 'mode' ("mechanistic", anything else is
 * agent_authored): each operation is checked, evaluated, stored as a
 * pending chunk, approved at once in auto mode when the gate allows, or
 * answered already_allowed; '*out' (initialised here, also on failure;
 * advisor_submission_clear) says which. Fails as advisor_submit_admit
 * does, or when the store fails (PV_ERR_IO, PV_ERR_CONFLICT, NOMEM). */
pv_result advisor_submit(struct advisor_worker *w, const char *sandbox, const char *mode,
                         const struct advisor_submit_meta *meta, const struct advisor_proposal *p,
                         struct advisor_submission *out) PV_WUR;
/* Show, wait and list read one chunk view (advisor_view.c): 'reviewer'
 * (the admin token) adds the reviewer-only fields (evidence,
 * security_notes, rationale, the proposed rule, ...); otherwise the agent
 * view a sandbox's token may read. wait is the agent view always. The view
 * (a new reference) into out->json; a refusal into out->refusal and
 * out->detail (enum advisor_refusal below). */
/* Why the lifecycle refused (a decision, a view). */
enum advisor_refusal {
    ADVISOR_DECIDED,                  /* done: chunk_id, status, policy_* */
    ADVISOR_REFUSED_NOT_FOUND,        /* no such sandbox */
    ADVISOR_REFUSED_NO_CHUNK,         /* no such chunk in the sandbox */
    ADVISOR_REFUSED_CONFLICT,         /* a concurrent change won; refetch */
    ADVISOR_REFUSED_PRECONDITION,     /* the chunk's state does not allow it */
    ADVISOR_REFUSED_STALE,            /* the token or the inputs changed; review again */
    ADVISOR_REFUSED_INVALID,          /* the chunk can never be approved as it is */
    ADVISOR_REFUSED_INTERNAL,         /* out of memory, the store failed */
    ADVISOR_REFUSED_BAD_REQUEST,      /* an argument out of its range */
    ADVISOR_REFUSED_INVALID_PROPOSAL, /* the model refuses the rule */
    ADVISOR_REFUSED_EXISTS,           /* the record already exists */
    ADVISOR_REFUSED_INVALID_JSON,     /* the body is not the JSON object asked for */
    ADVISOR_REFUSED_INVALID_OPENAPI,  /* a tool server's document is no OpenAPI 3 */
    ADVISOR_REFUSED_TOO_MANY_SERVERS, /* the sandbox has its most tool servers */
    ADVISOR_REFUSED_UNBACKED,         /* a revision whose text cannot be read */
    ADVISOR_REFUSED_DISCOVERY,        /* a tool server's document could not be read */
};

struct advisor_view {
    json_t *json;
    enum advisor_refusal refusal; /* ADVISOR_DECIDED (0) when read */
    char detail[2300];
};
void advisor_view_clear(struct advisor_view *v);
/* A store failure 'res' as a refusal of 'v': "WHAT not found"
 * (ADVISOR_REFUSED_NOT_FOUND), "WHAT already exists" (_EXISTS), else
 * _INTERNAL ("the store failed; see the advisor's log"). Returns 'res'. */
pv_result advisor_view_store_error(struct advisor_view *v, pv_result res, const char *what);
/* The pv_result of a refusal kind: ok for ADVISOR_DECIDED, else its error
 * (PV_ERR_NOTFOUND, _CONFLICT, _EXISTS, _USAGE for the caller's, _INTERNAL
 * for the server's own). */
pv_result advisor_refusal_result(enum advisor_refusal why) PV_WUR;
/* Refuse 'v' with 'why' and the detail (printf); returns
 * advisor_refusal_result(why). */
pv_result advisor_view_refuse(struct advisor_view *v, enum advisor_refusal why, const char *fmt,
                              ...) __attribute__((format(printf, 3, 4)));
pv_result advisor_chunk_get(struct advisor_worker *w, const char *sandbox, const char *id,
                            bool reviewer, struct advisor_view *out) PV_WUR;
/* Long-poll until chunk 'id' leaves pending or 'timeout_s' passes
 * ("timed_out": true then); 'hold' (borrowed, may be NULL) is the caller's
 * slot, which also ends the wait when the client goes away. */
pv_result advisor_chunk_wait(struct advisor_worker *w, const char *sandbox, const char *id,
                             unsigned timeout_s, struct advisor_hold *hold,
                             struct advisor_view *out) PV_WUR;
/* {"sandbox", "chunks": [...]}, 'status' (may be NULL) one of pending,
 * approved, rejected, suspended. */
pv_result advisor_chunk_list(struct advisor_worker *w, const char *sandbox, const char *status,
                             bool reviewer, struct advisor_view *out) PV_WUR;
/* ---------------------------------------------------------------------------
 * A reviewer's decision on one chunk (advisor_decide.c): the chunk id, the
 * outcome in 'out', PV_RESULT_OK when decided. A refusal says why
 * (out->refusal, out->detail; the result is PV_ERR_NOTFOUND, _CONFLICT,
 * _USAGE or _INTERNAL); the routes (advisor_routes_chunk.c) map it to a
 * status and an error name.
 * ------------------------------------------------------------------------- */
struct advisor_decision {
    enum advisor_refusal refusal;
    char detail[2300];      /* why, when refused */
    char chunk_id[65];      /* decided: the chunk */
    const char *status;     /* decided: its new status (static) */
    int64_t policy_version; /* decided: the revision written, 0 when none */
    char policy_hash[65];   /* its hash */
    bool narrowed;          /* decided: the narrowed suggestion was approved */
    int64_t cleared;        /* advisor_clear: the pending chunks deleted */
};
/* Approve chunk 'id' whose evaluation the reviewer read ('token', its
 * review token), proved again against the policy of now. */
pv_result advisor_approve(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *token, struct advisor_decision *out) PV_WUR;
/* Approve the chunk's narrowed suggestion instead of its rule ('token' the
 * suggestion's review token; docs/advisor.md#suggestion). */
pv_result advisor_approve_suggestion(struct advisor_worker *w, const char *sandbox, const char *id,
                                     const char *token, struct advisor_decision *out) PV_WUR;
/* Reject a pending, suspended or approved chunk ('reason' may be NULL; an
 * approved chunk's grant leaves the policy). */
pv_result advisor_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                         const char *reason, struct advisor_decision *out) PV_WUR;
/* Undo an approval: the chunk is pending again, its grant gone. */
pv_result advisor_undo(struct advisor_worker *w, const char *sandbox, const char *id,
                       struct advisor_decision *out) PV_WUR;
/* A decision as JSON ({chunk_id, status, policy_version, policy_hash,
 * narrowed}); advisor_reply_decision (http.h) answers with it. */
json_t *advisor_decision_json(const struct advisor_decision *d);
/* Replace pending chunk 'id''s rule with 'rule' (borrowed) and evaluate it
 * again; the chunk's reviewer view into out->json. */
pv_result advisor_edit(struct advisor_worker *w, const char *sandbox, const char *id,
                       const json_t *rule, struct advisor_view *out) PV_WUR;
/* Approve every pending chunk of the sandbox ('approvals' NULL: each on its
 * stored token; else a list of {chunk_id, review_token}), skipping those with
 * security notes unless 'flagged'. The report into out->json: {approved,
 * skipped: [{chunk_id, reason}], approved_chunks, skipped_chunks}. */
pv_result advisor_approve_all(struct advisor_worker *w, const char *sandbox,
                              const json_t *approvals, bool flagged,
                              struct advisor_view *out) PV_WUR;
/* Delete the sandbox's pending chunks (their count into out->cleared). */
pv_result advisor_clear(struct advisor_worker *w, const char *sandbox,
                        struct advisor_decision *out) PV_WUR;
/* {"sandbox", "history": [...]}: every decision on the sandbox's chunks, in
 * time order (advisor_view.c), each entry written from the chunk's view for
 * the caller: the agent view unless 'reviewer' (docs/security.md#agent-view). */
pv_result advisor_history(struct advisor_worker *w, const char *sandbox, bool reviewer,
                          struct advisor_view *out) PV_WUR;
/* A new base policy 'p' (borrowed; the operator's, parsed by the route):
 * recompose, prove the approved chunks again, reconcile pending chunks. The
 * answer {base_revision, policy_version, policy_hash, suspended} into
 * out->json. */
pv_result advisor_base_set(struct advisor_worker *w, const char *sandbox,
                           const struct model_policy *p, const char *cause,
                           struct advisor_view *out) PV_WUR;

/* Peer sandboxes. Resolve every target_sandbox endpoint of 'p' from the
 * store's registered addresses (err set on failure; advisor_resolve.c). */
pv_result advisor_resolve_peers(struct advisor_worker *w, struct model_policy *p, char *err,
                                size_t errlen) PV_WUR;
/* A JSON list of addresses 'text' (NULL: "[]") as a NULL-terminated array
 * of new strings (NULL when out of memory; advisor_addrs_free), and as a
 * new JSON reference (an empty list when it does not parse). */
char **advisor_addrs_parse(const char *text);
void advisor_addrs_free(char **a);
json_t *advisor_addrs_json(const char *text);

#endif
