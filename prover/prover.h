/* SPDX-License-Identifier: Apache-2.0 */
/* prover.h - public API of libprover: what new authority does a change grant?
 *
 * Given a baseline policy B, a candidate C, a credential set and the binary
 * registry, prover_run() decides with Z3 which requests C allows that B does
 * not, and sorts them into categories (docs/semantics.md is the definition of
 * "allows"; docs/semantics.md#findings the definition of the categories). Every
 * reported path carries a concrete witness request that was re-checked with
 * the concrete evaluator (model_decide). Results are three-valued: EMPTY
 * (provably no new finding in any category), FINDINGS, or UNKNOWN (timeout, limit, internal
 * error) - only EMPTY may ever auto-approve. PROVER_CHECK answers containment
 * of C in a boundary (WITHIN / EXCEEDS / UNKNOWN).
 *
 * Threading: a session owns one Z3 context; use one session per thread.
 */
#ifndef PROVER_H
#define PROVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct json_t; /* jansson */

struct prover_session;

/* A new session (one Z3 context, reused across proofs). NULL on NOMEM or
 * when Z3 cannot create a context. */
struct prover_session *prover_session_new(void);
/* Frees the session and its Z3 context. NULL is a no-op. */
void prover_session_free(struct prover_session *s);
/* Release Z3's global memory; call once before exit (after every session
 * was freed). */
void prover_finalize(void);

enum prover_mode {
    PROVER_DELTA, /* new authority of candidate over baseline */
    PROVER_AUDIT, /* single-policy audit: baseline empty, capability per method */
    PROVER_CHECK, /* containment: is candidate within the boundary (baseline slot)? */
};

struct prover_input {
    const struct model_policy *baseline;  /* borrowed; NULL = empty policy; CHECK: boundary */
    const struct model_policy *candidate; /* borrowed, required */
    const struct model_credset *creds;    /* borrowed; NULL = no credentials */
    const struct model_registry *reg;     /* borrowed; NULL = empty registry */
    enum prover_mode mode;
    unsigned timeout_ms; /* whole-proof budget; 0 = default 2000 */
};

enum prover_verdict {
    PROVER_VERDICT_EMPTY,
    PROVER_VERDICT_FINDINGS,
    PROVER_VERDICT_UNKNOWN,
    PROVER_VERDICT_WITHIN,
    PROVER_VERDICT_EXCEEDS,
};

/* The finding categories: the one table (docs/semantics.md#findings; a
 * new category is a row here, its question in prover_query.c and its row in
 * the docs table, which tests/docs_categories.sh checks). Rows are in
 * report order, most severe first; every category blocks auto-approval
 * (only an `empty` verdict approves, docs/advisor.md). Columns:
 *   X(ID, name, check, creds, summary)
 * ID      the enum constant's suffix (PROVER_CAT_ID)
 * name    the text in JSON, the shorthand, reports and the corpus' expect
 * check   true when only PROVER_CHECK reports it, else the other modes do
 * creds   true when it can fire only with credentials given
 * summary one line for help and reports */
#define PROVER_CATEGORIES(X)                                                                     \
    X(LINK_LOCAL, "link_local_reach", false, false,                                              \
      "new reach to a link-local host (cloud metadata and the like)")                            \
    X(L7_BYPASS, "l7_bypass_credentialed", false, true,                                          \
      "new reach to a credentialed host by a binary that bypasses L7 inspection")                \
    X(CRED_REACH, "credential_reach_expansion", false, true, "new reach to a credentialed host") \
    X(CAPABILITY, "capability_expansion", false, true,                                           \
      "a new method, path, query or GraphQL operation on a credentialed host already reached")   \
    X(PRIVATE_REACH, "private_reach_expansion", false, false, "new reach to a private address")  \
    X(BOUNDARY, "boundary_exceeded", true, false, "a request outside the boundary")

#define PROVER_CAT_ENUM_(id, name, check, creds, summary) PROVER_CAT_##id,
#define PROVER_CAT_ONE_(id, name, check, creds, summary) +1
enum prover_category { PROVER_CATEGORIES(PROVER_CAT_ENUM_) };
enum { PROVER_CAT__COUNT = 0 PROVER_CATEGORIES(PROVER_CAT_ONE_) };
#undef PROVER_CAT_ENUM_
#undef PROVER_CAT_ONE_

