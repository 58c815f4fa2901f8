/* SPDX-License-Identifier: Apache-2.0 */
/* prover.h - public API of libprover: what new authority does a change grant?
 *
 * Given a baseline policy B, a candidate C, a credential set and the binary
 * registry, prover_run() decides with Z3 which requests C allows that B does
 * not, and sorts them into categories (docs/semantics.md is the definition of
 * "allows"; DESIGN.md "The prover" the definition of the categories). Every
 * reported path carries a concrete witness request that was re-checked with
 * the concrete evaluator (model_decide). Results are three-valued: EMPTY
 * (provably nothing new), FINDINGS, or UNKNOWN (timeout, limit, internal
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
    unsigned timeout_ms;                  /* whole-proof budget; 0 = default 2000 */
};

enum prover_verdict {
    PROVER_VERDICT_EMPTY,
    PROVER_VERDICT_FINDINGS,
    PROVER_VERDICT_UNKNOWN,
    PROVER_VERDICT_WITHIN,
    PROVER_VERDICT_EXCEEDS,
};

/* Categories, in report order. */
enum prover_category {
    PROVER_CAT_LINK_LOCAL,
    PROVER_CAT_L7_BYPASS,
    PROVER_CAT_CRED_REACH,
    PROVER_CAT_CAPABILITY,
    PROVER_CAT_PRIVATE_REACH,
    PROVER_CAT_BOUNDARY, /* CHECK mode: a request outside the boundary */
};
#define PROVER_CAT__COUNT 6

/* A concrete request that the candidate allows and the baseline does not. */
struct prover_witness {
    char *binary;
    char *host;      /* normalised host text (DNS name or canonical IP) */
    uint16_t port;
    char *method;
    char *path;      /* canonical path */
    char *query;     /* raw query string (percent-encoded), "" when none */
    char *ip;        /* destination address text */
    char *api, *action, *risk; /* API registry annotation, NULL when unknown */
};

struct prover_path {
    enum prover_category cat;
    char *binary;    /* binary pattern as written */
    char *host;      /* endpoint host pattern as written ("*" for hostless) */
    uint16_t port;
    char *method;    /* capability paths only, else NULL */
    char *rule;      /* candidate rule key */
    enum model_route route; /* route of the witness under the candidate */
    char **creds;    /* names of credentials covering the witness host */
    size_t ncreds;
    struct prover_witness w;
};

struct prover_result {
    enum prover_verdict verdict;
    char *reason;          /* UNKNOWN: why; else NULL */
    struct prover_path *paths; /* sorted by category, binary, host, port, method */
    size_t npaths;
    double elapsed_ms;
    char inputs_sha256[65];
    /* statistics */
    size_t nqueries;       /* solver checks */
    size_t nunits;         /* units in the slice */
    size_t ndelta;         /* delta units */
    double ms_units;       /* units, fingerprints, inputs hash, delta, slice */
    double ms_encode;      /* atoms and Z3 terms */
    double ms_solve;       /* questions, witnesses, re-checks */
};

/* Run one proof. Never fails on policy content: limits, timeouts and
 * internal errors give verdict UNKNOWN with a reason. Returns NULL only on
 * NOMEM (pv_errno set). New reference; free with prover_result_free. */
struct prover_result *prover_run(struct prover_session *s, const struct prover_input *in);
void prover_result_free(struct prover_result *r);

const char *prover_category_name(enum prover_category c);
const char *prover_verdict_name(enum prover_verdict v);
/* Number of categories with at least one path. */
size_t prover_result_ncategories(const struct prover_result *r);

/* The reference's validation_result text (advisor.md 1.8): "prover: no new
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

#endif
