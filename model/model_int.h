/* SPDX-License-Identifier: Apache-2.0 */
/* model_int.h - field layout of the policy object model (model/ internal)
 *
 * Only files under model/ include this header. Other folders use the opaque
 * types and accessors of model.h. Every string is NUL-terminated and owned by
 * the struct that holds it; every list is an array plus a count. Marks are
 * 1-based line/column of the value in the source document (0 = unknown, e.g.
 * for objects built by merge).
 *
 * Invariant after model_policy_validate() succeeded: rules are sorted by key,
 * keys are unique, every endpoint has nports >= 1 (port and ports are folded
 * into ports[], sorted and de-duplicated, "port" = ports[0]), methods are
 * upper-case, hosts are lower-case without a trailing dot.
 */
#ifndef MODEL_INT_H
#define MODEL_INT_H

#include <jansson.h>
#include <string.h>

#include "common/pv.h"
#include "model/model.h"
#include "model/model_graphql.h"

struct model_mark {
    uint32_t line;
    uint32_t col;
};

/* A string value with its source location. */
struct model_sval {
    char *s; /* NULL = absent */
    struct model_mark mark;
};

struct model_strlist {
    struct model_sval *v;
    size_t n;
    struct model_mark mark; /* of the list itself */
};

/* Query matcher: one key, one or more value globs.
 *   form STRING: `key: "glob"`; GLOB: `key: {glob: "..."}`; ANY: `key: {any: [...]}` */
enum model_qform { MODEL_QFORM_STRING, MODEL_QFORM_GLOB, MODEL_QFORM_ANY };

struct model_query {
    struct model_sval key;
    enum model_qform form;
    struct model_strlist globs;
    struct model_glob **compiled; /* one per glob, filled by model_policy_compile */
};

/* An L7 allow matcher (`rules[].allow`) or a deny rule (`deny_rules[]`). */
struct model_l7rule {
    struct model_sval method;  /* upper-cased; "*" = any */
    struct model_sval path;    /* glob; "**" = any */
    struct model_sval command; /* SQL */
    struct model_query *query;
    size_t nquery;
    struct model_sval operation_type; /* GraphQL */
    struct model_sval operation_name;
    struct model_strlist fields;
    struct model_sval tool; /* MCP */
    json_t *params;         /* MCP, opaque, owned */
    struct model_mark mark;
    struct model_glob *path_glob; /* compiled; NULL = no path (matches any) */
    /* Compiled GraphQL matcher (docs/semantics.md#graphql-allow): bit t set
     * for each enum model_gql_optype the rule's operation_type names; 0 = not
     * a GraphQL rule. name_glob NULL = any name; field_globs one per field. */
    uint8_t gql_types;
    struct model_glob *name_glob;
    struct model_glob **field_globs;
    /* Compiled JSON-RPC/MCP matcher (docs/semantics.md#rpc-rules), on
     * json-rpc and mcp endpoints only: the method as a query-dialect glob
     * (NULL: no method, or json-rpc's "*"), and one glob per tool pattern
     * (model_l7rule_tool_at; ntools 0 = no tool selector). */
    struct model_glob *rpc_method_glob;
    struct model_glob **tool_globs;
    size_t ntools;
};

/* The tool patterns of a rule: `tool`, or `params.name` as a string, a
 * {glob: ...} or an {any: [...]} matcher (docs/semantics.md#rpc-rules).
 * Count, and the i-th pattern (borrowed; NULL past the end). */
size_t model_l7rule_ntools(const struct model_l7rule *r);
const char *model_l7rule_tool_at(const struct model_l7rule *r, size_t i);

struct model_gql_persisted {
    struct model_sval id;
    struct model_sval operation_type;
    struct model_sval operation_name;
    struct model_strlist fields;
    /* Filled by model_policy_compile(): the entry as the operation it stands
     * for (docs/semantics.md#graphql-persisted); fields borrowed from
     * 'fields' (op.fields is an owned array of borrowed pointers), nfields 0
     * when the entry lists none. */
    struct model_gql_op op;
    bool op_ok; /* operation_type parsed */
};

