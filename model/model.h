/* SPDX-License-Identifier: Apache-2.0 */
/* model.h - the policy object model: public API of libmodel
 *
 * libmodel knows what an OpenShell sandbox policy is and what it allows:
 * parsing (YAML via libyaml, JSON via jansson) with file:line:col errors,
 * validation, canonical form and hash, proposal merge, the pattern languages
 * (host, path, binary and value globs compiled to automata; IP literals and
 * CIDRs), the concrete evaluator used by the proxy, credentials and the
 * binary/API registries. docs/semantics.md is the definition this code follows.
 *
 * Ownership vocabulary: "new" = caller frees with the matching _free;
 * "borrowed" = valid while the owning object lives; "steals" = takes ownership.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pv.h"
/* the GraphQL operation, its reader and its limits: public, so that the
 * proxy reads the operations it decides */
#include "model/model_graphql.h"
#include "model/model_rpc.h"

struct model_policy;
struct model_rule;
struct model_endpoint;
struct model_diags;

/* ===========================================================================
 * IP addresses and CIDRs (model_ip.c)
 * ========================================================================= */

/* All addresses live in one 128-bit space; IPv4 a.b.c.d is ::ffff:a.b.c.d. */
struct model_ip {
    uint8_t b[16];
};

struct model_cidr {
    struct model_ip net; /* host bits cleared */
    uint8_t prefix;      /* 0..128 in the 128-bit space (IPv4 /n is 96+n) */
};

/* Parse an IP literal in any spelling the proxy might meet: IPv4 dotted quad,
 * inet_aton forms (1-4 parts, decimal, octal with leading 0, hex with 0x),
 * IPv6 (RFC 4291 text, optional [brackets], embedded IPv4 tail, no zone).
 * Returns false if 's' is not an IP literal. */
bool model_ip_parse(const char *s, size_t len, struct model_ip *out);
/* Parse strictly: IPv4 only as canonical dotted quad (no leading zeros),
 * IPv6 text. Used for policy values (allowed_ips, host literals). */
bool model_ip_parse_strict(const char *s, size_t len, struct model_ip *out);
/* "a.b.c.d" or "a/n" (strict address). Host bits set are an error. */
bool model_cidr_parse(const char *s, size_t len, struct model_cidr *out, const char **why);
bool model_cidr_contains(const struct model_cidr *c, const struct model_ip *ip);
bool model_cidr_overlaps(const struct model_cidr *a, const struct model_cidr *b);
bool model_ip_is_v4(const struct model_ip *ip); /* ::ffff:0:0/96 */
/* Canonical text: dotted quad for v4-mapped, RFC 5952 otherwise. buf >= 46. */
void model_ip_format(const struct model_ip *ip, char *buf, size_t buflen);

/* Classification (docs/semantics.md#destinations). Link-local and loopback
 * are also recognised inside v4-mapped, v4-compatible (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16) forms. */
bool model_ip_is_link_local(const struct model_ip *ip);
bool model_ip_is_loopback(const struct model_ip *ip);       /* 127/8, ::1 */
bool model_ip_is_always_blocked(const struct model_ip *ip); /* loopback, link-local,
                                                               unspecified, multicast,
                                                               broadcast, 0/8 */
bool model_ip_is_private(const struct model_ip *ip);        /* internal but not always-blocked */
bool model_ip_is_public(const struct model_ip *ip);         /* neither of the above */
bool model_cidr_overlaps_always_blocked(const struct model_cidr *c);
bool model_cidr_overlaps_private(const struct model_cidr *c);
bool model_port_is_control_plane(uint16_t port); /* 2379 2380 6443 10250 10255 */
/* Metadata hostnames (metadata.google.internal, ...): normalised compare. */
bool model_host_is_metadata_name(const char *host, size_t len);
/* The fixed list, for the prover (NULL-terminated, borrowed). */
const char *const *model_metadata_names(void);

/* The fixed range tables (for the prover's bit-vector encoding). */
enum model_ip_class { MODEL_IPC_BLOCKED, MODEL_IPC_PRIVATE, MODEL_IPC_LINK_LOCAL };
size_t model_ip_class_ranges(enum model_ip_class cls, const struct model_cidr **out);

/* ===========================================================================
 * Pattern languages (model_glob.c, model_dfa.c)
 * ========================================================================= */

enum model_glob_kind {
    MODEL_GLOB_HOST,   /* labels split on '.', '*' within a label, leading '**.' */
    MODEL_GLOB_PATH,   /* '/' separator: '*' '?' '[..]' in a segment, '**' across */
    MODEL_GLOB_BINARY, /* same syntax as PATH */
    MODEL_GLOB_VALUE,  /* no separator: '*' matches anything (query values, names) */
};

struct model_glob; /* compiled pattern: a minimal DFA over bytes */

/* Compile 'pat'. HOST patterns and inputs are lower-cased by the caller.
 * On error returns NULL, sets pv_errno = PV_ERR_PATTERN and '*why' to a static
 * explanation. New reference. */
struct model_glob *model_glob_compile(enum model_glob_kind kind, const char *pat, size_t len,
                                      const char **why);
void model_glob_free(struct model_glob *g);
bool model_glob_match(const struct model_glob *g, const char *s, size_t len);
/* True when the pattern has no metacharacters; then it matches exactly
 * model_glob_text(g). */
