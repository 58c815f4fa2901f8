/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_peers.c - peer sandboxes: registered addresses, target_sandbox
 * composition, and new revisions for the sandboxes that depend on a peer
 *
 * A sandbox's proxy registers the addresses its sandbox is reachable at
 * (PUT /v1/sandboxes/{name}/addresses) whenever it connects. Composition
 * writes each `target_sandbox: NAME` endpoint's `resolved_ips` from NAME's
 * registered addresses (model_policy_resolve_peers). When a sandbox's
 * addresses change - or it is deleted - every sandbox whose effective
 * policy names it is composed again and, where the result differs, gets a
 * new revision in the same transaction as the registration and its events;
 * the proxies' long-polls are answered at the commit, so the change is
 * pushed, not polled for (docs/advisor.md#peers). Resolving a policy's
 * peers is the lifecycle's (advisor_resolve.c), which never calls back here.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/inputs/inputs.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "model/model.h"

#define PEER_ADDRS_MAX 16
/* an event line with two lists of PEER_ADDRS_MAX addresses and the ranges */
#define PEER_LINE_MAX 8192

/* ===========================================================================
 * Dependents: compose again, write what changed
 * ========================================================================= */

/* Does the sandbox's current effective policy name 'peer'? A cheap filter
 * on the canonical text; composing again decides exactly. */
static bool mentions(struct advisor_worker *w, int64_t sandbox, const char *peer)
{
    struct store_revision rev;
    char *yaml;
    bool hit;

    if (!pv_ok(store_rev_latest(w->st, sandbox, &rev))) {
        return true; /* let the composition report it */
    }
    yaml = store_blob_get(w->st, rev.blob, NULL);
    store_revision_clear(&rev);
    hit = yaml == NULL || (strstr(yaml, "target_sandbox") != NULL && strstr(yaml, peer) != NULL);
    free(yaml);
    return hit;
}

pv_result advisor_peers_push(struct advisor_worker *w, const char *peer, const char *addresses,
                             const char *previous, json_t *updated, char *err, size_t errlen)
{
    struct advisor_sandboxes l;
    pv_result r = advisor_sandboxes_list(w->st, false, &l);

    for (size_t i = 0; pv_ok(r) && i < l.n; i++) {
        struct store_revision cur;
        int64_t rev = 0;
        char hash[65] = "";
        char cause[200];
        char line[PEER_LINE_MAX];
        char suffix[160];
        struct advisor_composed comp;

        memset(&comp, 0, sizeof(comp));
        if (!mentions(w, l.ids[i], peer)) {
            continue;
        }
        r = store_rev_latest(w->st, l.ids[i], &cur);
        if (!pv_ok(r)) {
            break;
        }
        snprintf(cause, sizeof(cause), "peer %s", peer);
        /* Every approved chunk is proved again at the peer's new address
         * (docs/advisor.md#reproof). */
        r = advisor_recompose(w, l.ids[i], NULL, cause, &comp, err, errlen);
        rev = comp.rev;
        memcpy(hash, comp.hash, sizeof(hash));
        if (pv_ok(r) && rev != cur.rev) {
            advisor_event_suffix(suffix, sizeof(suffix), rev, hash);
            snprintf(line, sizeof(line),
                     "CONFIG:RESOLVED [INFO] gateway resolved target_sandbox %s again: %s "
                     "(previously %s) [%s]",
                     peer, addresses, previous, suffix);
            r = advisor_event(w->st, l.names[i], "CONFIG:RESOLVED", line,
                              json_pack("{s:s,s:o,s:o,s:I,s:s,s:s,s:O,s:O}", "peer", peer,
                                        "addresses", advisor_addrs_json(addresses),
                                        "previous_addresses", advisor_addrs_json(previous),
                                        "version", (json_int_t)rev, "hash", hash, "base_blob",
                                        comp.base_blob, "chunks", comp.chunks, "suspended",
                                        comp.suspended));
            if (pv_ok(r) && updated != NULL) {
                json_array_append_new(updated, json_pack("{s:s,s:I,s:s}", "sandbox", l.names[i],
                                                         "policy_version", (json_int_t)rev,
                                                         "policy_hash", hash));
            }
        }
        store_revision_clear(&cur);
        advisor_composed_clear(&comp);
    }
    advisor_sandboxes_free(&l);
    return r;
}

/* ===========================================================================
 * Moves: every change of a sandbox's addresses, recorded
 * ========================================================================= */

/* Inside a transaction: set 'sb's addresses to 'canon' (steals), record
 * CONFIG:REGISTERED with the new and the previous addresses, who moved them
 * ('by': "sandbox", "admin" or "setting") and the ranges in force, and push
 * the dependents. The event's line is left in 'line'. */
static pv_result addresses_move(struct advisor_worker *w, struct store_sandbox *sb, char *canon,
                                const char *by, const struct advisor_ranges *rg, json_t *updated,
                                char *line, size_t linelen, char *err, size_t errlen)
{
    char *previous = sb->addresses;
    const char *ranges = advisor_ranges_text(rg);
    pv_result r;

    sb->addresses = canon;
    r = store_sandbox_update(w->st, sb);
    if (strcmp(by, "setting") == 0) {
        snprintf(line, linelen,
                 "CONFIG:REGISTERED [INFO] gateway dropped the addresses of sandbox %s outside "
                 "peer_address_ranges %s: %s (previously %s)",
                 sb->name, ranges != NULL ? ranges : "(unset)", sb->addresses, previous);
    } else if (strcmp(by, "admin") == 0) {
        snprintf(line, linelen,
                 "CONFIG:REGISTERED [INFO] gateway registered addresses %s for sandbox %s "
                 "(previously %s)",
                 sb->addresses, sb->name, previous);
    } else {
        snprintf(line, linelen,
                 "CONFIG:REGISTERED [INFO] sandbox %s registered addresses %s (previously %s)",
                 sb->name, sb->addresses, previous);
    }
    if (pv_ok(r)) {
        r = advisor_event(w->st, sb->name, "CONFIG:REGISTERED", line,
                          json_pack("{s:o,s:o,s:s,s:o}", "addresses",
                                    advisor_addrs_json(sb->addresses), "previous_addresses",
                                    advisor_addrs_json(previous), "by", by, "peer_address_ranges",
                                    ranges != NULL ? advisor_addrs_json(ranges) : json_null()));
    }
    if (pv_ok(r)) {
        r = advisor_peers_push(w, sb->name, sb->addresses, previous, updated, err, errlen);
    }
    free(previous);
    return r;
}

/* Is an address of the JSON list 'canon' outside 'rg'? The first such is
 * copied to 'bad'. */
static pv_result first_outside(const char *canon, const struct advisor_ranges *rg, bool *outside,
                               char *bad, size_t badlen)
{
    char **a = advisor_addrs_parse(canon);

    *outside = false;
    bad[0] = '\0';
    PV_ENSURE(a != NULL, PV_ERR_NOMEM);
    for (size_t i = 0; !*outside && a[i] != NULL; i++) {
        struct model_ip ip;
        *outside =
            !model_ip_parse_strict(a[i], strlen(a[i]), &ip) || !advisor_ranges_admit(rg, &ip);
        if (*outside) {
            snprintf(bad, badlen, "%s", a[i]);
        }
    }
    advisor_addrs_free(a);
    return PV_RESULT_OK;
}

/* The addresses of the JSON list 'canon' that 'rg' admits, as a JSON list
 * (new string; NULL: out of memory). */
static char *addrs_within(const char *canon, const struct advisor_ranges *rg)
{
    char **a = advisor_addrs_parse(canon);
    json_t *out = a != NULL ? json_array() : NULL;
    char *text;

    for (size_t i = 0; out != NULL && a[i] != NULL; i++) {
        struct model_ip ip;
        if (model_ip_parse_strict(a[i], strlen(a[i]), &ip) && advisor_ranges_admit(rg, &ip)) {
            json_array_append_new(out, json_string(a[i]));
        }
    }
    text = out != NULL ? json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    advisor_addrs_free(a);
    return text;
}

pv_result advisor_peers_bound(struct advisor_worker *w, const char *sandbox, char *err,
                              size_t errlen)
{
    struct advisor_sandboxes l;
    pv_result r = PV_RESULT_OK;

    memset(&l, 0, sizeof(l));
    if (sandbox != NULL) {
        struct store_sandbox one;
        memset(&one, 0, sizeof(one));
        one.name = PV_UNCONST(sandbox);
        advisor_sandboxes_add(&l, &one);
        if (l.oom) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
    } else {
        r = advisor_sandboxes_list(w->st, false, &l);
    }
    for (size_t i = 0; pv_ok(r) && i < l.n; i++) {
        struct store_sandbox sb;
        struct advisor_ranges *rg = NULL;
        char *within = NULL;
        char line[PEER_LINE_MAX];

        r = store_sandbox_get(w->st, l.names[i], &sb);
        if (!pv_ok(r)) {
            break;
        }
        r = advisor_ranges_get(w->st, l.names[i], &rg);
        if (pv_ok(r)) {
            within = addrs_within(sb.addresses, rg);
            r = within != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, __func__);
        }
        if (pv_ok(r) && strcmp(within, sb.addresses) != 0) {
            r = addresses_move(w, &sb, within, "setting", rg, NULL, line, sizeof(line), err,
                               errlen);
            within = NULL;
            if (pv_ok(r)) {
                pv_log_info("OCSF %s", line);
            }
        }
        free(within);
        advisor_ranges_free(rg);
        store_sandbox_clear(&sb);
    }
    advisor_sandboxes_free(&l);
    return r;
}

