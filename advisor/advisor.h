/* SPDX-License-Identifier: Apache-2.0 */
/* advisor.h - proviso-advisor, the gateway: internal API of advisor/
 *
 * The advisor turns proposals into decisions and decisions into the policy a
 * sandbox's proxy enforces (docs/advisor.md). Files, one concept each:
 *
 *   store.h, store_sqlite.c  durable state behind a narrow interface; one
 *                            file per table (store_sandbox.c, store_revision.c,
 *                            store_chunk.c, store_event.c; store_int.h)
 *   advisor_util.c           ids, clocks, digests, small JSON helpers
 *   advisor_settings.c       the settings keys, their validation and scopes
 *   advisor_rule.c           reading a proposed rule: summary, security
 *                            notes, always-blocked destinations, event text
 *   advisor_prover.c         the prover client (libcurl, kept-alive)
 *   advisor_pool.c           the provers it sends to: choice, health, metrics
 *   advisor_eval.c           evaluating a chunk: merge, validate, prove, token
 *   advisor_submit.c         the lifecycle (a C API, docs/architecture.md#advisor):
 *                            a parsed proposal becomes chunks
 *   advisor_decide.c         a reviewer's decisions, a new base policy
 *   advisor_view.c           reading chunks: show, wait, list, history
 *   advisor_chunk.c          the steps they share (advisor_int.h)
 *   advisor_events.c         the decision events (OCSF shorthand + JSON)
 *   advisor_peers.c          peer sandboxes: registered addresses,
 *                            target_sandbox composition, pushing dependents
 *   advisor_tools.c          host-side tool servers; the tools a sandbox's
 *                            identity may call (prover /v1/discover)
 *   advisor_mapper.c         the mechanistic mapper: proxies' denials in,
 *                            narrow mechanistic proposals out
 *   advisor_routes.c         the HTTP API on libhttpd: parse, call the
 *                            lifecycle, map its result (advisor_routes_chunk.c,
 *                            advisor_routes_sandbox.c)
 *   advisor_api.c            /openapi.json
 *   advisor_ui.c             /ui/: the reviewer inbox's static files
 *   advisor_child.c          running proviso-prover as a child process
 *   advisor_main.c           the process
 *
 * Invariants: the advisor never links Z3 (proofs go over HTTP); every state
 * change commits together with the event that records it; a chunk is only
 * ever approved automatically on a prover verdict of `empty` computed
 * against exactly the effective policy it is merged into; every status
 * write is compare-and-set.
 */
#ifndef ADVISOR_H
#define ADVISOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/pv.h"
#include "common/pv_settings.h"
#include "httpd/httpd.h"

struct store;
struct store_revision;
struct store_chunk;
struct store_group;
struct model_policy;
struct model_ip;
struct advisor_ranges;

/* ===========================================================================
 * Process-wide state
 * ========================================================================= */

#define ADVISOR_DEFAULT_PORT 8788
#define ADVISOR_LOCK_STRIPES 64u

struct advisor_config {
    char data_dir[1024];
    /* --store: "" the SQLite file in data_dir, else a store_open location
     * (sqlite:FILE or a postgresql:// URI) */
    char store[1024];
    struct httpd_config http;
    bool test_allow_loopback;
    unsigned prover_timeout_ms; /* per HTTP call to the prover */
    unsigned grace_ms;          /* SIGTERM drain bound */
    unsigned mapper_flush_ms;   /* how often the mapper proposes */
    unsigned policy_longpolls;  /* the proxies' long-poll budget; 0: W/2 (#wait) */
};

struct advisor_tokens; /* sandbox token digests -> sandbox id */
struct advisor_mapper; /* advisor_mapper.c */
struct advisor_recent; /* advisor_recent.c */

/* What a long-poll waits for. Each kind has its own budget of worker
 * threads, so no kind can refuse another (docs/advisor.md#wait). */
enum advisor_hold_kind {
    ADVISOR_HOLD_POLICY, /* GET .../policy?after=REV: a proxy's policy sync */
    ADVISOR_HOLD_WAIT,   /* GET .../proposals/ID/wait: an agent */
    ADVISOR_HOLD_EVENTS, /* GET /v1/events?wait=S: the reviewer inbox */
};
#define ADVISOR_HOLD_KINDS 3

/* One long-poll in progress: on the handler's stack, linked into the
 * advisor's list (newest first) between advisor_hold_begin and _end. */
struct advisor_hold {
    struct advisor_hold *next;
    const struct httpd_req *rq; /* borrowed: whose client is watched */
    enum advisor_hold_kind kind;
    int principal;     /* the caller (0: the admin token) */
    bool superseded;   /* a newer policy long-poll of the caller took its place */
    const char *ended; /* why it ended early ("client_gone", "superseded"), or NULL */
};