bool model_glob_is_literal(const struct model_glob *g);
/* The length of the text of 'pat' before its first metacharacter in the
 * syntax of 'kind' (every string the pattern matches starts with it);
 * 'len' when the pattern is a literal. */
size_t model_glob_literal_prefix(enum model_glob_kind kind, const char *pat, size_t len);
const char *model_glob_text(const struct model_glob *g); /* the source, borrowed */
enum model_glob_kind model_glob_kind_of(const struct model_glob *g);

/* Automaton algebra for the prover. A "domain" is an extra language that
 * every witness must belong to (canonical paths, DNS names, absolute paths). */
enum model_domain {
    MODEL_DOMAIN_ANY,
    MODEL_DOMAIN_DNS_NAME,       /* lower-case host name, not an IP literal */
    MODEL_DOMAIN_CANONICAL_PATH, /* output language of model_path_canonicalize */
    MODEL_DOMAIN_ABS_PATH,       /* binary paths: canonical absolute paths (no empty, "."
                                  * or ".." segment, no trailing "/", no NUL) */
    MODEL_DOMAIN_QUERY_VALUE,    /* decoded query values: valid UTF-8, no NUL */
    MODEL_DOMAIN_GQL_NAME,       /* GraphQL Names: [_A-Za-z][_0-9A-Za-z]* */
};

struct model_lang_term {
    const struct model_glob *g; /* NULL = the extra "contains %2F" language */
    bool positive;              /* true: s in L(g); false: s not in L(g) */
};

enum model_lang_result {
    MODEL_LANG_EMPTY,
    MODEL_LANG_NONEMPTY,
    MODEL_LANG_LIMIT, /* the state bound was reached (or a usage error) */
    MODEL_LANG_NOMEM, /* an allocation failed: undecided, and not for a limit */
};

/* Is the intersection of the terms (within 'domain') non-empty? If so and
 * 'witness' is not NULL, store a shortest member (new, NUL-terminated,
 * preferring lower-case letters and digits). 'max_states' bounds the product
 * exploration; reaching it gives MODEL_LANG_LIMIT. */
enum model_lang_result model_lang_check(enum model_domain domain,
                                        const struct model_lang_term *terms, size_t nterms,
                                        size_t max_states, char **witness, size_t *wlen);
/* Is 's' a string of the domain (the language every witness must belong
 * to)? */
bool model_domain_has(enum model_domain d, const char *s, size_t len);

/* ===========================================================================
 * Diagnostics
 * ========================================================================= */

struct model_diags *model_diags_new(void);
void model_diags_free(struct model_diags *d);
size_t model_diags_count(const struct model_diags *d);
/* "FILE:LINE:COL: message" (borrowed; valid until the diags are freed). */
const char *model_diags_line(struct model_diags *d, size_t i);
/* Reorder the diagnostics by line, then column (stable; unlocated ones
 * last), so that one file's problems read top to bottom. Only meaningful
 * when they all point into one file. */
void model_diags_sort(struct model_diags *d);
/* Just the message text of diagnostic i (borrowed). */
const char *model_diags_msg(const struct model_diags *d, size_t i);
/* Does some diagnostic say the loader ran out of memory (the message
 * pv_strerror(PV_ERR_NOMEM))? Such a document was not shown invalid: the
 * caller answers a resource error, not "invalid". */
bool model_diags_nomem(const struct model_diags *d);

/* ===========================================================================
 * Policies: load, validate, emit (model_policy.c, model_schema.c,
 * model_yaml.c, model_json.c, model_validate.c, model_canon.c)
 * ========================================================================= */

enum model_format { MODEL_FMT_AUTO, MODEL_FMT_YAML, MODEL_FMT_JSON };

#define MODEL_MAX_POLICY_BYTES (4u * 1024u * 1024u)

/* Parse a policy document. 'file' names it in diagnostics. AUTO picks JSON
 * when the first non-blank byte is '{'. The policy is parsed, validated and
 * compiled (ready for model_decide). On failure returns NULL and fills
 * 'diags' (each with file:line:col). New reference. */
struct model_policy *model_policy_load(const char *file, const char *buf, size_t len,
                                       enum model_format fmt, struct model_diags *diags);
/* The policy held under the top-level key 'key' of a YAML or JSON mapping
 * (a corpus case holds several policies): loaded as model_policy_load does,
 * with every diagnostic located in the whole document 'file'. */
struct model_policy *model_policy_load_member(const char *file, const char *buf, size_t len,
                                              const char *key, struct model_diags *diags);
/* Read a file (bounded by MODEL_MAX_POLICY_BYTES) then model_policy_load. */
struct model_policy *model_policy_load_file(const char *path, enum model_format fmt,
                                            struct model_diags *diags);
/* The empty policy "version: 1". New reference. */
struct model_policy *model_policy_new_empty(void);
void model_policy_free(struct model_policy *p);
struct model_policy *model_policy_copy(const struct model_policy *p); /* deep, recompiled */

/* Validate (model_validate.c): the reference's constraints and messages
 * (docs/semantics.md#validation). Adds one diagnostic per violation; returns
 * true when there were none. Also folds port/ports, normalises hosts and
 * methods, parses allowed_ips, sorts rules. */
bool model_policy_validate(struct model_policy *p, struct model_diags *diags);
/* Compile patterns and build the evaluator index. Requires a valid policy. */
pv_result model_policy_compile(struct model_policy *p) PV_WUR;