/* ===========================================================================
 * PUT /v1/sandboxes/{name}/addresses
 * ========================================================================= */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The body's addresses as a canonical JSON array (sorted, unique, each in
 * canonical text), or NULL with a refusal in 'v'. */
static char *addresses_canonical(const char *text_in, size_t len, bool allow_loopback,
                                 struct advisor_view *v)
{
    json_error_t je;
    json_t *body = json_loadb(text_in, len, JSON_REJECT_DUPLICATES, &je);
    json_t *list = json_object_get(body, "addresses");
    char text[PEER_ADDRS_MAX][64];
    const char *sorted[PEER_ADDRS_MAX];
    json_t *out = NULL;
    char *canon = NULL;
    size_t n = json_array_size(list);

    if (!json_is_object(body) || !json_is_array(list) || n > PEER_ADDRS_MAX) {
        (void)advisor_view_refuse(v, ADVISOR_REFUSED_BAD_REQUEST,
                                  "expected {\"addresses\": [ADDRESS, ...]} with at most %d "
                                  "addresses",
                                  PEER_ADDRS_MAX);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(list, i));
        struct model_ip ip;

        if (s == NULL || !model_ip_parse(s, strlen(s), &ip)) {
            (void)advisor_view_refuse(v, ADVISOR_REFUSED_BAD_REQUEST,
                                      "addresses[%zu]: expected an IP address", i);
            goto out;
        }
        model_ip_format(&ip, text[i], sizeof(text[i]));
        /*= docs/semantics.md#target-sandbox
         *# Rule 1 still applies to peer addresses, so loopback and link-local stay
         *# blocked for peers too. */
        if (model_ip_is_always_blocked(&ip) && !(allow_loopback && model_ip_is_loopback(&ip))) {
            (void)advisor_view_refuse(v, ADVISOR_REFUSED_BAD_REQUEST,
                                      "addresses[%zu]: %s is always blocked (loopback, "
                                      "link-local, unspecified, multicast): peers are never "
                                      "reached there",
                                      i, text[i]);
            goto out;
        }
        sorted[i] = text[i];
    }
    qsort(sorted, n, sizeof(sorted[0]), cmp_str);
    out = json_array();
    for (size_t i = 0; out != NULL && i < n; i++) {
        if (i == 0 || strcmp(sorted[i - 1], sorted[i]) != 0) {
            json_array_append_new(out, json_string(sorted[i]));
        }
    }
    canon = out != NULL ? json_dumps(out, JSON_COMPACT) : NULL;
    if (canon == NULL) {
        (void)advisor_view_refuse(v, ADVISOR_REFUSED_INTERNAL, "out of memory");
    }