struct advisor {
    struct advisor_config cfg;
    struct httpd_token admin;
    struct advisor_tokens *tokens;
    /* Submissions commit through one writer (one fsync per group). */
    struct store_group *group;
    /* The provers proofs go to (advisor_pool.c): the child or --prover URLs. */
    struct advisor_pool *pool;
    /* Decisions on one sandbox are serialised by its stripe. */
    pthread_mutex_t stripes[ADVISOR_LOCK_STRIPES];
    /* Long-polls wait here for any committed change. */
    pthread_mutex_t change_mu;
    pthread_cond_t change_cv;
    uint64_t changes;
    bool stopping;
    /* Long-polls in progress and their count per kind, under change_mu. */
    struct advisor_hold *holds;
    unsigned held[ADVISOR_HOLD_KINDS];
    struct advisor_mapper *mapper; /* NULL: denials are refused */
    struct advisor_recent *recent; /* the denials the mapper saw; NULL: none kept */
    struct advisor_listen *listen; /* NULL: no other replica (SQLite) */
    struct httpd_metrics *metrics; /* GET /metrics (httpd_metrics.c) */
};

/* Per worker thread: its store connection and prover client. */
struct advisor_prover;
struct advisor_worker {
    struct advisor *a;
    struct store *st;
    struct advisor_prover *pc;
    /* The last effective policy this thread parsed, by hash: a snapshot
     * takes it (parsing only on a miss) and gives it back when cleared. */
    struct model_policy *pol_cache;
    char *pol_json; /* its YAML as a JSON string literal, handed over alike */
    char pol_hash[65];
    char pol_blob[65]; /* the blob it was parsed from: a hit needs both */
};

struct advisor_worker *advisor_worker_new(struct advisor *a);
void advisor_worker_free(struct advisor_worker *w);

/* Wake every long-poll (after a commit). */
void advisor_changed(struct advisor *a);
/* Wait until advisor_changed() moves past 'seen' or 'deadline_ms' (wall
 * clock) passes; returns the new counter. */
uint64_t advisor_wait_change(struct advisor *a, uint64_t seen, int64_t deadline_ms);
uint64_t advisor_change_count(struct advisor *a);
/* True once SIGTERM arrived: long-polls answer now instead of waiting. */
bool advisor_stopping(struct advisor *a);

/* The most policy_longpolls may be for 'workers' W: W - W/4 - W/8 - 1,
 * so that the other long-polls' budgets and one worker for short requests
 * remain (docs/advisor.md#wait). */
unsigned advisor_policy_longpolls_max(unsigned workers);
/* Long-poll budgets (docs/advisor.md#wait), from the worker count W:
 * policy long-polls W/2, /wait W/4 and event waits W/8 (each at least 1).
 * A sandbox token may hold ADVISOR_POLICY_SHARE policy long-polls and a
 * quarter of the /wait budget (at least 1); the admin token has no share. */
#define ADVISOR_POLICY_SHARE 2u
unsigned advisor_hold_cap(const struct advisor *a, enum advisor_hold_kind kind);
unsigned advisor_hold_share(const struct advisor *a, enum advisor_hold_kind kind);
/* Register 'h' (borrowed until advisor_hold_end) as a long-poll of 'kind'
 * for the caller of 'rq' (borrowed). Returns 0 when it holds a slot, 503
 * when the kind's budget is full, 429 when the caller holds its share of
 * /wait. A sandbox's policy long-poll is refused only when the budget is
 * full, the sandbox holds none and no sandbox holds two: past the share or
 * the budget it takes the place of the sandbox's oldest one, and a sandbox
 * holding none takes that of another sandbox's second; the one replaced
 * answers at once. So a proxy always gets in while the sandboxes number at
 * most the policy budget, whatever its agent (same token) holds. */
unsigned advisor_hold_begin(struct advisor *a, struct advisor_hold *h, enum advisor_hold_kind kind,
                            const struct httpd_req *rq) PV_WUR;
/* Give the slot back. */
void advisor_hold_end(struct advisor *a, struct advisor_hold *h);
/* advisor_wait_change for a held long-poll ('h' may be NULL: a plain
 * wait), which also ends within ADVISOR_HOLD_CHECK_MS when the client went
 * away or the hold was superseded: then false, with h->ended saying why,
 * and the caller answers at once. */
#define ADVISOR_HOLD_CHECK_MS 250
bool advisor_hold_wait(struct advisor *a, struct advisor_hold *h, uint64_t seen,
                       int64_t deadline_ms);
pthread_mutex_t *advisor_stripe(struct advisor *a, int64_t sandbox);