/* Canonical emitters (model_canon.c): stable key order, empty values omitted,
 * "port" for one port and "ports" for several. New NUL-terminated string. */
char *model_policy_to_yaml(const struct model_policy *p, size_t *len);
/* Both at once, from one canonical tree: the YAML (as model_policy_to_yaml)
 * and 'hash' set to model_policy_sha256's value. */
char *model_policy_to_yaml_sha256(const struct model_policy *p, size_t *len, char hash[65]);
char *model_policy_to_json(const struct model_policy *p, size_t *len);
/* Hex SHA-256 of the canonical JSON (64 chars + NUL into out). */
pv_result model_policy_sha256(const struct model_policy *p, char out[65]) PV_WUR;

/* Accessors. */
size_t model_policy_nrules(const struct model_policy *p);
const struct model_rule *model_policy_rule(const struct model_policy *p, size_t i);
const struct model_rule *model_policy_find_rule(const struct model_policy *p, const char *key);
const char *model_rule_key(const struct model_rule *r);
const char *model_rule_display_name(const struct model_rule *r); /* name or key */
size_t model_rule_nendpoints(const struct model_rule *r);
const struct model_endpoint *model_rule_endpoint(const struct model_rule *r, size_t i);
size_t model_rule_nbinaries(const struct model_rule *r);
const char *model_rule_binary(const struct model_rule *r, size_t i);

/* The policy's sandbox sections (filesystem_policy, landlock, process), as
 * `proviso sandbox run` applies them (docs/sandbox.md). Every string is
 * borrowed from the policy; NULL where the document leaves it out. */
struct model_sandbox_spec {
    bool has_fs;          /* filesystem_policy present */
    bool include_workdir; /* filesystem_policy.include_workdir */
    size_t nread_only;
    size_t nread_write;
    const char *landlock_compat; /* landlock.compatibility */
    const char *run_as_user;     /* process.run_as_user */
    const char *run_as_group;    /* process.run_as_group */
};
void model_policy_sandbox(const struct model_policy *p, struct model_sandbox_spec *out);
/* Path i of read_only (write false) or read_write (write true); borrowed. */
const char *model_policy_fs_path(const struct model_policy *p, bool write, size_t i);

enum model_protocol {
    MODEL_PROTO_NONE,
    MODEL_PROTO_TCP,
    MODEL_PROTO_REST,
    MODEL_PROTO_WEBSOCKET,
    MODEL_PROTO_GRAPHQL,
    MODEL_PROTO_SQL,
    MODEL_PROTO_JSONRPC,
    MODEL_PROTO_MCP,
};

/* True for the protocols the proxy inspects at L7 (every one but none/tcp). */
bool model_protocol_is_l7(enum model_protocol p);

enum model_access {
    MODEL_ACCESS_NONE,
    MODEL_ACCESS_READ_ONLY,
    MODEL_ACCESS_READ_WRITE,
    MODEL_ACCESS_FULL,
};

/* ===========================================================================
 * Warnings (model_warn.c): valid, but probably not meant
 * ========================================================================= */

enum model_warning {
    MODEL_WARN_L7_AUDIT,        /* L7 endpoint without enforcement: enforce */
    MODEL_WARN_WILDCARD_HOST,   /* host pattern with '*' */
    MODEL_WARN_PATH_ON_L4,      /* endpoint path: on an L4 (uninspected) endpoint */
    MODEL_WARN_NO_BINARIES,     /* rule with endpoints and no binaries */
    MODEL_WARN_BINARY_RELATIVE, /* binary path not starting with '/' */
    MODEL_WARN_BINARY_MISSING,  /* literal binary path absent here (MODEL_WARN_FS) */
    MODEL_WARN_UNKNOWN_METHOD,  /* HTTP rule method no client sends (a typo: the rule is dead) */
    MODEL_WARN_GQL_NO_UPGRADE,  /* websocket GraphQL rules without a GET rule for the upgrade */
    MODEL_WARN_GQL_PERSISTED,   /* a persisted registry under persisted_queries: deny */
    MODEL_WARN_GQL_SHADOWED,    /* another endpoint on the host:port also grants the GraphQL path */
    MODEL_WARN_NOT_ENFORCED,    /* a field proviso accepts and does not apply (reference-compat) */
    MODEL_WARN_BLOCKED_HOST,    /* an endpoint host that is always blocked (link-local, metadata) */
    MODEL_WARN_PATH_QMARK,      /* a path glob with '?', which matches any byte, not a query */
    MODEL_WARN_MCP_UNSCOPED,    /* an mcp endpoint with the method profile and no path */
};
#define MODEL_WARN__COUNT 14
#define MODEL_WARN_FS 1u /* flag: also look binaries up on this host's filesystem */

/* The stable code ("l7-audit", ...). Static string. */
const char *model_warning_code(enum model_warning w);
/* One warning: 'file' (borrowed, may be NULL), 'line'/'col' (0 = no
 * location), 'msg' (borrowed for the call). */
typedef void (*model_warn_fn)(void *arg, enum model_warning w, const char *file, uint32_t line,
                              uint32_t col, const char *msg);
/* Call 'fn' for every warning of 'p' (borrowed), in rule order. */
void model_policy_warnings(const struct model_policy *p, unsigned flags, model_warn_fn fn,
                           void *arg);

/* ===========================================================================
 * Proposals and merge (model_merge.c)
 * ========================================================================= */