/* A concrete request that the candidate allows and the baseline does not. */
struct prover_witness {
    char *binary;
    char *host; /* normalised host text (DNS name or canonical IP) */
    uint16_t port;
    char *method;
    char *path;                /* canonical path */
    char *query;               /* raw query string (percent-encoded), "" when none */
    char *ip;                  /* destination address text */
    char *api, *action, *risk; /* API registry annotation, NULL when unknown */
    /* The GraphQL operation the request carries (docs/semantics.md#graphql):
     * a document (gql_type set) or a hash-only persisted query
     * (gql_persisted set); both NULL = none. */
    char *gql_type; /* "query", "mutation" or "subscription" */
    char *gql_name; /* NULL = anonymous */
    char **gql_fields;
    size_t ngql_fields;
    char *gql_persisted;
    /* The JSON-RPC/MCP call (docs/semantics.md#rpc), rpc_method NULL = none:
     * its kind (model_rpc_kind_name), method and tool (NULL = none). */
    char *rpc_kind;
    char *rpc_method;
    char *rpc_tool;
};

struct prover_path {
    enum prover_category cat;
    char *binary; /* binary pattern as written */
    char *host;   /* endpoint host pattern as written ("*" for hostless) */
    uint16_t port;
    char *method;           /* capability paths only, else NULL; for a GraphQL
                             * witness "graphql:TYPE" or "graphql:persisted" */
    char *rule;             /* candidate rule key */
    enum model_route route; /* route of the witness under the candidate */
    char **creds;           /* names of credentials covering the witness host */
    size_t ncreds;
    struct prover_witness w;
};

/* Why a proof is UNKNOWN. The text and the advice are derived from it
 * (prover_unknown_text, prover_unknown_hint); consumers test the enum or its
 * stable code (prover_unknown_code), never the text. */
enum prover_unknown {
    PROVER_UNKNOWN_NONE,        /* the verdict is not UNKNOWN */
    PROVER_UNKNOWN_TIMEOUT,     /* the whole-proof budget ran out */
    PROVER_UNKNOWN_LIMIT,       /* an automaton or atom limit of the encoding */
    PROVER_UNKNOWN_SOLVER,      /* Z3 failed or answered unknown before the deadline */
    PROVER_UNKNOWN_UNSUPPORTED, /* a construct the encoding does not cover */
    PROVER_UNKNOWN_MEMORY,      /* out of memory */
    PROVER_UNKNOWN_RECHECK,     /* a witness failed the concrete re-check (our bug) */
    PROVER_UNKNOWN_INTERNAL,    /* any other internal error */
};
#define PROVER_UNKNOWN__COUNT 8

/* The stable code ("timeout", "limit", "solver", "unsupported", "memory",
 * "recheck", "internal"; "" for NONE). Static string. */
const char *prover_unknown_code(enum prover_unknown u);
/* The human text ("timeout", "limit: automaton or solver limit reached", ...).
 * Static string. */
const char *prover_unknown_text(enum prover_unknown u);
/* What to do about it, one sentence. Static string. */
const char *prover_unknown_hint(enum prover_unknown u);

struct prover_result {
    enum prover_verdict verdict;
    enum prover_unknown unknown; /* UNKNOWN: why; else PROVER_UNKNOWN_NONE */
    struct prover_path *paths;   /* sorted by category, binary, host, port, method */
    size_t npaths;
    double elapsed_ms;
    char inputs_sha256[65];
    /* statistics */
    size_t nqueries;    /* solver checks */
    size_t nunits;      /* units in the slice */
    size_t ndelta;      /* delta units */
    size_t ncomponents; /* parts of the slice proved on their own */
    double ms_units;    /* units, fingerprints, inputs hash, delta, slice, components */
    double ms_encode;   /* atoms and Z3 terms */
    double ms_solve;    /* questions, witnesses, re-checks */
};

/* Run one proof. Never fails on policy content: limits, timeouts and
 * internal errors give verdict UNKNOWN with a reason. Returns NULL only on
 * NOMEM (pv_errno set). New reference; free with prover_result_free. */
struct prover_result *prover_run(struct prover_session *s, const struct prover_input *in);
void prover_result_free(struct prover_result *r);

const char *prover_category_name(enum prover_category c);
/* The category's one-line summary (its table row); "unknown" when out of
 * range. */