/* Sandbox tokens (advisor_util.c). */
struct advisor_tokens *advisor_tokens_new(void);
void advisor_tokens_free(struct advisor_tokens *t);
pv_result advisor_tokens_put(struct advisor_tokens *t, const char *sha256hex, int64_t id) PV_WUR;
void advisor_tokens_drop(struct advisor_tokens *t, int64_t id);
/* Room for one more entry, so that the put after a commit does not fail
 * for memory (PV_ERR_NOMEM when there is none). */
pv_result advisor_tokens_reserve(struct advisor_tokens *t) PV_WUR;
/* The sandbox id whose token matches the bearer value, or -1. */
int64_t advisor_tokens_find(struct advisor_tokens *t, const char *bearer, size_t len);
/* Drop every entry whose id 'keep' refuses. */
void advisor_tokens_keep(struct advisor_tokens *t, bool (*keep)(void *arg, int64_t id), void *arg);

/* The most recent denials of every sandbox (advisor_recent.c), kept across
 * the mapper's flushes, memory only: the mapper adds each one it takes
 * in, the narrowed suggestions read them. */
struct advisor_recent *advisor_recent_new(void);
void advisor_recent_free(struct advisor_recent *r);
/* Remember one denial (fields already checked; 'method', 'path' may be
 * NULL), overwriting the oldest. A NULL ring keeps nothing. */
void advisor_recent_add(struct advisor_recent *r, const char *sandbox, const char *host,
                        int64_t port, const char *bin, const char *method, const char *path);
/* The sandbox's recent denials, newest first: [{host, port, binary,
 * method, path}] (method and path "" when the request was not inspected).
 * A new array; empty when 'r' is NULL. */
json_t *advisor_recent_get(struct advisor_recent *r, const char *sandbox);

/* Other replicas' commits (advisor_listen.c, docs/scale-out.md#replicas):
 * on a PostgreSQL store one thread LISTENs for the notes every write
 * transaction sends, updates the sandbox tokens they name and wakes the
 * long-polls (advisor_changed). NULL with 'err' "" on SQLite (nothing to
 * listen to); NULL with 'err' set when the listener cannot start. */
struct advisor_listen;
struct advisor_listen *advisor_listen_start(struct advisor *a, char *err, size_t errlen);
void advisor_listen_stop(struct advisor_listen *l);
/* Apply one note's payload (store.h "Replicas") through store 'st'. */
void advisor_listen_apply(struct advisor *a, struct store *st, const char *payload);

/* ===========================================================================
 * Small helpers (advisor_util.c)
 * ========================================================================= */

int64_t advisor_now_ms(void);
/* A list of chunk ids collected from a store pass. An id that cannot be
 * kept sets 'oom' (the caller fails rather than act on a short list). */
struct advisor_ids {
    char **ids;
    size_t n;
    bool oom;
};
void advisor_ids_add(struct advisor_ids *x, const char *id);
void advisor_ids_free(struct advisor_ids *x);
/* A random lower-case hyphenated UUID v4 (37 bytes with the NUL). */
pv_result advisor_uuid(char out[37]) PV_WUR;
/* Hex SHA-256 of 'len' bytes. */
void advisor_sha256_hex(const void *data, size_t len, char out[65]);
/* advisor_integrity.c (docs/advisor.md#integrity). The text of revision
 * 'rev' of sandbox 'sandbox' (named in the log), read from its blob, when
 * the policy it holds hashes (model_policy_sha256) to the revision's
 * recorded hash; new string, its length into 'len' (may be NULL). NULL with
 * pv_errno PV_ERR_CONFLICT when it hashes elsewhere or does not load
 * (logged as INTEGRITY, counted), NULL otherwise when the blob cannot be
 * read. */
char *advisor_rev_text(struct store *st, const char *sandbox, const struct store_revision *rev,
                       size_t *len);
/* model_policy_sha256 of the policy in 'yaml' into 'out' ("" and
 * PV_ERR_POLICY when it does not load). */
pv_result advisor_rev_content_hash(const char *yaml, size_t len, char out[65]) PV_WUR;
/* How many revisions advisor_rev_text refused since start. */
uint64_t advisor_unbacked_total(void);
/* The global auto-approval boundary's settings key (scope ""). */
#define ADVISOR_BOUNDARY_KEY "@auto_approval_boundary"
/* The inputs of the decisions in 'scope' ("" global, or a sandbox's name)
 * as the chain binds them (docs/audit.md#inputs): {"setting:<key>",
 * "credentials", "boundary", "addresses", "server:<name>": hex SHA-256 of
 * the stored text}, an unset input absent. New reference into '*out'. The
 * store's errors (PV_ERR_NOTFOUND: no such sandbox), PV_ERR_NOMEM. */