struct model_proposal; /* {"intent_summary": ..., "operations": [{"addRule": ...}]} */

/* Parse policy.local proposal JSON. New reference; NULL + diags on error. */
struct model_proposal *model_proposal_load(const char *file, const char *buf, size_t len,
                                           struct model_diags *diags);
/* The proposal under the top-level key 'key' of a YAML or JSON mapping,
 * located in the whole document 'file' (model_policy_load_member). */
struct model_proposal *model_proposal_load_member(const char *file, const char *buf, size_t len,
                                                  const char *key, struct model_diags *diags);
/* Read file 'path' (bounded by MODEL_MAX_POLICY_BYTES) and parse it as
 * model_proposal_load does; an unreadable file is a diagnostic at 'path'
 * (pv_errno PV_ERR_IO or PV_ERR_TOOBIG). New reference; NULL + diags. */
struct model_proposal *model_proposal_load_file(const char *path, struct model_diags *diags);
void model_proposal_free(struct model_proposal *pr);
/* A jansson value (model.h does not include jansson.h). */
struct json_t;
/* A bounded YAML document as a jansson tree, read by the policy reader
 * (model_yaml.c): anchors and aliases, tags, several documents and (unless
 * 'dup_ok': then the last one wins) duplicate keys are errors with
 * FILE:LINE:COL in 'diags'. Unquoted true and
 * false become booleans, unquoted null/~/empty null, unquoted integers up
 * to INT64_MAX numbers; every other scalar and every key a string
 * (model_yamljson.c). New reference; NULL + diags. */
struct json_t *model_yaml_json(const char *file, const char *buf, size_t len, bool dup_ok,
                               struct model_diags *diags);
/* A read-only view of a document's tree, for a reader outside model/ that
 * is not a policy (the prover's configuration, server/server_config.c): the
 * one YAML reader (model_yaml.c, the policy's) builds it, with the same
 * bounds, refusals (tags, anchors and aliases, several documents, NUL
 * bytes, repeated keys) and FILE:LINE:COL diagnostics; JSON is read as
 * YAML's flow subset. Unlike a policy, an empty document (nothing, or
 * comments only) is a MODEL_NODE_NULL node, not an error. New tree, free
 * it with model_node_free; NULL + diags (pv_errno PV_ERR_PARSE, or
 * PV_ERR_NOMEM). The accessors below borrow from the tree. */
enum model_node_kind { MODEL_NODE_NULL, MODEL_NODE_SCALAR, MODEL_NODE_SEQ, MODEL_NODE_MAP };
struct model_node;
struct model_node *model_yaml_tree(const char *file, const char *buf, size_t len,
                                   struct model_diags *diags);
void model_node_free(struct model_node *n);
enum model_node_kind model_node_kind_of(const struct model_node *n);
/* The node's line and column (1-based). */
void model_node_where(const struct model_node *n, uint32_t *line, uint32_t *col);
/* SCALAR: its text (NUL-terminated; '*len' bytes, which may hold a NUL),
 * else NULL. */
const char *model_node_text(const struct model_node *n, size_t *len);
/* MAP: its number of key/value pairs, else 0. */
size_t model_node_npairs(const struct model_node *map);
/* MAP: pair 'i' (< model_node_npairs): its key, and its value in '*value'. */
const struct model_node *model_node_pair(const struct model_node *map, size_t i,
                                         const struct model_node **value);

/* The proposal document {"operations":[{"addRule":{"ruleName": 'name',
 * "rule": 'rule'}}]} for one rule (borrowed), as canonical JSON (sorted
 * keys, compact). New string, caller frees; its length into *len when
 * 'len' is not NULL. NULL when out of memory. */
char *model_proposal_text(const char *name, const struct json_t *rule, size_t *len);
/* One step of a composition (docs/advisor.md#state): the rule 'rule'
 * (borrowed) named 'name' as a one-rule proposal (model_proposal_text),
 * merged into 'base' with its endpoints marked advisor_proposed, as the
 * advisor composes an effective policy and as `proviso audit verify`
 * recomputes one. New reference; NULL + diags. */
struct model_policy *model_policy_merge_rule(const struct model_policy *base, const char *name,
                                             const struct json_t *rule, struct model_diags *diags);
/* Merge the proposal's addRule operations into a copy of 'base' following
 * the reference merge semantics (docs/semantics.md#merge); endpoints added
 * by the proposal are marked advisor_proposed when 'mark_advisor' is set.
 * The result is validated and compiled. New reference; NULL + diags. */
struct model_policy *model_policy_merge(const struct model_policy *base,
                                        const struct model_proposal *pr, bool mark_advisor,
                                        struct model_diags *diags);
/* Composition of target_sandbox endpoints (model_peers.c,
 * docs/semantics.md#target-sandbox): 'fn' answers a peer sandbox's current
 * addresses as a NULL-terminated array (NULL or empty: none, the endpoint
 * stays unresolved). Every target_sandbox endpoint's resolved_ips becomes
 * exactly that set (sorted, unique); the policy is validated again (an
 * always-blocked address other than loopback is an error) and recompiled. */
typedef const char *const *(*model_peer_fn)(void *arg, const char *name);
/* The peer the first target_sandbox endpoint of 'r' names, or NULL. */
const char *model_rule_peer(const struct model_rule *r);
pv_result model_policy_resolve_peers(struct model_policy *p, model_peer_fn fn, void *arg,
                                     struct model_diags *diags) PV_WUR;