const char *prover_category_summary(enum prover_category c);
/* True when 'mode' reports 'c'. */
bool prover_category_in_mode(enum prover_category c, enum prover_mode mode);
/* True when 'c' can only fire with credentials given. */
bool prover_category_needs_creds(enum prover_category c);
const char *prover_verdict_name(enum prover_verdict v);
/* Number of categories with at least one path. */
size_t prover_result_ncategories(const struct prover_result *r);

/* The reference's validation_result text (docs/reference-compat.md#prover): "prover: no new
 * findings", "prover: N new finding(s)\n  <path>...", or "prover: unknown
 * (<reason>)". New string (caller frees); NULL on NOMEM. */
char *prover_validation_result(const struct prover_result *r);
/* One shorthand path line, e.g. "capability_expansion: PUT on h:443 via /b".
 * New string. */
char *prover_path_shorthand(const struct prover_path *p);
/* The JSON report (schema in docs/internals/prover.md). New reference. */
struct json_t *prover_result_to_json(const struct prover_result *r);
/* The invalid-input JSON object {"verdict":"invalid","error":..,"detail":..}.
 * New reference. */
struct json_t *prover_invalid_json(const char *error, const char *detail);
/* Readable report with the evidence. New string. */
char *prover_result_text(const struct prover_result *r);

/* ===========================================================================
 * Grants (prover_grants.c): what a change grants, for the reviewer
 *
 * One grant per candidate unit - (binary pattern, endpoint) of a rule -
 * whose (binary, endpoint fingerprint) pair no baseline unit has
 * (docs/semantics.md#grants). Descriptive only: no solver, no verdict.
 * ========================================================================= */

struct prover_grant {
    bool changed;    /* false: "new" (no baseline unit with this binary and host
                          * pattern); true: "changed" (the endpoint differs) */
    char *rule;      /* candidate rule key */
    char *binary;    /* binary pattern as written */
    char *host;      /* host pattern, "*" for hostless */
    uint16_t *ports; /* sorted */
    size_t nports;
    const char *route; /* "opaque", "inspected" or "audit" (static) */
    char **access;     /* "GET /repos/...", ..., or "all traffic" (opaque) */
    size_t naccess;
    char **added; /* changed: the access lines no baseline unit of the same place
                   * has (a rule added to an endpoint), in access order */
    size_t nadded;
    char **creds; /* credentials whose targets overlap the host */
    size_t ncreds;
    char **private_ips; /* allowed_ips ranges that reach private addresses */
    size_t nprivate;
    char **dests; /* every allowed_ips / resolved_ips range, private or not */
    size_t ndests;
    char **flags; /* endpoint switches that widen what is admitted:
                   * "allow_encoded_slash" */
    size_t nflags;
    char *peer; /* "NAME" or "NAME (unresolved)" for a target_sandbox endpoint, else NULL */
    /* How wide the grant is, one static word per dimension
     * (docs/semantics.md#grant-breadth): */
    struct {
        const char *binary;  /* "exact", "glob" or "any" */
        const char *host;    /* "exact", "one-label", "any-depth" or "hostless" */
        const char *route;   /* the route again: "inspected", "audit" or "opaque" */
        const char *methods; /* "read-only", "writes" or "all" */
    } breadth;
};

struct prover_grants {
    struct prover_grant *g; /* sorted by binary, host, port, rule */
    size_t n;
};

/* List the grants of 'candidate' over 'baseline' (NULL = empty; both
 * borrowed); 'creds' borrowed, may be NULL. Fills 'out' (caller frees with
 * prover_grants_free). PV_ERR_NOMEM only. */
pv_result prover_grants_list(const struct model_policy *baseline,
                             const struct model_policy *candidate,
                             const struct model_credset *creds, struct prover_grants *out) PV_WUR;
void prover_grants_free(struct prover_grants *gs);
/* The "grants" array of the answer. New reference; NULL on NOMEM. */
struct json_t *prover_grants_json(const struct prover_grants *gs);
/* The reviewer's text of a prove answer 'answer' (borrowed: the object
 * prover_result_to_json, /v1/prove and the advisor's evidence carry, with
 * its "grants", "verdict" and "categories"): one headline sentence ("This
 * change grants 1 new unit: /usr/bin/cat -> *.pastebin.com:443 opaque;
 * prover: no new findings."), then one line per grant, terraform-plan style
 * ("+ BINARY -> HOST:PORTS ROUTE, ACCESS  [binary: .., host: .., route: ..,
 * methods: ..]", "~" for a changed unit) with its rule, credentials in scope,
 * private destinations and peer sandbox on the next line; past 50 grants of
 * one binary, their count. 'policy': a policy on its own (--policy), "This
 * policy grants N units". Missing members print as "?", so an older
 * answer still renders. New string (caller frees); NULL on NOMEM. */