pv_result advisor_inputs_json(struct store *st, const char *scope, json_t **out) PV_WUR;
/* False when the decision inputs the store holds for 'sandbox' or for the
 * global scope are not the ones the chain last recorded for them (logged
 * as INTEGRITY): nothing is decided on them. A scope the chain never bound
 * (a chain without any binding record) is taken as it is. Confirmed sets
 * are remembered, so the chain is folded again only after a change. */
bool advisor_inputs_backed(struct store *st, const char *sandbox);
/* The state the whole chain of 'st' implies (audit_state_fold), new
 * reference into '*out'. The store's errors; PV_ERR_IO for a record that
 * does not parse. */
pv_result advisor_audit_implied(struct store *st, json_t **out) PV_WUR;
/* True for the record kinds that change an input of a decision; each
 * carries "decision_inputs" (advisor_inputs_json after the change). */
bool advisor_inputs_kind(const char *kind);
/* The reference's one_line: split on '\n', trim, drop empties, join "; ".
 * New string. */
char *advisor_one_line(const char *s);
/* Valid sandbox name: 1..63 of [a-z0-9._-], starting alphanumeric. */
bool advisor_name_valid(const char *s);
/* The id of sandbox 'sandbox' (PV_ERR_NOTFOUND when there is none). */
pv_result advisor_sandbox_id(struct advisor_worker *w, const char *sandbox, int64_t *id) PV_WUR;
/* Sandboxes by id and name (advisor_util.c): for the passes over every
 * sandbox (peer pushes and bounds, the audit's state, re-proofs). */
struct store_sandbox;
struct advisor_sandboxes {
    int64_t *ids;
    char **names;
    size_t n;
    bool oom;
    bool unbounded_only; /* keep only sandboxes without a boundary of their own */
};
/* A store_sandbox_each callback ('arg' the list); also callable directly. */
void advisor_sandboxes_add(void *arg, const struct store_sandbox *sb);
/* Every sandbox into 'out' (zeroed first; 'unbounded_only' as above). */
pv_result advisor_sandboxes_list(struct store *st, bool unbounded_only,
                                 struct advisor_sandboxes *out) PV_WUR;
void advisor_sandboxes_free(struct advisor_sandboxes *l);
/* A store failure as an answer: 404 "WHAT not found", 409 "WHAT already
 * exists", otherwise 500. */
void advisor_reply_store_error(struct httpd_reply *r, pv_result res, const char *what);
/* The JSON of 'text', JSON null when it is empty or not JSON. New reference. */
json_t *advisor_load_json(const char *text);
/* Compact JSON with sorted keys (new string). */
char *advisor_json_canonical(const json_t *j);

/* ===========================================================================
 * Settings (advisor_settings.c)
 * ========================================================================= */

/* The keys are the rows of common/pv_settings.h: ADVISOR_SET(MODE) is
 * "proposal_approval_mode". The auto-approval envelope (advisor_envelope.c,
 * docs/advisor.md#envelope) is on by default; each clause relaxed by its
 * own ENV_ key. */
#define ADVISOR_SET(id) pv_setting_key(PV_SET_##id)
#define ADVISOR_PEER_RANGES_MAX 64

/* Validate a write of 'key' = 'value'. NULL when acceptable, else the
 * reference's message (static or in 'buf'). */
const char *advisor_setting_check(const char *key, const json_t *value, char *buf, size_t len);
/* The effective value of 'key' for 'sandbox' (NULL: global only): a new
 * reference (JSON null when unset) and where it came from ("global",
 * "sandbox" or "default"). */
json_t *advisor_setting_resolve(struct store *st, const char *sandbox, const char *key,
                                const char **from);
/* Auto mode? 'resolved_from' is "gateway", "sandbox" or "default" (the
 * reference's words for the audit suffix). Unknown stored values are manual. */
bool advisor_mode_auto(struct store *st, const char *sandbox, const char **resolved_from);
bool advisor_proposals_enabled(struct store *st, const char *sandbox);
/* The same, telling a store or memory failure (an error) from "off". */
pv_result advisor_proposals_on(struct store *st, const char *sandbox, bool *on) PV_WUR;
/* {"key": {"value": v, "resolved_from": s}, ...} for every key. */
json_t *advisor_settings_json(struct store *st, const char *sandbox);
/* The registered keys, comma-separated (for messages). */
const char *advisor_setting_keys(void);

/* The address ranges sandbox 'sandbox' may register (peer_address_ranges,
 * docs/advisor.md#peers), resolved like any setting. Unset: unbounded (any
 * address the registration otherwise accepts); a stored value that is not
 * valid admits no address. '*out' is new (advisor_ranges_free); PV_ERR_IO
 * when the store failed (never read as unbounded), PV_ERR_NOMEM. */
pv_result advisor_ranges_get(struct store *st, const char *sandbox,
                             struct advisor_ranges **out) PV_WUR;