struct model_endpoint {
    struct model_sval host; /* lower-case, no trailing dot; NULL or "" = hostless */
    uint16_t *ports;        /* sorted, unique */
    size_t nports;
    bool port_given, ports_given; /* which spelling the source used */
    struct model_mark port_mark;
    uint16_t port_written; /* the `port` value as written (0 = absent) */
    struct model_mark port_written_mark;
    struct model_sval path;     /* endpoint path scope glob */
    struct model_sval protocol; /* as written (validated) */
    enum model_protocol proto;
    struct model_sval tls; /* as written */
    bool tls_skip;
    struct model_sval enforcement; /* as written */
    bool enforce;                  /* true only for "enforce" */
    struct model_sval access;      /* as written */
    enum model_access access_preset;
    struct model_l7rule *rules; /* allow rules, as written (presets NOT expanded) */
    size_t nrules;
    bool rules_given;
    struct model_l7rule *deny_rules;
    size_t ndeny;
    bool deny_given;
    struct model_strlist allowed_ips;
    struct model_strlist resolved_ips; /* proviso extension: a target_sandbox's peer
                                        * addresses, written by composition */
    struct model_cidr *cidrs;          /* parsed allowed_ips or resolved_ips, filled by validate */
    size_t ncidrs;
    bool allow_encoded_slash;
    bool websocket_credential_rewrite;
    bool request_body_credential_rewrite;
    bool allow_uninspected_credentials;
    struct model_sval persisted_queries;
    struct model_gql_persisted *gql_persisted;
    size_t ngql_persisted;
    uint32_t graphql_max_body_bytes;
    struct model_sval credential_signing;
    struct model_sval signing_service;
    struct model_sval signing_region;
    struct model_sval credential_binding_provider;
    bool has_json_rpc;
    uint32_t json_rpc_max_body_bytes;
    bool has_mcp;
    uint32_t mcp_max_body_bytes;
    bool mcp_strict_tool_names;
    bool mcp_strict_given; /* strict_tool_names was written (else it is on) */
    bool mcp_allow_all_known_methods;
    struct model_sval target_sandbox; /* proviso extension */
    bool advisor_proposed;            /* proviso extension (set by proposal merge) */
    struct model_mark mark;

    /* Filled by model_policy_compile(). */
    struct model_glob *host_glob; /* NULL for hostless endpoints */
    char *fp;                     /* compiled: the fingerprint (owned), NUL-terminated */
    size_t fplen;
    uint64_t fphash;                /* pv_hash64(fp, fplen, MODEL_FP_HASH_SEED) */
    bool host_is_ip;                /* host is an IP literal */
    struct model_ip host_ip;        /* when host_is_ip */
    struct model_glob *path_glob;   /* endpoint path scope, NULL = any */
    struct model_l7rule *eff_rules; /* allow rules with the access preset expanded */
    size_t neff_rules;
    bool rpc_tool_narrowed; /* mcp: some allow rule selects tools (docs/semantics.md#rpc-profile) */
};

/* The members that own memory, one table per struct (the policy field
 * tables, docs/architecture.md#tables): X(KIND, member, count, elem).
 * Every other member is a value (bool, enum, number, mark) that a struct
 * copy carries. model_fields_copy (model_copy.c) and model_fields_clear
 * (model_policy.c) walk the rows of any of these structs; the evaluator and
 * the prover read the members directly. A new owning member is a row in its
 * struct's table (a new value member needs none; tests/check_model_fields.c
 * lists the values so that a member in neither list fails). KIND:
 *   SVAL      struct model_sval                         copied, cleared
 *   STRLIST   struct model_strlist                      copied, cleared
 *   CSTR      char *, NUL-terminated                    copied, freed
 *   JSON      json_t * (opaque)                         deep-copied, released
 *   ARRAY     elem[count], plain values                 copied, freed
 *   L7RULES   struct model_l7rule[count]                copied, cleared
 *   QUERIES   struct model_query[count]                 copied, cleared
 *   GQLPQ     struct model_gql_persisted[count]         copied, cleared
 *   ENDPOINTS struct model_endpoint[count]              copied, cleared
 *   BINARIES  struct model_binary[count]                copied, cleared
 *   GLOB      compiled struct model_glob *              not copied, freed
 *   GLOBS     compiled struct model_glob *[count]       not copied, freed
 *   STR       compiled owned block (count: its length)  not copied, freed
 *   L7EFF     compiled struct model_l7rule[count]       not copied, cleared
 *   CVAL      compiled value of type elem               not copied (zero)
 * 'count' names the member itself and 'elem' is char where they mean
 * nothing; a count may be a member of another row (GLOBS: the patterns'
 * list), which is why the compiled rows are released first. */
