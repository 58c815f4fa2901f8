/* SPDX-License-Identifier: Apache-2.0 */
/* core.h - what every room of the advisor shares (advisor/core/)
 *
 * The bottom room above the store (docs/architecture.md#advisor): the
 * process-wide state and the worker (advisor_worker.c), the small helpers,
 * holds and sandbox tokens (advisor_util.c), the denials ring
 * (advisor_recent.c), settings (advisor_settings.c), reading a proposed
 * rule (advisor_rule.c), the decision record and its integrity
 * (advisor_events.c, advisor_integrity.c), the provers over HTTP
 * (advisor_prover.c, advisor_pool.c). Calls only the store (store.h).
 *
 * Invariants: the advisor never links Z3 (proofs go over HTTP); every state
 * change commits together with the event that records it; a chunk is only
 * ever approved automatically on a prover verdict of `empty` computed
 * against exactly the effective policy it is merged into; every status
 * write is compare-and-set.
 */
#ifndef ADVISOR_CORE_H
#define ADVISOR_CORE_H

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
    unsigned store_connections; /* PostgreSQL: the pool's bound (store_set_connections) */
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

/* A worker with its store handle and prover client, or NULL when
 * either could not be made (logged); the caller makes it again later. */
struct advisor_worker *advisor_worker_new(struct advisor *a);
void advisor_worker_free(struct advisor_worker *w);
/* The store location every handle of the process opens: --store, or the
 * SQLite file in the data directory. */
const char *advisor_store_location(const struct advisor *a);

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
 * Proposed rules (advisor_rule.c)
 * ========================================================================= */

/* The reference's security notes for a rule (JSON), joined with spaces; ""
 * when none. New string. */
char *advisor_rule_security_notes(const json_t *rule);
/* An always-blocked destination named by the rule (loopback, link-local,
 * metadata host, unspecified; 127.0.0.1 is allowed when 'allow_loopback'):
 * the offending host or allowed_ips entry, or NULL. */
const char *advisor_rule_blocked_host(const json_t *rule, bool allow_loopback);
/* Is o's "protocol" member (an endpoint's, a denial event's) json-rpc or
 * mcp: are its rules calls (docs/semantics.md#rpc)? */
bool advisor_protocol_is_rpc(const json_t *o);
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
/* Start the prober thread (health checks with back-off), with its client
 * made first: PV_ERR_NOMEM when it cannot be. */
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

#endif