/* May 'ip' be registered under 'r'? */
bool advisor_ranges_admit(const struct advisor_ranges *r, const struct model_ip *ip);
/* The value as stored (JSON list; borrowed), NULL when unbounded. */
const char *advisor_ranges_text(const struct advisor_ranges *r);
/* "global", "sandbox" or "default" (static). */
const char *advisor_ranges_from(const struct advisor_ranges *r);
void advisor_ranges_free(struct advisor_ranges *r);

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
 * Proposed rules (advisor_rule.c)
 * ========================================================================= */

/* The reference's security notes for a rule (JSON), joined with spaces; ""
 * when none. New string. */
char *advisor_rule_security_notes(const json_t *rule);
/* An always-blocked destination named by the rule (loopback, link-local,
 * metadata host, unspecified; 127.0.0.1 is allowed when 'allow_loopback'):
 * the offending host or allowed_ips entry, or NULL. */
const char *advisor_rule_blocked_host(const json_t *rule, bool allow_loopback);
/* First endpoint's lower-cased host (for a hostless target_sandbox endpoint
 * "sandbox:NAME") and port, first binary ("" when none). */
void advisor_rule_key(const json_t *rule, char *host, size_t hostlen, int64_t *port, char *binary,
                      size_t binlen);
/* The reference's event description of a rule: endpoints=[...] binaries=[...].
 * New string. */
char *advisor_rule_describe(const json_t *rule);
/* The agent-facing summary: "on h:p[ METHOD path][ by bin]". New string. */
char *advisor_rule_summary(const json_t *rule, const char *rule_name);
/* The names of the rules of 'p' that list one of the rule's binaries and
 * name one of its endpoints' host and port: what already allows a
 * proposal that adds nothing (a new array; may be empty when globs cover
 * it). */
json_t *advisor_rule_covering(const struct model_policy *p, const json_t *rule);
/* model_proposal_text (kept under this name for the advisor's callers):
 * the one-rule proposal document, canonical JSON; new string. */
char *advisor_proposal_text(const char *name, const json_t *rule, size_t *len);

/* ===========================================================================
 * The prover client (advisor_prover.c)
 * ========================================================================= */

struct advisor_prover *advisor_prover_new(struct advisor *a);
void advisor_prover_free(struct advisor_prover *pc);
/* POST 'body' to the prover's 'path'. On a transport failure returns
 * PV_ERR_IO with a message in 'err'; otherwise *status and *answer (new
 * reference; NULL when the answer is not JSON). */
pv_result advisor_prover_post(struct advisor_prover *pc, const char *path, const char *body,
                              size_t len, long *status, json_t **answer, char *err,
                              size_t errlen) PV_WUR;
/* GET /healthz at 'url' with a short timeout: true when 200. */
bool advisor_prover_healthy(const char *url);

/* ===========================================================================
 * The prover pool (advisor_pool.c, docs/scale-out.md#pool)
 * ========================================================================= */

#define ADVISOR_POOL_MAX 16 /* members; a lease's 'tried' mask has a bit each */
#define ADVISOR_POOL_URL_MAX 256
struct advisor_pool;
struct pv_dynbuf;
/* One call's hold on a member: copies of its address, taken under the
 * pool's lock, so a restart of the child during the call changes nothing
 * the call reads. The token is secret: callers wipe the lease. */
struct advisor_pool_lease {
    size_t i;
    uint64_t generation;
    char url[ADVISOR_POOL_URL_MAX];
    char token[HTTPD_TOKEN_MAX + 1];
    char label[ADVISOR_POOL_URL_MAX];
};
/* An empty pool; NULL when out of memory. */
struct advisor_pool *advisor_pool_new(void);
/* Stop the prober, wipe the tokens, free. NULL is a no-op. */
void advisor_pool_free(struct advisor_pool *p);
/* Add a member at 'url' ("" for a child not started yet: out until
 * advisor_pool_set) with bearer 'token' (copied); 'label' names it in
 * metrics and errors (NULL: the URL). PV_ERR_USAGE past ADVISOR_POOL_MAX or
 * for a URL or token too long. */
pv_result advisor_pool_add(struct advisor_pool *p, const char *label, const char *url,
                           const char *token) PV_WUR;
size_t advisor_pool_size(const struct advisor_pool *p);
/* Member 'i' moved to 'url' with 'token' (the child restarted; "" while
 * none runs): in at once when 'url' is not empty. */