char *prover_review_text(const struct json_t *answer, bool policy);

/* ===========================================================================
 * Request bodies (prover_body.c): the JSON bodies of /v1/prove, /v1/check
 * and /v1/discover, decoded for the job below and for proviso-prover
 * ========================================================================= */

enum prover_field {
    PROVER_F_BASELINE,
    PROVER_F_CANDIDATE,
    PROVER_F_PROPOSAL,
    PROVER_F_POLICY,
    PROVER_F_BOUNDARY,
    PROVER_F_CREDENTIALS,
    PROVER_F_OPTIONS,
    PROVER_F_OPENAPI,
    PROVER_F_BINARY,
    PROVER_F_ANCESTORS,
    PROVER_F__COUNT
};

enum prover_body_kind { PROVER_BODY_PROVE, PROVER_BODY_CHECK, PROVER_BODY_DISCOVER };

/* One top-level member: the bytes a loader should parse. For a JSON string
 * value (a YAML or JSON document, or the binary path) 'text' is the decoded
 * string (borrowed from 'root', NUL-free); for an object or array it is the
 * raw span of the body (borrowed from the body buffer), so a loader's
 * LINE:COL counts from the value's first byte. */
struct prover_doc {
    bool present;
    bool is_string; /* the value was a JSON string */
    const char *text;
    size_t len;
    const struct json_t *value; /* the parsed value, borrowed from 'root' */
};

struct prover_body {
    struct prover_doc f[PROVER_F__COUNT];
    uint64_t timeout_ms; /* 0: not given */
    bool test_loopback;  /* /v1/discover: options.test_allow_loopback */
    struct json_t *root; /* the parsed body (owned) */
};

/* The field's name as it appears in the body and in error locations. */
const char *prover_field_name(enum prover_field f);

/* Decode and type-check a request body for route kind 'kind'. 'max_timeout_ms'
 * bounds options.timeout_ms. On error returns PV_ERR_PARSE (malformed JSON,
 * detail "body:LINE:COL: ...") or PV_ERR_USAGE (wrong shape: unknown, missing,
 * conflicting or mistyped fields), writes the message into 'err' and leaves
 * 'out' empty. Success leaves 'out' owning what it holds: release with
 * prover_body_free. */
pv_result prover_body_decode(enum prover_body_kind kind, const char *buf, size_t len,
                             uint64_t max_timeout_ms, struct prover_body *out, char *err,
                             size_t errlen) PV_WUR;
void prover_body_free(struct prover_body *b);
/* Invariant check used by tests and the fuzz target. */
bool prover_body_validate(const struct prover_body *b, const char *buf, size_t len);
/* The offset of the value of top-level member 'f' when that value starts
 * with '{', found by a bounded scan of 'buf' that neither parses nor
 * validates it (the body must still go through prover_body_decode). False
 * when the member is absent, not an object, or the scan meets anything
 * unexpected. */
bool prover_body_object_at(const char *buf, size_t len, enum prover_field f, size_t *off);

/* ===========================================================================
 * The prove/check job (prover_job.c): one request in, one answer out
 *
 * This is the whole pipeline of `proviso prove`/`proviso check` and of
 * proviso-prover's POST /v1/prove and /v1/check: load every document (in a
 * fixed order, diagnostics under the document's name), merge a proposal into
 * its baseline, run the prover and build the answer - the HTTP status and the
 * JSON body the service returns, byte for byte. Invalid input is a 400 whose
 * body is {"verdict":"invalid","error":CODE,"detail":..,"diagnostics":[..]};
 * the codes are one table in prover_job.c (docs/api.md lists them).
 * ========================================================================= */

enum prover_job_kind { PROVER_JOB_PROVE, PROVER_JOB_CHECK };

/* One input document. 'name' is where diagnostics point ("candidate:12:7:",
 * "policy.yaml:12:7:"); 'text'/'len' are its bytes (borrowed), or 'text'
 * NULL to read the file 'name'. 'name' NULL: the document is absent. */
struct prover_job_doc {
    const char *name;
    const char *text;
    size_t len;
};