#define MODEL_ENDPOINT_OWNED(X)                                             \
    X(SVAL, host, host, char)                                               \
    X(ARRAY, ports, nports, uint16_t)                                       \
    X(SVAL, path, path, char)                                               \
    X(SVAL, protocol, protocol, char)                                       \
    X(SVAL, tls, tls, char)                                                 \
    X(SVAL, enforcement, enforcement, char)                                 \
    X(SVAL, access, access, char)                                           \
    X(L7RULES, rules, nrules, char)                                         \
    X(L7RULES, deny_rules, ndeny, char)                                     \
    X(STRLIST, allowed_ips, allowed_ips, char)                              \
    X(STRLIST, resolved_ips, resolved_ips, char)                            \
    X(ARRAY, cidrs, ncidrs, struct model_cidr)                              \
    X(SVAL, persisted_queries, persisted_queries, char)                     \
    X(GQLPQ, gql_persisted, ngql_persisted, char)                           \
    X(SVAL, credential_signing, credential_signing, char)                   \
    X(SVAL, signing_service, signing_service, char)                         \
    X(SVAL, signing_region, signing_region, char)                           \
    X(SVAL, credential_binding_provider, credential_binding_provider, char) \
    X(SVAL, target_sandbox, target_sandbox, char)                           \
    X(GLOB, host_glob, host_glob, char)                                     \
    X(GLOB, path_glob, path_glob, char)                                     \
    X(STR, fp, fplen, char)                                                 \
    X(L7EFF, eff_rules, neff_rules, char)                                   \
    X(CVAL, fphash, fphash, uint64_t)                                       \
    X(CVAL, host_is_ip, host_is_ip, bool)                                   \
    X(CVAL, host_ip, host_ip, struct model_ip)                              \
    X(CVAL, rpc_tool_narrowed, rpc_tool_narrowed, bool)

/* An L7 rule (allow matcher or deny rule). */
#define MODEL_L7RULE_OWNED(X)                       \
    X(SVAL, method, method, char)                   \
    X(SVAL, path, path, char)                       \
    X(SVAL, command, command, char)                 \
    X(QUERIES, query, nquery, char)                 \
    X(SVAL, operation_type, operation_type, char)   \
    X(SVAL, operation_name, operation_name, char)   \
    X(STRLIST, fields, fields, char)                \
    X(SVAL, tool, tool, char)                       \
    X(JSON, params, params, char)                   \
    X(GLOB, path_glob, path_glob, char)             \
    X(CVAL, gql_types, gql_types, uint8_t)          \
    X(GLOB, name_glob, name_glob, char)             \
    X(GLOBS, field_globs, fields.n, char)           \
    X(GLOB, rpc_method_glob, rpc_method_glob, char) \
    X(GLOBS, tool_globs, ntools, char)              \
    X(CVAL, ntools, ntools, size_t)

/* A query matcher of an L7 rule ('form' is a value). */
#define MODEL_QUERY_OWNED(X)       \
    X(SVAL, key, key, char)        \
    X(STRLIST, globs, globs, char) \
    X(GLOBS, compiled, globs.n, char)

/* A GraphQL persisted query entry; 'op' is compiled (its fields array is
 * owned, the strings it points at are borrowed from 'fields'). */
#define MODEL_GQLPQ_OWNED(X)                      \
    X(SVAL, id, id, char)                         \
    X(SVAL, operation_type, operation_type, char) \
    X(SVAL, operation_name, operation_name, char) \
    X(STRLIST, fields, fields, char)              \
    X(CVAL, op, op, struct model_gql_op)          \
    X(STR, op.fields, op.nfields, char)           \
    X(CVAL, op_ok, op_ok, bool)

/* The endpoint's members that canonical output writes as one key each
 * (model_canon.c; the policy field table's second part): X(KIND, key,
 * member), KIND STR (a model_sval, written when not empty), STRLIST
 * (written when not empty), BOOL (written when true) or U32 (written when
 * not 0). Ports, L7 rules, persisted queries and the nested json_rpc, mcp
 * and credential_binding objects are written by hand there. */
#define MODEL_ENDPOINT_CANON(X)                                                 \
    X(STR, "host", host)                                                        \
    X(STR, "path", path)                                                        \
    X(STR, "protocol", protocol)                                                \
    X(STR, "tls", tls)                                                          \
    X(STR, "enforcement", enforcement)                                          \
    X(STR, "access", access)                                                    \
    X(STRLIST, "allowed_ips", allowed_ips)                                      \
    X(BOOL, "allow_encoded_slash", allow_encoded_slash)                         \
    X(BOOL, "websocket_credential_rewrite", websocket_credential_rewrite)       \
    X(BOOL, "request_body_credential_rewrite", request_body_credential_rewrite) \
    X(BOOL, "allow_uninspected_credentials", allow_uninspected_credentials)     \
    X(STR, "persisted_queries", persisted_queries)                              \
    X(U32, "graphql_max_body_bytes", graphql_max_body_bytes)                    \
    X(STR, "credential_signing", credential_signing)                            \
    X(STR, "signing_service", signing_service)                                  \
    X(STR, "signing_region", signing_region)                                    \
    X(STR, "target_sandbox", target_sandbox)                                    \
    X(STRLIST, "resolved_ips", resolved_ips)                                    \
    X(BOOL, "advisor_proposed", advisor_proposed)