void advisor_pool_set(struct advisor_pool *p, size_t i, const char *url, const char *token);
/* Start the prober thread (health checks with back-off). */
pv_result advisor_pool_start(struct advisor_pool *p) PV_WUR;
/* Probe every member once now (start-up): those that fail are out. */
void advisor_pool_check_now(struct advisor_pool *p);
/* Lease the member up with the fewest calls in flight, skipping those
 * whose bit is set in 'tried'; ties go round-robin among calls of the same
 * 'kind' (the path). False when none is left, with a sentence in 'why'
 * naming each member and why it is out. 'p' may be NULL. */
bool advisor_pool_acquire(struct advisor_pool *p, const char *kind, uint32_t tried,
                          struct advisor_pool_lease *l, char *why, size_t whylen);
/* The leased call ended: 'ok', or failed with 'why' (the member is taken
 * out until its /healthz answers again). */
void advisor_pool_release(struct advisor_pool *p, const struct advisor_pool_lease *l, bool ok,
                          const char *why);
/* Append the per-member series (up, requests, failures, outstanding) in
 * the Prometheus text format to 'b'. */
pv_result advisor_pool_render(struct advisor_pool *p, struct pv_dynbuf *b) PV_WUR;

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
 * Events (advisor_events.c)
 * ========================================================================= */

/* Append an event in the current transaction: 'line' is the shorthand
 * without the CONFIG: label prefix handling (given whole); 'extra' (stolen,
 * may be NULL) is merged into the JSON form. */
pv_result advisor_event(struct store *st, const char *sandbox, const char *kind, const char *line,
                        json_t *extra) PV_WUR;
/* The audit key (docs/audit.md#key): 'key_file' when not NULL (it must
 * exist: replicas share one key, docs/scale-out.md#replicas), else
 * DATA_DIR/audit.key, created 0600 on first start; refused when group or
 * others may access it. Call once
 * before any event is written; advisor_event fails without it. */
pv_result advisor_audit_open(const char *data_dir, const char *key_file, char *err,
                             size_t errlen) PV_WUR;
/* Whether the chain's newest sealed record in 'st' was signed by the
 * loaded key: '*mismatch' true when it was not (PV_ERR_IO: unreadable).
 * With 'claim' (a store replicas share) an empty chain gets its first
 * record at once, AUDIT:KEY naming the public key, written under the
 * writer's lock: a replica started with another key is then refused even
 * when nothing else was written yet. */
pv_result advisor_audit_check_signer(struct store *st, bool claim, bool *mismatch,
                                     int64_t *seq) PV_WUR;
void advisor_audit_close(void);
/* Seal, in one transaction and in order, the events at the start of the
 * log that have no record (written before schema 2, or with
 * --test-no-audit-chain): each becomes a record marked "legacy": true,
 * sealed now. The count into 'sealed'. Needs advisor_audit_open. */
pv_result advisor_audit_seal_legacy(struct store *st, size_t *sealed) PV_WUR;
/* Tests only (--test-no-audit-chain): write events without sealing them,
 * to measure what the chain costs. Such a store cannot be exported. */
void advisor_audit_test_unsealed(void);
/* The loaded key (borrowed), NULL before advisor_audit_open. */
struct audit_key;
const struct audit_key *advisor_audit_key(void);
/* The export of every record after 'since' plus the blobs they reference
 * (docs/audit.md#format), appended to 'out'. One read transaction, so the
 * export is a consistent prefix of the chain. PV_ERR_NOTFOUND when record
 * 'since' does not exist; message in 'err'. */
struct pv_dynbuf;
pv_result advisor_audit_export(struct store *st, int64_t since, struct pv_dynbuf *out, char *err,
                               size_t errlen) PV_WUR;
/* The store's state as audit_state_compare reads it (docs/audit.md#state):
 * per sandbox its latest effective revision's version and hash and each
 * chunk's status. Reads inside the caller's transaction, if any. New
 * reference into 'out'. */
pv_result advisor_audit_store_state(struct store *st, json_t **out) PV_WUR;
/* The start-up check (docs/audit.md#state): one pass over the records
 * gives the state the chain implies; each disagreement with the store is
 * logged ("sandbox S chunk C: the store says X, the chain says Y (record
 * seq N)") and counted into 'disagreements'; the records read into
 * 'records'. Fails only when the store cannot be read. */
pv_result advisor_audit_check_state(struct store *st, size_t *records,
                                    size_t *disagreements) PV_WUR;
/* "[version:vN hash:sha256:H]" style suffix pieces. */
void advisor_event_suffix(char *buf, size_t len, int64_t rev, const char *hash);

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
/* POST /v1/sandboxes/{name}/proposals on the lifecycle above
 * (advisor_routes_chunk.c): parse once, submit, answer 202 with the
 * outcomes ('mode' is the analysis_mode argument, may be NULL). */
void advisor_route_submit(struct advisor_worker *w, const char *sandbox, const char *mode,
                          const char *body, size_t len, struct httpd_reply *r);
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
};