/* Proposal accessors (borrowed). The intent summary is NULL when absent; the
 * rule name of operation i is the resolved target key (trimmed ruleName,
 * else rule.name); the rule is validated and normalised. */
const char *model_proposal_intent(const struct model_proposal *pr);
size_t model_proposal_nops(const struct model_proposal *pr);
const char *model_proposal_rule_name(const struct model_proposal *pr, size_t i);
const struct model_rule *model_proposal_rule(const struct model_proposal *pr, size_t i);

/* ===========================================================================
 * Credentials and registries (model_cred.c, model_registry.c)
 * ========================================================================= */

struct model_credset;
struct model_registry;

/* YAML/JSON `credentials: [{name, type, scopes, target_hosts, injected_via}]`
 * (a bare list is accepted too). New reference. */
struct model_credset *model_credset_load(const char *file, const char *buf, size_t len,
                                         struct model_diags *diags);
struct model_credset *model_credset_load_file(const char *path, struct model_diags *diags);
/* The proxy's store: 'sink' sees each credential that has `env` (i its
 * index, 'env' its key, the secret as 'value' (of 'value_len' bytes, not
 * NUL-safe beyond it) or 'value_file' (a path), one of them NULL; all
 * borrowed for the call, the value wiped afterwards). It returns NULL, or a
 * reason that becomes a diagnostic at the credential. The returned set never
 * holds a secret. NULL 'sink' is model_credset_load(). */
typedef const char *(*model_cred_secret_fn)(void *arg, size_t i, const char *env, const char *value,
                                            size_t value_len, const char *value_file);
struct model_credset *model_credset_load_secrets(const char *file, const char *buf, size_t len,
                                                 struct model_diags *diags,
                                                 model_cred_secret_fn sink, void *arg);
#define MODEL_CRED_KEY_MAX 128
/* Is 'k' (of 'n' bytes) a placeholder key: [A-Za-z_][A-Za-z0-9_]*, at most
 * MODEL_CRED_KEY_MAX bytes? */
bool model_cred_key_valid(const char *k, size_t n);
/* The placeholder key of credential i (borrowed), NULL when it has none. */
const char *model_cred_env(const struct model_credset *c, size_t i);
struct model_credset *model_credset_new_empty(void);
void model_credset_free(struct model_credset *c);
size_t model_credset_count(const struct model_credset *c);
const char *model_cred_name(const struct model_credset *c, size_t i);
const char *model_cred_type(const struct model_credset *c, size_t i);
size_t model_cred_ntargets(const struct model_credset *c, size_t i);
/* Target host pattern j of credential i: normalised, compiled (borrowed). */
const struct model_glob *model_cred_target(const struct model_credset *c, size_t i, size_t j);
/* Does concrete host 'host' (normalised) fall under credential i? */
bool model_cred_covers_host(const struct model_credset *c, size_t i, const char *host, size_t len);
/* Reference overlap of two host patterns (compat units 030-036). */
bool model_host_patterns_overlap(const char *a, const char *b);
/* Reference credentials_for_host: does some target of credential i overlap
 * host pattern 'pattern' (model_host_patterns_overlap)? */
bool model_cred_overlaps(const struct model_credset *c, size_t i, const char *pattern);
const char *model_cred_injected_via(const struct model_credset *c, size_t i); /* borrowed */
size_t model_cred_nscopes(const struct model_credset *c, size_t i);
const char *model_cred_scope(const struct model_credset *c, size_t i, size_t j); /* borrowed */

/* The embedded registry (compiled in from model/registry/) or a directory
 * with binaries/NAME.yaml and apis/NAME.yaml. New reference. */
struct model_registry *model_registry_embedded(struct model_diags *diags);
struct model_registry *model_registry_load_dir(const char *dir, struct model_diags *diags);
void model_registry_free(struct model_registry *r);
size_t model_registry_nbinaries(const struct model_registry *r);
const struct model_glob *model_registry_binary_glob(const struct model_registry *r, size_t i);
bool model_registry_binary_bypasses_l7(const struct model_registry *r, size_t i);
const char *model_registry_binary_description(const struct model_registry *r, size_t i);
/* API actions: for a concrete (host, method, path) return the action name and
 * risk ("low|medium|high|critical") of the first matching API descriptor
 * entry, or false. Borrowed strings. */
bool model_registry_api_action(const struct model_registry *r, const char *host, uint16_t port,
                               const char *method, const char *path, const char **api,
                               const char **action, const char **risk);
/* Binary entry i comes from descriptor NAME.yaml ("git"): one entry per path
 * (`binary` and each alias), all with the descriptor's flags. Borrowed. */
const char *model_registry_binary_name(const struct model_registry *r, size_t i);
bool model_registry_binary_can_exfiltrate(const struct model_registry *r, size_t i);
bool model_registry_binary_can_construct_http(const struct model_registry *r, size_t i);
/* First binary entry whose glob matches the concrete path, or SIZE_MAX. */
size_t model_registry_find_binary(const struct model_registry *r, const char *path);
/* API descriptors, in load order (borrowed strings). */
size_t model_registry_napis(const struct model_registry *r);
const char *model_registry_api_name(const struct model_registry *r, size_t i);
const char *model_registry_api_host(const struct model_registry *r, size_t i);
uint16_t model_registry_api_port(const struct model_registry *r, size_t i);
const char *model_registry_api_credential_type(const struct model_registry *r, size_t i);
/* Reference api_for_host: the API whose host equals 'host' (normalised), else
 * the first whose host overlaps it; its index, or SIZE_MAX. */