/* The other structs' canonical output (model_canon.c), in the order the
 * keys are written (the YAML form keeps it): the kinds above and JSON (an
 * opaque value, written sorted when present), STRALL (a string written
 * always, absent as ""), and the lists QUERY, ENDPOINTS and BINARIES
 * (written when the member's count, n<member>, is not 0). A rule's key and
 * a persisted query's id are map keys and written by hand. */
#define MODEL_L7RULE_CANON(X)                \
    X(STR, "method", method)                 \
    X(STR, "path", path)                     \
    X(STR, "command", command)               \
    X(QUERY, "query", query)                 \
    X(STR, "operation_type", operation_type) \
    X(STR, "operation_name", operation_name) \
    X(STRLIST, "fields", fields)             \
    X(STR, "tool", tool)                     \
    X(JSON, "params", params)

#define MODEL_GQLPQ_CANON(X)                 \
    X(STR, "operation_type", operation_type) \
    X(STR, "operation_name", operation_name) \
    X(STRLIST, "fields", fields)

#define MODEL_BINARY_CANON(X) X(STRALL, "path", path)

#define MODEL_RULE_CANON(X)              \
    X(STR, "name", name)                 \
    X(ENDPOINTS, "endpoints", endpoints) \
    X(BINARIES, "binaries", binaries)

enum model_fkind {
    MODEL_FK_SVAL,
    MODEL_FK_STRLIST,
    MODEL_FK_CSTR,
    MODEL_FK_JSON,
    MODEL_FK_ARRAY,
    MODEL_FK_L7RULES,
    MODEL_FK_QUERIES,
    MODEL_FK_GQLPQ,
    MODEL_FK_ENDPOINTS,
    MODEL_FK_BINARIES,
    MODEL_FK_GLOB,
    MODEL_FK_GLOBS,
    MODEL_FK_STR,
    MODEL_FK_L7EFF,
    MODEL_FK_CVAL,
};

/* One row of a field table: where the member is and what it holds. */
struct model_fdesc {
    const char *name;
    enum model_fkind kind;
    size_t off;       /* offsetof the member */
    size_t count_off; /* offsetof its count (size_t), when it has one */
    size_t elem;      /* ARRAY: the element's size; CVAL: the member's */
};

/* A struct's table (model_policy.c): its rows and its size. */
struct model_ftable {
    const char *name;
    const struct model_fdesc *rows;
    size_t nrows;
    size_t size;
};

extern const struct model_ftable model_endpoint_table;
extern const struct model_ftable model_l7rule_table;
extern const struct model_ftable model_query_table;
extern const struct model_ftable model_gqlpq_table;
extern const struct model_ftable model_binary_table;
extern const struct model_ftable model_rule_table;
/* The endpoint's rows and their number (model_endpoint_table's). */
extern const struct model_fdesc model_endpoint_fields[];
extern const size_t model_endpoint_nfields;

/* Whether rows of 'kind' are filled by model_policy_compile() (never
 * copied, released before the source rows). */
bool model_fkind_compiled(enum model_fkind kind);
/* The table of the elements of an array row of 'kind' (L7RULES, L7EFF,
 * QUERIES, GQLPQ, ENDPOINTS, BINARIES), or NULL. */
const struct model_ftable *model_felem_table(enum model_fkind kind);
/* The bytes a member of row 'f' takes in its struct. */
size_t model_fdesc_size(const struct model_fdesc *f);
/* Release everything the struct at 'obj' owns by table 't' and zero it
 * (model_policy.c). */
void model_fields_clear(const struct model_ftable *t, void *obj);
/* Deep copy by table 't' (model_copy.c): the values by a struct copy, each
 * source row anew, compiled rows zero; on failure 'dst' holds a partial
 * copy that model_fields_clear releases. */
pv_result model_fields_copy(const struct model_ftable *t, void *dst, const void *src) PV_WUR;