out:
    json_decref(out);
    json_decref(body);
    return canon;
}

pv_result advisor_addresses_put(struct advisor_worker *w, const char *name, const char *body,
                                size_t len, bool by_admin, struct advisor_view *out)
{
    char *canon;
    struct store_sandbox sb;
    struct advisor_ranges *rg = NULL;
    json_t *updated = json_array();
    char err[1024] = "";
    char bad[64];
    char line[PEER_LINE_MAX];
    bool changed = false;
    bool outside = false;
    pv_result res;

    memset(&sb, 0, sizeof(sb));
    memset(out, 0, sizeof(*out));
    canon = addresses_canonical(body, len, w->a->cfg.test_allow_loopback, out);
    if (canon == NULL) {
        json_decref(updated);
        return pv_fail(PV_ERR_USAGE, __func__);
    }
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = store_sandbox_get(w->st, name, &sb);
    }
    /* the ranges are read inside the transaction: a registration and a
     * change of peer_address_ranges are serialised (docs/advisor.md#peers) */
    if (pv_ok(res)) {
        res = advisor_ranges_get(w->st, name, &rg);
    }
    if (pv_ok(res)) {
        res = first_outside(canon, rg, &outside, bad, sizeof(bad));
    }
    changed = pv_ok(res) && !outside && strcmp(sb.addresses, canon) != 0;
    if (changed) {
        res = addresses_move(w, &sb, canon, by_admin ? "admin" : "sandbox", rg, updated, line,
                             sizeof(line), err, sizeof(err));
        canon = NULL;
    }
    res = pv_ok(res) && !outside ? store_commit(w->st) : res;
    if (!pv_ok(res) || outside) {
        store_rollback(w->st);
    }
    if (outside) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                  "%s is outside the addresses sandbox %s may register: "
                                  "peer_address_ranges %s (%s)",
                                  bad, name, advisor_ranges_text(rg), advisor_ranges_from(rg));
    } else if (!pv_ok(res)) {
        if (err[0] != '\0' && res.err != PV_ERR_NOTFOUND) {
            res = advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "%s", err);
        } else {
            res = advisor_view_store_error(out, res, "sandbox");
        }
    } else {
        if (changed) {
            pv_log_info("OCSF %s", line);
            advisor_changed(w->a);
        }
        out->json = json_pack("{s:s,s:o,s:b,s:O}", "sandbox", name, "addresses",
                              advisor_addrs_json(sb.addresses != NULL ? sb.addresses : canon),
                              "changed", changed, "updated", updated);
        if (out->json == NULL) {
            res = advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
        }
    }
    advisor_ranges_free(rg);
    json_decref(updated);
    store_sandbox_clear(&sb);
    free(canon);
    return res;
}