/* The optional cache of the document loaded first (prove: the baseline,
 * check: the boundary), for a caller that proves many changes against one
 * baseline. Returns the compiled policy of 'd', borrowed until the job ends,
 * or - when the cache cannot keep it - sets '*owned' (the job frees it) and
 * returns it. On invalid input returns NULL with 'diags' filled and pv_errno
 * set, exactly as model_policy_load would. */
typedef const struct model_policy *(*prover_job_cache_fn)(void *arg, const struct prover_job_doc *d,
                                                          struct model_diags *diags,
                                                          struct model_policy **owned);

struct prover_job {
    enum prover_job_kind kind;
    /* prove: baseline (optional) and exactly one of candidate, proposal,
     * policy (policy: a single-policy audit, no baseline); credentials
     * optional. check: boundary and candidate. */
    struct prover_job_doc baseline, candidate, proposal, policy, boundary, credentials;
    const struct model_registry *reg; /* borrowed; prove only; NULL = empty */
    unsigned timeout_ms;              /* 0 = the prover's default */
    prover_job_cache_fn cache;        /* optional */
    void *cache_arg;
    unsigned warn_flags; /* model_policy_warnings flags (MODEL_WARN_FS) */
};

/* What a job produced. Release with prover_answer_free. */
struct prover_answer {
    unsigned status;              /* 200, 400 (invalid input) or 500 */
    struct json_t *body;          /* the service's answer object (owned); NULL only on NOMEM */
    struct prover_result *result; /* 200: the proof (owned); else NULL */
    struct model_diags *diags;    /* 400: the loaders' diagnostics (owned) or NULL */
    const char *error;            /* 400/500: the error code (static); 200: NULL */
    struct prover_grants grants;  /* 200 of a prove job: what the change grants */
    struct json_t *warnings;      /* 200: the "warnings" array of 'body' (borrowed from it):
                                    * {"code","location","message"} each, once */
};

/* Run job 'job' on session 's' (borrowed; one per thread) and fill 'out'
 * (overwritten; always filled, at worst with a 500). */
void prover_job_run(struct prover_session *s, const struct prover_job *job,
                    struct prover_answer *out);

/* Environment of a job built from a request body. */
struct prover_job_env {
    const struct model_registry *reg; /* borrowed; NULL = empty registry */
    unsigned timeout_ms;              /* when the body has no options.timeout_ms; 0 = default */
    unsigned max_timeout_ms;          /* bound of options.timeout_ms */
    prover_job_cache_fn cache;        /* optional, as in struct prover_job */
    void *cache_arg;
    unsigned warn_flags; /* as in struct prover_job */
};

/* Run the job of a decoded body 'b' of kind PROVER_BODY_PROVE or
 * PROVER_BODY_CHECK (documents named after their fields). */
void prover_job_run_body(struct prover_session *s, enum prover_body_kind kind,
                         const struct prover_body *b, const struct prover_job_env *env,
                         struct prover_answer *out);

/* THE IN-PROCESS ENTRY POINT: given the JSON body 'json'/'len' of a
 * POST /v1/prove ('kind' PROVER_JOB_PROVE) or /v1/check request, fill 'out'
 * with exactly the status and JSON body proviso-prover answers (a body that
 * does not decode is the service's 400). 'env' may be NULL: embedded
 * defaults, no registry, timeouts up to 30000 ms. Nothing is cached. */
void prover_job_answer(struct prover_session *s, enum prover_job_kind kind, const char *json,
                       size_t len, const struct prover_job_env *env, struct prover_answer *out);

/* Fill 'out' with the answer to a body that did not decode: 'res' from
 * prover_body_decode and its message 'msg'. 'verdict': add
 * "verdict":"invalid" to a 400 (prove and check do, discover does not). */
void prover_answer_body_error(struct prover_answer *out, pv_result res, const char *msg,
                              bool verdict);
/* Fill 'out' with the answer to document 'name' failing to load with error
 * code 'code' (e.g. "invalid_policy"), diagnostics 'diags' (borrowed) and
 * error 'err': a 400 {"verdict":"invalid","error","detail","diagnostics"}
 * when there are diagnostics, else {"error","detail":"NAME: strerror"} with
 * 400 for an input error category and 500 ("internal") for ours. */
void prover_answer_diags(struct prover_answer *out, const char *code, const char *name,
                         struct model_diags *diags, int err);
/* Free what 'a' owns and zero it. NULL is a no-op. */
void prover_answer_free(struct prover_answer *a);

#endif