struct advisor_view {
    json_t *json;
    enum advisor_refusal refusal; /* ADVISOR_DECIDED (0) when read */
    char detail[2300];
};
void advisor_view_clear(struct advisor_view *v);
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
/* Their routes (advisor_routes_chunk.c). */
void advisor_route_chunk_show(struct advisor_worker *w, const char *sandbox, const char *id,
                              bool reviewer, struct httpd_reply *r);
void advisor_route_chunk_wait(struct advisor_worker *w, const char *sandbox, const char *id,
                              unsigned timeout_s, struct advisor_hold *hold, struct httpd_reply *r);
void advisor_route_chunk_list(struct advisor_worker *w, const char *sandbox, const char *status,
                              bool reviewer, struct httpd_reply *r);
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
/* The routes of the four above (advisor_routes_chunk.c): parse the body
 * ({"review_token"} or {"reason"}), decide, answer. */
void advisor_route_approve(struct advisor_worker *w, const char *sandbox, const char *id,
                           const char *body, size_t len, struct httpd_reply *r);
void advisor_route_approve_suggestion(struct advisor_worker *w, const char *sandbox, const char *id,
                                      const char *body, size_t len, struct httpd_reply *r);
void advisor_route_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *body, size_t len, struct httpd_reply *r);
void advisor_route_undo(struct advisor_worker *w, const char *sandbox, const char *id,
                        struct httpd_reply *r);
/* A decision as JSON ({chunk_id, status, policy_version, policy_hash,
 * narrowed}) and as an answer (200, or the refusal's status and error). */
json_t *advisor_decision_json(const struct advisor_decision *d);
void advisor_reply_decision(struct httpd_reply *r, const struct advisor_decision *d);
/* Replace pending chunk 'id''s rule with 'rule' (borrowed) and evaluate it
 * again; the chunk's reviewer view into out->json. */
pv_result advisor_edit(struct advisor_worker *w, const char *sandbox, const char *id,
                       const json_t *rule, struct advisor_view *out) PV_WUR;
void advisor_route_edit(struct advisor_worker *w, const char *sandbox, const char *id,
                        const char *body, size_t len, struct httpd_reply *r);
/* Approve every pending chunk of the sandbox ('approvals' NULL: each on its
 * stored token; else a list of {chunk_id, review_token}), skipping those with
 * security notes unless 'flagged'. The report into out->json: {approved,
 * skipped: [{chunk_id, reason}], approved_chunks, skipped_chunks}. */
pv_result advisor_approve_all(struct advisor_worker *w, const char *sandbox,
                              const json_t *approvals, bool flagged,
                              struct advisor_view *out) PV_WUR;
void advisor_route_approve_all(struct advisor_worker *w, const char *sandbox, const char *body,
                               size_t len, struct httpd_reply *r);
/* Delete the sandbox's pending chunks (their count into out->cleared). */
pv_result advisor_clear(struct advisor_worker *w, const char *sandbox,
                        struct advisor_decision *out) PV_WUR;
/* {"sandbox", "history": [...]}: every decision on the sandbox's chunks, in
 * time order (advisor_view.c), each entry written from the chunk's view for
 * the caller: the agent view unless 'reviewer' (docs/security.md#agent-view). */
pv_result advisor_history(struct advisor_worker *w, const char *sandbox, bool reviewer,
                          struct advisor_view *out) PV_WUR;
void advisor_route_clear(struct advisor_worker *w, const char *sandbox, struct httpd_reply *r);
void advisor_route_history(struct advisor_worker *w, const char *sandbox, bool reviewer,
                           struct httpd_reply *r);
/* A new base policy 'p' (borrowed; the operator's, parsed by the route):
 * recompose, prove the approved chunks again, reconcile pending chunks. The
 * answer {base_revision, policy_version, policy_hash, suspended} into
 * out->json. */
pv_result advisor_base_set(struct advisor_worker *w, const char *sandbox,
                           const struct model_policy *p, const char *cause,
                           struct advisor_view *out) PV_WUR;
/* PUT .../policy's document text: parsed once, then advisor_base_set. */
void advisor_route_base_set(struct advisor_worker *w, const char *sandbox, const char *text,
                            size_t len, const char *cause, struct httpd_reply *r);

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
/* advisor_peers.c: inside a transaction: compose again every sandbox whose policy names
 * 'peer', writing a revision and a CONFIG:RESOLVED event where it changed
 * (naming the peer's new 'addresses' and 'previous' ones, JSON lists, both
 * borrowed); each such {sandbox, policy_version, policy_hash} is appended to 'updated'
 * (may be NULL). */
pv_result advisor_peers_push(struct advisor_worker *w, const char *peer, const char *addresses,
                             const char *previous, json_t *updated, char *err,
                             size_t errlen) PV_WUR;