size_t model_registry_api_for_host(const struct model_registry *r, const char *host);

/* ===========================================================================
 * Request canonicalisation (model_path.c)
 * ========================================================================= */

enum model_target_status {
    MODEL_TARGET_OK,
    MODEL_TARGET_BAD,           /* malformed: bad byte, bad %-escape, no leading '/' */
    MODEL_TARGET_TRAVERSAL,     /* '..' above the root */
    MODEL_TARGET_ENCODED_SLASH, /* %2F present (allowed only where opted in) */
    MODEL_TARGET_TOO_LONG,
};

/* Longest request path and longest canonical path, in bytes (an 'out' of
 * MODEL_PATH_MAX + 1 bytes is always large enough). */
#define MODEL_PATH_MAX 4096

/* Canonicalise the path part of a request-target (docs/semantics.md#paths).
 * 'target' may carry "?query"; the query is returned separately, verbatim.
 * The canonical path is written to 'out' (NUL-terminated, at most outlen-1
 * bytes). '*has_encoded_slash' reports %2F kept in the output. No allocation. */
enum model_target_status model_path_canonicalize(const char *target, size_t len, char *out,
                                                 size_t outlen, size_t *outl, const char **query,
                                                 size_t *qlen, bool *has_encoded_slash);
/* Normalise a host: strip one trailing dot, ASCII lower-case; IP literals in
 * any spelling become their canonical text. Returns false for an invalid host
 * (empty label, bad byte, over 253 bytes). '*is_ip' set for IP literals. */
bool model_host_normalize(const char *host, size_t len, char *out, size_t outlen, size_t *outl,
                          bool *is_ip, struct model_ip *ip);
/* A host name or host pattern with its ASCII letters lower-cased into 'out'
 * (always NUL-terminated when outlen > 0), nothing else changed. False when
 * it did not fit: 'out' then holds the lower-cased prefix that did. */
bool model_host_lower(const char *host, char *out, size_t outlen);

/* ===========================================================================
 * The concrete evaluator (model_eval.c)
 * ========================================================================= */

#define MODEL_MAX_IDENTITY 16

struct model_request {
    const char *const *binaries; /* exe first, then ancestors; may be empty */
    size_t nbinaries;
    const char *host; /* as received (normalised by the evaluator) */
    size_t host_len;
    uint16_t port;
    const char *method; /* NULL: connection-level decision (CONNECT) */
    const char *target; /* request-target "path?query"; NULL with method NULL */
    size_t target_len;
    const struct model_ip *dest; /* NULL: destination not resolved yet */
    /* Tests only (--test-allow-loopback): a loopback destination that the
     * request host and the unit's host both name as the same IP literal is
     * admitted as a public address would be (docs/semantics.md#test-loopback). */
    bool test_loopback;
    /* Among identity entries that allow a request, prefer one whose route
     * is opaque (the proxy asks this for protocol upgrades, which only an
     * opaque route carries); connection-level decisions always do. */
    bool prefer_opaque;
    /* The GraphQL operation the request carries (docs/semantics.md#graphql),
     * NULL = none: a GraphQL-over-HTTP request or a classified
     * GraphQL-over-WebSocket message read by the proxy. Borrowed. */
    const struct model_gql_op *gql;
    /* The JSON-RPC call decided (docs/semantics.md#rpc), NULL = none: one
     * call of a request on a json-rpc or mcp unit, read by the proxy
     * (model_rpc_read) or given to `proviso eval`. Borrowed. */
    const struct model_rpc_call *rpc;
};

enum model_route {
    MODEL_ROUTE_NONE,      /* nothing matched */
    MODEL_ROUTE_OPAQUE,    /* L4 tunnel: bytes are not inspected */
    MODEL_ROUTE_INSPECTED, /* HTTP parsed, every request evaluated */
};

enum model_reason {
    MODEL_REASON_ALLOWED,
    MODEL_REASON_AUDIT,       /* allowed only because an endpoint is in audit mode */
    MODEL_REASON_NO_POLICY,   /* the policy has no network rules */
    MODEL_REASON_NO_ENDPOINT, /* no endpoint matches host:port */
    MODEL_REASON_BINARY,      /* endpoint matches, binary does not */
    MODEL_REASON_BAD_HOST,
    MODEL_REASON_BAD_TARGET, /* request-target not canonicalisable */
    MODEL_REASON_ENCODED_SLASH,
    MODEL_REASON_NO_L7_PATH, /* no endpoint path scope matches */
    MODEL_REASON_L7_NOT_PERMITTED,
    MODEL_REASON_L7_DENY_RULE,
    MODEL_REASON_L7_UNSUPPORTED, /* enforced protocol proviso does not inspect */
    MODEL_REASON_BAD_QUERY,
    MODEL_REASON_DEST_BLOCKED,     /* always-blocked address */
    MODEL_REASON_DEST_PORT,        /* control-plane port */
    MODEL_REASON_DEST_INTERNAL,    /* private address without allowed_ips */
    MODEL_REASON_DEST_ALLOWED_IPS, /* address outside allowed_ips */
    MODEL_REASON_DEST_UNRESOLVED,  /* target_sandbox not resolved */
    /* Enforced graphql endpoints (docs/semantics.md#graphql-http). */
    MODEL_REASON_GQL_NO_OPERATION,      /* no GraphQL operation in the request */
    MODEL_REASON_GQL_BAD_METHOD,        /* not POST, or GET with a non-query */
    MODEL_REASON_GQL_BAD_OPERATION,     /* a name or field that is not a Name */
    MODEL_REASON_GQL_PERSISTED_DENIED,  /* hash-only under persisted_queries: deny */
    MODEL_REASON_GQL_PERSISTED_UNKNOWN, /* hash-only id not in the registry */
    /* Enforced json-rpc and mcp endpoints (docs/semantics.md#rpc). */
    MODEL_REASON_RPC_NO_CALL,    /* the request's calls are not read yet */
    MODEL_REASON_RPC_BAD_METHOD, /* an HTTP method that does not carry the call */
};