struct model_binary {
    struct model_sval path;
    bool harness; /* accepted for compatibility, never emitted */
    struct model_mark mark;
    struct model_glob *glob; /* filled by model_policy_compile() */
};

struct model_rule {
    char *key; /* map key */
    struct model_mark key_mark;
    struct model_sval name; /* optional display name */
    struct model_endpoint *endpoints;
    size_t nendpoints;
    struct model_binary *binaries;
    size_t nbinaries;
    struct model_mark mark;
    /* compiled (model_rule_fp): the endpoint fingerprints and binary
     * patterns, length-prefixed, in order; owned */
    char *fp;
    size_t fplen;
    uint64_t fphash; /* pv_hash64(fp, fplen, MODEL_FP_HASH_SEED) */
};

/* A binary pattern of a rule. */
#define MODEL_BINARY_OWNED(X) \
    X(SVAL, path, path, char) \
    X(GLOB, glob, glob, char)

/* A rule (one network_policies entry). */
#define MODEL_RULE_OWNED(X)                   \
    X(CSTR, key, key, char)                   \
    X(SVAL, name, name, char)                 \
    X(ENDPOINTS, endpoints, nendpoints, char) \
    X(BINARIES, binaries, nbinaries, char)    \
    X(STR, fp, fplen, char)                   \
    X(CVAL, fphash, fphash, uint64_t)

struct model_policy {
    char *file; /* source name for diagnostics (owned) */
    bool has_version;
    uint32_t version;
    struct model_mark version_mark;
    bool has_fs;
    bool include_workdir;
    struct model_strlist fs_read_only;
    struct model_strlist fs_read_write;
    struct model_mark fs_mark;
    struct model_sval landlock_compat;
    bool has_landlock;
    struct model_sval run_as_user;
    struct model_sval run_as_group;
    bool has_process;
    struct model_rule *rules; /* sorted by key after validate */
    size_t nrules;
    json_t *middlewares; /* network_middlewares, opaque, owned; NULL = absent */
    struct model_mark middlewares_mark;

    /* Filled by model_policy_compile(). */
    bool compiled;
    struct model_index *index; /* evaluator lookup structure (model_index.c) */
    char net_sha[65];          /* compiled: model_policy_network_digest() */
};

/* ---------------------------------------------------------------------------
 * The evaluator index (model_index.c): built by model_policy_compile()
 * (model_compile.c), read by model_decide() (model_eval.c)
 * ------------------------------------------------------------------------- */

#define EVAL_NONE UINT32_MAX /* no endpoint / rule / unit index */

enum ix_host_kind {
    IXH_NONE,     /* empty host without allowed_ips: matches nothing */
    IXH_HOSTLESS, /* docs/semantics.md#hostless */
    IXH_IP,       /* IP literal host, compared as an address */
    IXH_EXACT,    /* DNS name without '*', compared as a string */
    IXH_WILD,     /* host glob, DNS names only */
};

/* How endpoint 'e' of a compiled policy matches a host: the index's and
 * model_endpoint_matches_host's one answer. */
enum ix_host_kind model_ix_host_kind(const struct model_endpoint *e);

/* How a unit grants a request (docs/semantics.md#grant). */
enum ix_grant {
    IXG_L4,          /* L4 endpoint: every request */
    IXG_AUDIT,       /* L7, not enforced: every request (audit) */
    IXG_RULES,       /* enforced rest/websocket: allow rules, deny rules */
    IXG_UNSUPPORTED, /* enforced sql: nothing */
    IXG_GRAPHQL,     /* enforced graphql: GraphQL allow and deny rules */
    IXG_RPC,         /* enforced json-rpc/mcp: call allow and deny rules */
};

/* One (rule, endpoint) pair; the rule's binaries complete it to units. */
struct ix_ep {
    const struct model_rule *rule;
    const struct model_endpoint *ep;
    uint32_t rule_idx;
    uint8_t host_kind; /* enum ix_host_kind */
    uint8_t grant;     /* enum ix_grant */
    bool l7;
    bool rest_like;    /* protocol rest or websocket (rules are matchable) */
    bool unresolved;   /* target_sandbox without addresses */
    bool lo_only;      /* target_sandbox whose addresses are all loopback: admits
                        * something only under the test switch */
    uint8_t nports;    /* ports inline when at most IX_INLINE_PORTS, else 0 */
    uint16_t ports[4]; /* copy of the endpoint's first ports (cache locality) */
};

/* One binary pattern of a rule. */
struct ix_bin {
    const char *s;
    size_t len;
    const struct model_glob *g; /* NULL when the pattern is literal */
};