/* Inside a transaction, after a change of peer_address_ranges at the scope
 * of 'sandbox' (NULL: global, so every sandbox): drop each registered
 * address the sandbox's ranges no longer admit, recording the move
 * (CONFIG:REGISTERED, by "setting") and pushing the dependents. */
pv_result advisor_peers_bound(struct advisor_worker *w, const char *sandbox, char *err,
                              size_t errlen) PV_WUR;
/* PUT /v1/sandboxes/{name}/addresses */
void advisor_addresses_put(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                           struct httpd_reply *r);

/* Host-side tool servers and the tools an identity may call
 * (advisor_tools.c, docs/advisor.md#tools). */
void advisor_server_put(struct advisor_worker *w, const struct httpd_req *rq, const char *sandbox,
                        const char *name, struct httpd_reply *r);
void advisor_server_delete(struct advisor_worker *w, const char *sandbox, const char *name,
                           struct httpd_reply *r);
void advisor_server_list(struct advisor_worker *w, const char *sandbox, struct httpd_reply *r);
void advisor_tools(struct advisor_worker *w, const struct httpd_req *rq, const char *sandbox,
                   struct httpd_reply *r);

/* ===========================================================================
 * The mechanistic mapper (advisor_mapper.c)
 * ========================================================================= */

#define ADVISOR_MAPPER_SAMPLES 20
#define ADVISOR_MAPPER_FLUSH_MS 5000u

/* 'start': run the flusher thread (every flush_ms; 0 takes the default). */
struct advisor_mapper *advisor_mapper_new(struct advisor *a, unsigned flush_ms, bool start);
void advisor_mapper_free(struct advisor_mapper *m);
/* POST /v1/sandboxes/{name}/denials: {"events": [...], "dropped": n}. */
void advisor_mapper_ingest(struct advisor_mapper *m, const char *sandbox, const char *body,
                           size_t len, struct httpd_reply *r);
/* Drain the table now: one mechanistic submission per group. */
void advisor_mapper_flush(struct advisor_mapper *m, struct advisor_worker *w);
/* The pieces, for tests: the generalised path (false: no safe form), the
 * rule name allow_<host>_<port>, the confidence, and the whole proposal
 * (NULL when the group proposes nothing: no binary, always-blocked). */
bool advisor_mapper_generalise(const char *path, char *out, size_t outlen);
void advisor_mapper_rule_name(const char *host, int64_t port, char *out, size_t len);
double advisor_mapper_confidence(int64_t count, int64_t port, bool ssrf);
json_t *advisor_mapper_proposal(const char *host, int64_t port, const char *binary, int64_t count,
                                bool ssrf, const char *const *methods, const char *const *paths,
                                size_t nsamples, const json_t *prior, bool allow_loopback,
                                double *confidence);
/* The proposal of one group from denial events [{method, path, protocol?,
 * graphql?}] (all of the first event's kind: REST, a GraphQL endpoint's
 * path, a WebSocket upgrade's path; the others are ignored). */
json_t *advisor_mapper_proposal_events(const char *host, int64_t port, const char *binary,
                                       const json_t *events, const json_t *prior,
                                       bool allow_loopback, double *confidence);
/* ===========================================================================
 * HTTP (advisor_routes.c, advisor_api.c, advisor_ui.c)
 * ========================================================================= */

/* The route table for libhttpd and its handler (ctx is the struct advisor). */
const struct httpd_route *advisor_routes(size_t *n);
void advisor_handle(void *ctx, void *worker, const struct httpd_req *rq, struct httpd_reply *r);
/* The embedded OpenAPI document. */
const char *advisor_api_text(size_t *len);
/* GET /ui, /ui/, /ui/app.js, /ui/app.css: the reviewer inbox's embedded
 * files with their content types and Content-Security-Policy; /ui redirects
 * to /ui/ (advisor_ui.c). 'path' is borrowed; the reply points at static
 * data. */
void advisor_ui_reply(const char *path, struct httpd_reply *r);

/* ===========================================================================
 * The prover child (advisor_child.c)
 * ========================================================================= */

struct advisor_child;
/* Start proviso-prover ('exe') on a free loopback port with a fresh token
 * passed through an inherited descriptor, wait for /healthz and publish its
 * address as the member "child" it adds to a->pool (which must exist); a
 * supervisor thread restarts it with back-off when it dies, the member out
 * meanwhile. NULL with a message in 'err'. */
struct advisor_child *advisor_child_start(struct advisor *a, const char *exe, char *err,
                                          size_t errlen);
/* SIGTERM, then SIGKILL after 'grace_ms'; joins the supervisor. */
void advisor_child_stop(struct advisor_child *c, unsigned grace_ms);

#endif