struct model_decision {
    bool allow; /* final answer (grant and destination) */
    bool grant; /* policy layer only (destination ignored) */
    enum model_reason reason;
    enum model_route route;
    const struct model_rule *rule;         /* granting (or last matching) rule, borrowed */
    const struct model_endpoint *endpoint; /* borrowed */
    const char *binary;                    /* identity entry that matched, borrowed from request */
    bool test_loopback_used;               /* allowed to a loopback address by the test switch */
    char detail[256];                      /* human-readable reason, reference wording */
};

/* Decide 'req' under compiled policy 'p' (docs/semantics.md). Pure: no I/O,
 * no allocation. Any internal error yields a deny. */
void model_decide(const struct model_policy *p, const struct model_request *req,
                  struct model_decision *out);
/* Decide each of the 'ncalls' JSON-RPC calls of one request: the decision
 * model_decide gives 'req' with req->rpc = &calls[i], handed to 'each' in
 * order. What does not depend on the call (host, identities, endpoints,
 * path) is read once for all of them (docs/proxy.md#rpc "Cost"). */
typedef void (*model_decide_each_fn)(void *arg, size_t i, const struct model_decision *d);
void model_decide_calls(const struct model_policy *p, const struct model_request *req,
                        const struct model_rpc_call *calls, size_t ncalls,
                        model_decide_each_fn each, void *arg);
const char *model_reason_name(enum model_reason r);
const char *model_route_name(enum model_route r);

/* Host and port coverage, for callers that ask about one endpoint (the
 * advisor's auto-approval envelope): the evaluator's own tests, so that no
 * caller matches hosts its own way (docs/semantics.md#hosts). Does endpoint
 * 'e' of a compiled policy match request host 'host' ('len' bytes,
 * normalised here exactly as model_decide normalises a request's host:
 * case, one trailing dot, IP literals in any spelling), whatever the port?
 * A hostless endpoint matches every host but link-local ones; an invalid
 * host matches nothing. */
bool model_endpoint_matches_host(const struct model_endpoint *e, const char *host, size_t len);
/* Does endpoint 'e' list port 'port' (its `port` or one of its `ports`)? */
bool model_endpoint_has_port(const struct model_endpoint *e, uint16_t port);

/* Method helpers. */
bool model_method_valid(const char *m, size_t len);

/* Endpoint accessors (for reporting a decision's endpoint): the host pattern
 * ("" for hostless endpoints; borrowed) and the sorted port list. */
const char *model_endpoint_host(const struct model_endpoint *e);
size_t model_endpoint_nports(const struct model_endpoint *e);
uint16_t model_endpoint_port(const struct model_endpoint *e, size_t i);
/* The endpoint's request_body_credential_rewrite / websocket_credential_rewrite
 * (false for NULL). */
bool model_endpoint_body_cred_rewrite(const struct model_endpoint *e);
bool model_endpoint_ws_cred_rewrite(const struct model_endpoint *e);

/* ===========================================================================
 * Read-only views for the prover (model_access.c)
 *
 * The prover reasons about every field the evaluator reads; these views
 * expose them without the struct layout. All pointers are borrowed from the
 * compiled policy and stay valid while it lives.
 * ========================================================================= */

struct model_query_view {
    const char *key; /* query key, compared exactly */
    size_t nglobs;
    const struct model_glob *const *globs; /* compiled MODEL_GLOB_VALUE patterns */
};

struct model_l7rule_view {
    const char *method;            /* upper-case, "*" = any; NULL = not given */
    const struct model_glob *path; /* NULL = any path */
    size_t nquery;
    bool has_other; /* command/operation/fields/tool/params present */
    /* GraphQL (docs/semantics.md#graphql-allow): bit t per enum
     * model_gql_optype matched; 0 = not a GraphQL rule (a GraphQL rule
     * naming no valid type has gql_types 0x80: it matches nothing). */
    uint8_t gql_types;
    const struct model_glob *gql_name;          /* NULL = any name (anonymous too) */
    size_t gql_nfields;                         /* 0 = any fields */
    const struct model_glob *const *gql_fields; /* compiled MODEL_GLOB_VALUE */
    /* JSON-RPC / MCP (docs/semantics.md#rpc-rules), on json-rpc and mcp
     * endpoints: the method as written is 'method'; on mcp its compiled
     * glob (NULL: no method, or not compiled); the tool patterns the rule
     * selects (rpc_ntools 0 = no tool selector) and their compiled globs
     * (NULL: not compiled; an entry NULL matches no tool). */
    const struct model_glob *rpc_method_glob;
    size_t rpc_ntools;
    const struct model_glob *const *rpc_tools;
};