#define IX_INLINE_PORTS 4u

enum ix_tag { IXT_DNS = 1, IXT_IP = 2, IXT_SUFFIX = 3 };

struct ix_slot {
    uint64_t h;
    const char *key; /* borrowed from the policy */
    uint32_t klen;
    uint32_t tag;   /* enum ix_tag */
    uint32_t first; /* into members[] */
    uint32_t count; /* 0: empty slot */
};

struct model_index {
    struct ix_ep *eps;
    size_t neps;
    struct ix_bin *bins;
    size_t *rule_bin; /* rule i owns bins[rule_bin[i] .. rule_bin[i + 1]) */
    size_t nrules;
    struct ix_slot *slots;
    size_t nslots; /* power of two, or 0 */
    uint32_t *members;
    uint32_t *hostless;
    size_t nhostless;
    uint32_t *wild_any; /* wildcard hosts without a literal suffix */
    size_t nwild_any;
    uint64_t suffix_labels; /* bit n: some suffix key has n labels (bit 63: n >= 63) */
};

/* Build p->index from a policy whose patterns are compiled. */
pv_result model_index_build(struct model_policy *p) PV_WUR;
/* Free the evaluator index; NULL is a no-op. */
void model_index_free(struct model_index *ix);
/* The slot holding (tag, key), or NULL. */
const struct ix_slot *model_ix_lookup(const struct model_index *ix, uint32_t tag, const char *key,
                                      size_t klen);
/* Label count of the name s[0 .. len), capped at 63: its bit in suffix_labels. */
unsigned model_label_bit(const char *s, size_t len);

/* ---------------------------------------------------------------------------
 * Diagnostics
 * ------------------------------------------------------------------------- */

struct model_diag {
    char *file;
    struct model_mark mark;
    char *msg;
    char *line; /* "FILE:LINE:COL: msg", formatted lazily by model_diags_line */
};

struct model_diags {
    struct model_diag *v;
    size_t n;
};

/* Append "msg" (printf-style) at mark. Returns PV_ERR_NOMEM only. */
pv_result model_diag_add(struct model_diags *d, const char *file, struct model_mark mark,
                         const char *fmt, ...) PV_WUR __attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------------------------
 * Construction helpers shared by the YAML and JSON readers (model_policy.c)
 * ------------------------------------------------------------------------- */

/* GraphQL operation helpers (model_gql_op.c). */
bool model_gql_optype_parse(const char *s, enum model_gql_optype *out);
bool model_gql_name_valid(const char *s, size_t len);

void model_sval_clear(struct model_sval *v);
void model_strlist_clear(struct model_strlist *l);
void model_l7rule_clear(struct model_l7rule *r);
void model_endpoint_clear(struct model_endpoint *e);
void model_rule_clear(struct model_rule *r);
/* What a target_sandbox endpoint admits (model_peers.c,
 * docs/semantics.md#target-sandbox): the one definition the evaluator's
 * index and the prover's view both read. */
enum model_peer_state {
    MODEL_PEER_NONE,       /* no target_sandbox */
    MODEL_PEER_UNRESOLVED, /* no resolved_ips: admits nothing */
    MODEL_PEER_LOOPBACK,   /* only loopback addresses: only the test switch admits them */
    MODEL_PEER_RESOLVED,   /* an address that is not always-blocked */
};
enum model_peer_state model_endpoint_peer_state(const struct model_endpoint *e);

/* Deep copies (model_copy.c): source fields only, compiled fields are not
 * copied; 'dst' zeroed, a partial copy on failure (PV_ERR_NOMEM). */
pv_result model_sval_copy(struct model_sval *dst, const struct model_sval *src) PV_WUR;
pv_result model_strlist_copy(struct model_strlist *dst, const struct model_strlist *src) PV_WUR;
pv_result model_l7rule_copy(struct model_l7rule *dst, const struct model_l7rule *src) PV_WUR;
/* Equality used for "append uniquely" by the merge and the proposal reader
 * (model_copy.c): methods ignore ASCII case, everything else is exact. */
bool model_l7rule_eq(const struct model_l7rule *a, const struct model_l7rule *b);
bool model_l7rules_contain(const struct model_l7rule *v, size_t n, const struct model_l7rule *r);

/* A policy.local proposal (model_proposal.c), merged by model_merge.c. */
#define MODEL_PROPOSAL_MAX_OPERATIONS 256
#define MODEL_PROVIDER_PREFIX "_provider_"

struct model_proposal_op {
    char *rule_name;        /* resolved target key */
    struct model_rule rule; /* validated; key = rule_name */
    struct model_mark mark; /* of the addRule object */
};

