/* SPDX-License-Identifier: Apache-2.0 */
/* inputs.h - what reaches the lifecycle from outside it (advisor/inputs/)
 *
 * The mechanistic mapper (advisor_mapper.c: the proxies' denials become
 * mechanistic proposals through advisor_submit), peer addresses
 * (advisor_peers.c: registering them, pushing the dependents' new
 * revisions) and tool servers (advisor_tools.c). Calls life/, core/ and
 * the store (docs/architecture.md#advisor).
 */
#ifndef ADVISOR_INPUTS_H
#define ADVISOR_INPUTS_H

#include "advisor/life/life.h"

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
/* Register the addresses of sandbox 'name' as a peer, from the JSON body
 * {"addresses": [ADDRESS, ...]} ('by_admin': the admin token sent it, else
 * the sandbox's own), pushing its dependents' new revisions: out->json
 * {sandbox, addresses, changed, updated}, or a refusal in 'out' (a bad
 * body, an address outside peer_address_ranges or always blocked, no such
 * sandbox, the store failed). */
pv_result advisor_addresses_put(struct advisor_worker *w, const char *name, const char *body,
                                size_t len, bool by_admin, struct advisor_view *out) PV_WUR;

/* Host-side tool servers and the tools an identity may call
 * (advisor_tools.c, docs/advisor.md#tools). */
/* Register (or replace) tool server 'name' of 'sandbox' from the JSON body
 * {"base_url", "openapi"}: out->json {name, base_url, openapi_sha256,
 * paths}, or a refusal (a bad name, URL or document, too many servers, no
 * such sandbox, the store failed) in 'out'. */
pv_result advisor_server_put(struct advisor_worker *w, const char *sandbox, const char *name,
                             const char *body, size_t len, struct advisor_view *out) PV_WUR;
/* Remove tool server 'name' of 'sandbox'; out->json {name, deleted}, or a
 * refusal (no such sandbox or server, the store failed) in 'out'. */
pv_result advisor_server_delete(struct advisor_worker *w, const char *sandbox, const char *name,
                                struct advisor_view *out) PV_WUR;
/* The sandbox's tool servers: out->json {sandbox, servers: [{name,
 * base_url, openapi_sha256, created_ms}]}, or a refusal in 'out'. */
pv_result advisor_server_list(struct advisor_worker *w, const char *sandbox,
                              struct advisor_view *out) PV_WUR;
/* The question of GET|POST /v1/sandboxes/{name}/tools: a POST's JSON body
 * {"binary", "ancestors"?, "revision"?}, or a GET's ?binary= and
 * ?revision= (NULL when absent). */
struct advisor_tools_query {
    bool post;
    const char *body;
    size_t len;
    const char *binary;
    const char *revision;
};
/* The tools the identity may call through each of the sandbox's servers
 * at one revision: out->json {sandbox, revision, hash, identity, tools,
 * openapi, servers, truncated}, or a refusal in 'out' (a server whose
 * document cannot be read fails the whole answer). */
pv_result advisor_tools(struct advisor_worker *w, const char *sandbox,
                        const struct advisor_tools_query *q, struct advisor_view *out) PV_WUR;

/* ===========================================================================
 * The mechanistic mapper (advisor_mapper.c)
 * ========================================================================= */

#define ADVISOR_MAPPER_SAMPLES 20
#define ADVISOR_MAPPER_FLUSH_MS 5000u

/* 'start': run the flusher thread (every flush_ms; 0 takes the default). */
struct advisor_mapper *advisor_mapper_new(struct advisor *a, unsigned flush_ms, bool start);
void advisor_mapper_free(struct advisor_mapper *m);
/* Take a proxy's denials for 'sandbox' from the JSON body {"events":
 * [...], "dropped": n} into the table the next flush proposes from:
 * out->json {accepted, dropped} (the events it kept and the ones it did
 * not), or a refusal in 'out' (a body that is not that). */
pv_result advisor_mapper_ingest(struct advisor_mapper *m, const char *sandbox, const char *body,
                                size_t len, struct advisor_view *out) PV_WUR;
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

#endif