struct model_endpoint_view {
    const char *host;                   /* lower-case; NULL = hostless */
    const struct model_glob *host_glob; /* NULL for hostless endpoints */
    bool host_is_ip;
    struct model_ip host_ip; /* when host_is_ip */
    const uint16_t *ports;   /* sorted, unique */
    size_t nports;
    const struct model_glob *path_scope; /* NULL = any */
    enum model_protocol proto;
    bool tls_skip;
    bool enforce;
    bool allow_encoded_slash;
    bool advisor_proposed;
    const char *target_sandbox;     /* NULL = none */
    bool unresolved;                /* a target_sandbox that admits no address:
                                     * no resolved_ips, or only always-blocked
                                     * ones (docs/semantics.md#target-sandbox) */
    const struct model_cidr *cidrs; /* parsed allowed_ips or resolved_ips */
    size_t ncidrs;
    size_t nallow; /* effective allow rules (presets expanded) */
    size_t ndeny;
    /* mcp (docs/semantics.md#rpc-profile): allow_all_known_mcp_methods, and
     * whether some allow rule selects tools (then tools/call needs one) */
    bool mcp_profile;
    bool rpc_tool_narrowed;
    const char *fp; /* the fingerprint, computed once at compile time
                                    * (borrowed); NULL when not compiled */
    size_t fplen;
    uint64_t fphash; /* pv_hash64(fp, fplen, MODEL_FP_HASH_SEED) when fp != NULL */
};

/* The seed of the fingerprint hash in model_endpoint_view.fphash. */
#define MODEL_FP_HASH_SEED 0x5eedu

/* Fill 'out' for endpoint 'e' of a compiled policy. */
void model_endpoint_view(const struct model_endpoint *e, struct model_endpoint_view *out);
/* Fill only the host fields (host, host_is_ip, host_ip), the ports and
 * fphash of 'out' for endpoint 'e' (the rest zero): what the prover keys an
 * endpoint by when it passes over every endpoint of a 10,000-rule policy,
 * read from two of the endpoint's cache lines instead of most of them. */
void model_endpoint_view_host(const struct model_endpoint *e, struct model_endpoint_view *out);
/* Effective allow rule i / deny rule i of 'e'. */
void model_endpoint_allow_rule(const struct model_endpoint *e, size_t i,
                               struct model_l7rule_view *out);
void model_endpoint_deny_rule(const struct model_endpoint *e, size_t i,
                              struct model_l7rule_view *out);
/* Query matcher j of allow rule i (deny = false) or deny rule i (deny = true). */
void model_endpoint_rule_query(const struct model_endpoint *e, bool deny, size_t i, size_t j,
                               struct model_query_view *out);
/* GraphQL persisted queries of 'e' that can decide anything: the ids of
 * its registry when it is `allow_registered`, else none
 * (docs/semantics.md#graphql-persisted). */
size_t model_endpoint_gql_npersisted(const struct model_endpoint *e);
const char *model_endpoint_gql_persisted_id(const struct model_endpoint *e, size_t i);
/* The concrete answer of the evaluator's own matching for a hash-only
 * operation 'id' on 'e': does some GraphQL allow rule (deny = false) or deny
 * rule (deny = true) of 'e' match the operation the id resolves to, and is
 * that operation a query ('*is_query')? False when the id does not resolve. */
bool model_endpoint_gql_persisted_match(const struct model_endpoint *e, const char *id, bool deny,
                                        bool *is_query);
/* Compiled binary pattern i of rule 'r' (borrowed). */
const struct model_glob *model_rule_binary_glob(const struct model_rule *r, size_t i);
/* The fingerprint of rule 'r' of a compiled policy (borrowed; NULL when not
 * compiled), its length and hash: its endpoint fingerprints and binary
 * patterns, length-prefixed, in order. Two rules with equal fingerprints
 * have the same (binary, endpoint) pairs, whatever their keys and names. One
 * contiguous string, so that the prover compares the rules of two 10,000-rule
 * policies without visiting every endpoint and binary of both. */
const char *model_rule_fp(const struct model_rule *r, size_t *len, uint64_t *hash);
/* A string that is equal for two endpoints iff they allow the same requests
 * field by field (host, ports, scope, protocol, flags, allowed_ips, effective
 * allow rules, deny rules); rule keys and names are not part of it. New
 * NUL-terminated string (caller frees); NULL on NOMEM. */
char *model_endpoint_fingerprint(const struct model_endpoint *e, size_t *len);
/* The same fingerprint appended to 'b' (a struct pv_dynbuf, common/pv_dynbuf.h). */
struct pv_dynbuf;
pv_result model_endpoint_fingerprint_append(const struct model_endpoint *e,
                                            struct pv_dynbuf *b) PV_WUR;
/* Hex SHA-256 (borrowed, 64 chars) of the network part of a compiled policy:
 * per rule with binaries, its key, each endpoint's fingerprint and each
 * binary pattern, in rule order. Equal for two policies with the same rules,
 * endpoints and binaries whatever their filesystem, process or names; ""
 * when not compiled. Computed once by model_policy_compile. */
const char *model_policy_network_digest(const struct model_policy *p);
/* Hex SHA-256 of 'len' bytes (64 chars + NUL into out). */
pv_result model_sha256_hex(const void *buf, size_t len, char out[65]) PV_WUR;

#endif