struct model_proposal {
    char *file;
    char *intent_summary; /* NULL = absent */
    struct model_proposal_op *ops;
    size_t nops;
};

/* Rule keys of provider profiles (`_provider_*`) are never merge targets. */
static inline bool model_key_is_provider(const char *key)
{
    return key != NULL &&
           strncmp(key, MODEL_PROVIDER_PREFIX, sizeof(MODEL_PROVIDER_PREFIX) - 1) == 0;
}

pv_result model_endpoint_copy(struct model_endpoint *dst, const struct model_endpoint *src) PV_WUR;
pv_result model_rule_copy(struct model_rule *dst, const struct model_rule *src) PV_WUR;

/* Generic document tree, produced by the YAML and JSON readers, consumed by
 * one schema walker (model_schema.c) so that both formats share the same
 * validation of shapes and the same messages. */
/* enum model_node_kind is in model.h (the read-only node API). */
struct model_node {
    enum model_node_kind kind;
    struct model_mark mark;
    char *scalar; /* SCALAR: the text */
    size_t scalar_len;
    bool quoted;               /* SCALAR: was quoted (YAML) or a JSON string */
    bool json_typed;           /* SCALAR from JSON: json_type says what it was */
    int json_type;             /* JSON_STRING/JSON_INTEGER/JSON_TRUE/... */
    struct model_node **items; /* SEQ: items; MAP: alternating key, value */
    size_t nitems;             /* SEQ: count; MAP: 2 * pairs */
};

/* The value of mapping key 'key' of 'map', or NULL (model_node.c). */
const struct model_node *model_node_member(const struct model_node *map, const char *key);
/* Read a bounded YAML or JSON document and find its top-level key 'key'
 * (model_policy.c): the tree to free, with '*part' inside it; NULL with a
 * diagnostic when the document is unreadable or has no such key. */
struct model_node *model_read_member(const char *file, const char *buf, size_t len, const char *key,
                                     struct model_diags *diags, const struct model_node **part);

/* Parse a YAML document into a node tree (model_yaml.c). On error returns NULL
 * and adds a diagnostic. Duplicate map keys, anchors/aliases, multiple
 * documents and non-scalar keys are errors. 'len' bounded by the caller. */
struct model_node *model_yaml_read(const char *file, const char *buf, size_t len,
                                   struct model_diags *diags);
/* Same, with duplicate keys kept in the tree when 'dup_ok' (the last one
 * wins in a JSON object made from it). */
struct model_node *model_yaml_read_dup(const char *file, const char *buf, size_t len, bool dup_ok,
                                       struct model_diags *diags);
/* Same for JSON (model_json.c); marks are line/column from jansson. */
struct model_node *model_json_read(const char *file, const char *buf, size_t len,
                                   struct model_diags *diags);
/* Walk a node tree into a policy (model_schema.c). Unknown keys and wrong
 * types are diagnostics. Returns NULL when any diagnostic was added. */
struct model_policy *model_schema_policy(const char *file, const struct model_node *root,
                                         struct model_diags *diags);
/* Same, but when every diagnostic it added is an unknown field (the walker
 * skipped those keys, the rest is whole) it returns the policy (caller
 * frees) so that validation can report in the same run; the load still
 * fails. */
struct model_policy *model_schema_policy_partial(const char *file, const struct model_node *root,
                                                 struct model_diags *diags);
/* Walk a single rule object (used for proposals). */
pv_result model_schema_rule(const char *file, const struct model_node *n, struct model_rule *out,
                            struct model_diags *diags) PV_WUR;

/* ---------------------------------------------------------------------------
 * Node-tree helpers (model_node.c), shared by the strict readers of
 * credentials, registry descriptors, proposals and the policy schema (whose
 * objects are field tables walked by model_walk.c). All
 * pointers are borrowed; the getters' outputs are owned by the caller.
 * ------------------------------------------------------------------------- */

/* Where a walker reports: diagnostics go to 'diags' (NULL drops them) under
 * the name 'file'. */
struct model_node_ctx {
    const char *file;
    struct model_diags *diags;
};

/* Add a printf-style message (cut at 1 KiB) at 'm'; NULL 'd' is a no-op; on
 * NOMEM sets pv_errno (the walk goes on and the caller fails the load). */
void model_node_diag(struct model_diags *d, const char *file, struct model_mark m, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
void model_node_report(const struct model_node_ctx *c, struct model_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copy 'n' bytes of untrusted text into 'out' (NUL-terminated) for a message:
 * bytes outside printable ASCII become '?', and text that does not fit in
 * 'outlen' is cut and ends in "...". 'outlen' must be at least 8. */
void model_node_printable(char *out, size_t outlen, const char *s, size_t n);
/* True when 'k' is a scalar whose text is exactly 's'. */
bool model_node_key_is(const struct model_node *k, const char *s);
/* Index of 'k' in the NULL-terminated 'keys', or -1. */
int model_node_key_index(const struct model_node *k, const char *const *keys);
/* A string value: a YAML scalar (quoted or not) or a JSON string. */
bool model_node_is_string(const struct model_node *v);
/* 1 / 0 for a JSON true/false or a plain YAML true/false, otherwise -1. */
int model_node_bool(const struct model_node *v);
/* "unknown field 'k' in <where>" at the key. */
void model_node_unknown_key(const struct model_node_ctx *c, const struct model_node *k,
                            const char *where);

/* ---------------------------------------------------------------------------
 * Table-driven walking (model_walk.c): every document's objects are tables
 * of fields; see the file's head comment.
 * ------------------------------------------------------------------------- */

struct model_walk {
    const char *file;
    struct model_diags *diags;
    bool nomem; /* a message or a value could not be allocated */
};

struct model_field {
    const char *key;
    void (*fn)(struct model_walk *w, const struct model_field *f, const struct model_node *key,
               const struct model_node *v, void *obj);
    size_t off; /* of the destination member, for the generic handlers */
};

#define MODEL_FIELD_MEMBER(obj, f, type) ((type *)(void *)((char *)(obj) + (f)->off))

/* A message at 'mark' (sets w->nomem when it cannot be kept). */
void model_walk_err(struct model_walk *w, struct model_mark mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void model_walk_nomem(struct model_walk *w);
/* User text echoed in a message: control bytes become '?', long text is cut
 * at a UTF-8 boundary. 'out' has room for 80 bytes + "..." + NUL. */
#define MODEL_SHOWN_MAX 80
const char *model_walk_shown(char out[MODEL_SHOWN_MAX + 4], const char *s, size_t len);
/* Plain YAML decimal integer text: -?(0|[1-9][0-9]*). */
bool model_yaml_int_text(const char *s, size_t len);
/* An integer scalar: JSON integer, or plain YAML decimal without leading 0. */
bool model_node_is_int(const struct model_node *v);
/* The scalar's text (new), or NULL after model_walk_nomem. */
char *model_walk_dup(struct model_walk *w, const struct model_node *v);
void model_walk_set_sval(struct model_walk *w, struct model_sval *dst, const struct model_node *v);
/* An unsigned integer no larger than 'max'; false after reporting. */
bool model_walk_get_uint(struct model_walk *w, const char *what, const struct model_node *v,
                         uint64_t max, uint64_t *out);
/* Edit distance (insert, delete, substitute, swap of neighbours; ASCII case
 * ignored) between 'k' ('klen' bytes) and 'name', capped at 3: the measure
 * behind every "did you mean". */
size_t model_edit_distance(const char *k, size_t klen, const char *name);
/* Walk the pairs of 'map' through 'fields'; bit i of the result is set when
 * fields[i] was present (at most 64 fields). */
uint64_t model_walk_map(struct model_walk *w, const struct model_node *map, const char *ctx,
                        const struct model_field *fields, size_t nfields, void *obj);
bool model_walk_expect_map(struct model_walk *w, const char *what, const struct model_node *v);
/* Lists: null is absent (false without a message). */
bool model_walk_expect_list(struct model_walk *w, const char *what, const struct model_node *v);
void model_walk_strlist(struct model_walk *w, const char *what, const struct model_node *v,
                        struct model_strlist *l);
/* A list of objects in field 'f' ('v'): a zeroed array of its items (new)
 * of 'size' bytes each, '*n' of them, for the caller to read one by one;
 * NULL when there is nothing to read (null, [], reported: not a list, the
 * field given twice ('present'), no memory). */
void *model_walk_items(struct model_walk *w, const struct model_field *f,
                       const struct model_node *v, size_t size, bool present, size_t *n);
/* Generic handlers: struct model_sval, bool, uint32_t, struct model_strlist,
 * char * (no NUL). */
void model_field_sval(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj);
void model_field_bool(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj);
void model_field_u32(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj);
void model_field_strlist(struct model_walk *w, const struct model_field *f,
                         const struct model_node *key, const struct model_node *v, void *obj);
void model_field_cstr(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj);

#endif
