/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_events.c - decision events: OCSF shorthand line + JSON, one record
 *
 * Every event is written by the transaction that makes the change it
 * describes (store_event_append inside store_begin/commit), so the event
 * log and the state never disagree. The shorthand line keeps the
 * reference's words ("CONFIG:APPROVED [INFO] ..."); the JSON form carries
 * the same facts plus what a replay needs (docs/advisor.md#events). After
 * the commit the caller echoes the line to the log as "OCSF <line>".
 *
 * Each event is also sealed into the audit chain (docs/audit.md): a record
 * with its seq, time, the seal of the record before it (read inside the
 * same transaction), its own hash and the advisor's Ed25519 signature. The
 * export writes those records plus every blob they reference.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advisor/core/core.h"
#include "advisor/store/store.h"
#include "audit/audit.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"

void advisor_event_suffix(char *buf, size_t len, int64_t rev, const char *hash)
{
    if (rev > 0 && hash != NULL && hash[0] != '\0') {
        snprintf(buf, len, "version:v%lld hash:sha256:%s", (long long)rev, hash);
    } else if (rev > 0) {
        snprintf(buf, len, "version:v%lld", (long long)rev);
    } else if (hash != NULL && hash[0] != '\0') {
        snprintf(buf, len, "hash:sha256:%s", hash);
    } else {
        buf[0] = '\0';
    }
}

/* ===========================================================================
 * The audit key (docs/audit.md#key)
 *
 * One per process, loaded before any worker starts and read-only after:
 * every worker seals with it (OpenSSL signs with a shared EVP_PKEY from
 * several threads; each call has its own context).
 * ========================================================================= */

static struct audit_key *audit_key;
static bool unsealed; /* --test-no-audit-chain: measurement only */

void advisor_audit_test_unsealed(void)
{
    unsealed = true;
}

pv_result advisor_audit_open(const char *data_dir, const char *key_file, char *err, size_t errlen)
{
    char path[1100];

    PV_ENSURE(audit_key == NULL, PV_ERR_INTERNAL);
    if (key_file != NULL) {
        /* A given key is never made here: a replica that made its own
         * would sign the shared chain with a second key. */
        if (access(key_file, F_OK) != 0) {
            snprintf(err, errlen,
                     "%s: %s; make the key once (openssl genpkey -algorithm ed25519 -out FILE) "
                     "and give the same file to every replica",
                     key_file, strerror(errno));
            PV_BAIL(PV_ERR_IO);
        }
        if ((size_t)snprintf(path, sizeof(path), "%s", key_file) >= sizeof(path)) {
            snprintf(err, errlen, "%s: path too long", key_file);
            PV_BAIL(PV_ERR_USAGE);
        }
    } else if ((size_t)snprintf(path, sizeof(path), "%s/audit.key", data_dir) >= sizeof(path)) {
        snprintf(err, errlen, "%s: path too long", data_dir);
        PV_BAIL(PV_ERR_USAGE);
    }
    pv_errno = PV_OK;
    audit_key = audit_key_open(path, err, errlen);
    PV_ENSURE(audit_key != NULL, pv_errno == PV_ERR_NOMEM ? PV_ERR_NOMEM : PV_ERR_IO);
    return PV_RESULT_OK;
}

static void head_record(void *arg, const struct store_event *e)
{
    char **out = arg;

    free(*out);
    *out = pv_strdup(e->record);
}

pv_result advisor_audit_check_signer(struct store *st, bool claim, bool *mismatch, int64_t *seq)
{
    char seal[65];
    char *record = NULL;
    pv_result r;

    *mismatch = false;
    PV_ENSURE(audit_key != NULL, PV_ERR_INTERNAL);
    /* A claim reads the head under the writer's lock, so that of two
     * replicas starting on an empty chain the second sees the first's. */
    PV_GUARD(claim ? store_begin(st) : store_begin_read(st));
    r = store_event_head(st, seq, seal);
    if (pv_ok(r) && *seq > 0) {
        r = store_event_each(st, *seq - 1, 1, head_record, &record);
    } else if (pv_ok(r) && claim) {
        char pub[AUDIT_PUB_B64_LEN];
        char line[AUDIT_PUB_B64_LEN + 64];
        r = audit_key_pub_b64(audit_key, pub);
        if (pv_ok(r)) {
            snprintf(line, sizeof(line), "AUDIT:KEY [INFO] the chain is signed by %s", pub);
            r = advisor_event(st, NULL, "AUDIT:KEY", line, json_pack("{s:s}", "public_key", pub));
        }
        if (pv_ok(r)) {
            r = store_commit(st);
        }
    }
    store_rollback(st);
    PV_GUARD(r);
    /* No record yet, or one written unsealed (sealed at start): no signer. */
    if (record != NULL && record[0] != '\0') {
        *mismatch = !audit_signed_by(audit_key, "record", record);
    }
    free(record);
    return PV_RESULT_OK;
}

void advisor_audit_close(void)
{
    audit_key_free(audit_key);
    audit_key = NULL;
}

const struct audit_key *advisor_audit_key(void)
{
    return audit_key;
}

/* ===========================================================================
 * Events
 * ========================================================================= */

/* The sealed record of event 'e' (seq, ts, names set) with 'data'
 * (borrowed): its canonical text into e->record, its seal into e->seal.
 * 'prev' is the seal of the event before. */
static pv_result seal_event(struct store_event *e, const json_t *data, const char *prev,
                            bool legacy)
{
    char seal[65];
    json_t *rec;
    pv_result r;

    PV_ENSURE(audit_key != NULL, PV_ERR_INTERNAL); /* events are never written unsealed */
    rec = json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:O,s:o,s:s}", "type", "record", "seq",
                    (json_int_t)e->seq, "ts_ms", (json_int_t)e->ts_ms, "kind", e->kind, "sandbox",
                    e->sandbox, "line", e->line, "data", data, "blobs", audit_blob_refs(data),
                    "prev", prev);
    PV_ENSURE(rec != NULL, PV_ERR_NOMEM);
    if (legacy) {
        json_object_set_new(rec, "legacy", json_true());
    }
    r = audit_seal(audit_key, "record", rec, seal, &e->record);
    if (pv_ok(r)) {
        e->seal = pv_strdup(seal);
        r = e->record != NULL && e->seal != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, __func__);
    }
    json_decref(rec);
    return r;
}

/* A record that changes an input of the decisions in its scope carries
 * those inputs as they are after the change, read in its transaction
 * (docs/audit.md#inputs): the start check and verify compare them with
 * the store, replay decides approvals by them. */
static pv_result bind_inputs(struct store *st, const char *sandbox, const char *kind, json_t *data)
{
    json_t *inputs = NULL;

    if (!advisor_inputs_kind(kind) || json_object_get(data, "decision_inputs") != NULL) {
        return PV_RESULT_OK;
    }
    PV_GUARD(advisor_inputs_json(st, sandbox != NULL ? sandbox : "", &inputs));
    if (json_object_set_new(data, "decision_inputs", inputs) != 0) {
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

pv_result advisor_event(struct store *st, const char *sandbox, const char *kind, const char *line,
                        json_t *extra)
{
    struct store_event e;
    char prev[65];
    json_t *data = extra != NULL ? extra : json_object();
    json_t *j = json_pack("{s:s,s:s,s:s}", "kind", kind, "sandbox", sandbox != NULL ? sandbox : "",
                          "line", line);
    pv_result r;

    if (j == NULL || data == NULL) {
        json_decref(j);
        json_decref(data);
        PV_BAIL(PV_ERR_NOMEM);
    }
    r = bind_inputs(st, sandbox, kind, data);
    if (!pv_ok(r)) {
        json_decref(j);
        json_decref(data);
        return r;
    }
    json_object_update(j, data);
    memset(&e, 0, sizeof(e));
    e.sandbox = PV_UNCONST(sandbox != NULL ? sandbox : "");
    e.kind = PV_UNCONST(kind);
    e.line = PV_UNCONST(line);
    e.json = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    /* The head is read inside this transaction (and savepoint), never
     * cached: a rolled-back neighbour in the group commit leaves no trace. */
    r = e.json != NULL ? store_event_head(st, &e.seq, prev) : pv_fail(PV_ERR_NOMEM, __func__);
    if (pv_ok(r) && unsealed) {
        r = store_event_append(st, &e);
        json_decref(data);
        free(e.json);
        return r;
    }
    if (pv_ok(r)) {
        e.seq++;
        e.ts_ms = advisor_now_ms();
        r = seal_event(&e, data, prev, false);
    }
    if (pv_ok(r)) {
        int64_t sealed = e.seq;
        r = store_event_append(st, &e);
        /* Same transaction, so the store's next seq is the one sealed. */
        if (pv_ok(r) && e.seq != sealed) {
            r = pv_fail(PV_ERR_INTERNAL, __func__);
        }
    }
    json_decref(data);
    free(e.json);
    free(e.record);
    free(e.seal);
    return r;
}

/* ===========================================================================
 * Events written before the chain (docs/audit.md#legacy)
 * ========================================================================= */

struct legacy_ctx {
    struct store_event *v;
    size_t n;
    size_t cap;
    bool sealed_seen; /* collect only the unsealed prefix */
    bool oom;
};

static void legacy_collect(void *arg, const struct store_event *e)
{
    struct legacy_ctx *x = arg;
    struct store_event *c;

    if (x->oom || x->sealed_seen || e->record[0] != '\0') {
        x->sealed_seen = true;
        return;
    }
    if (x->n == x->cap) {
        size_t cap = x->cap == 0 ? 64 : 2 * x->cap;
        struct store_event *v = pv_realloc(x->v, cap * sizeof(*v));
        if (v == NULL) {
            x->oom = true;
            return;
        }
        x->v = v;
        x->cap = cap;
    }
    c = &x->v[x->n++];
    memset(c, 0, sizeof(*c));
    c->seq = e->seq;
    c->ts_ms = e->ts_ms;
    c->sandbox = pv_strdup(e->sandbox);
    c->kind = pv_strdup(e->kind);
    c->line = pv_strdup(e->line);
    c->json = pv_strdup(e->json);
    x->oom = c->sandbox == NULL || c->kind == NULL || c->line == NULL || c->json == NULL;
}

pv_result advisor_audit_seal_legacy(struct store *st, size_t *sealed)
{
    struct legacy_ctx x;
    char prev[65];
    pv_result r;

    *sealed = 0;
    memset(&x, 0, sizeof(x));
    PV_ENSURE(audit_key != NULL, PV_ERR_INTERNAL);
    PV_GUARD(store_begin(st));
    r = store_event_each(st, 0, SIZE_MAX, legacy_collect, &x);
    if (pv_ok(r) && x.oom) {
        r = pv_fail(PV_ERR_NOMEM, __func__);
    }
    memset(prev, '0', 64);
    prev[64] = '\0';
    for (size_t i = 0; i < x.n && pv_ok(r); i++) {
        struct store_event *e = &x.v[i];
        json_t *data = json_loads(e->json, 0, NULL);
        if (!json_is_object(data)) {
            json_decref(data);
            data = json_object();
        }
        /* The shorthand fields are the record's own; data is the rest. */
        json_object_del(data, "kind");
        json_object_del(data, "sandbox");
        json_object_del(data, "line");
        r = data != NULL && e->seq == (int64_t)i + 1 ? seal_event(e, data, prev, true)
                                                     : pv_fail(PV_ERR_INTERNAL, __func__);
        json_decref(data);
        if (pv_ok(r)) {
            r = store_event_set_record(st, e->seq, e->record, e->seal);
        }
        if (pv_ok(r)) {
            memcpy(prev, e->seal, sizeof(prev));
        }
    }
    for (size_t i = 0; i < x.n; i++) {
        store_event_clear(&x.v[i]);
    }
    free(x.v);
    r = pv_ok(r) ? store_commit(st) : r;
    if (!pv_ok(r)) {
        store_rollback(st);
        return r;
    }
    *sealed = x.n;
    return PV_RESULT_OK;
}

/* ===========================================================================
 * The state the chain implies, against the store's (docs/audit.md#state)
 * ========================================================================= */

struct chunk_state {
    json_t *chunks; /* id -> status */
    json_t *rules;  /* approved id -> audit_rule_digest */
};

static void chunk_status(void *arg, const struct store_chunk *c)
{
    struct chunk_state *x = arg;

    json_object_set_new(x->chunks, c->id, json_string(c->status));
    if (strcmp(c->status, "approved") == 0) {
        /* the rule the composition merges, bound by its approval record */
        json_t *rule = advisor_load_json(c->proposed_rule);
        char digest[65];
        audit_rule_digest(rule, c->rule_name, digest);
        json_object_set_new(x->rules, c->id, json_string(digest));
        json_decref(rule);
    }
}

/* The hash of the policy the latest revision's blob holds: the row's hash
 * when they agree, the content's otherwise, so that a row pointed at
 * another blob disagrees with its chain (docs/advisor.md#integrity). */
static json_t *served_hash(struct store *st, const char *name, const struct store_revision *rev)
{
    char *text;
    size_t len = 0;
    char content[65];

    if (rev->hash == NULL) {
        return json_string("");
    }
    text = advisor_rev_text(st, name, rev, NULL);
    if (text != NULL) {
        free(text);
        return json_string(rev->hash);
    }
    text = store_blob_get(st, rev->blob, &len);
    if (text == NULL || !pv_ok(advisor_rev_content_hash(text, len, content))) {
        snprintf(content, sizeof(content), "(its blob does not load)");
    }
    free(text);
    return json_string(content);
}

pv_result advisor_audit_store_state(struct store *st, json_t **out)
{
    struct advisor_sandboxes l;
    json_t *state = json_object();
    pv_result r;

    *out = NULL;
    memset(&l, 0, sizeof(l));
    r = state != NULL ? advisor_sandboxes_list(st, false, &l) : pv_fail(PV_ERR_NOMEM, __func__);
    for (size_t i = 0; pv_ok(r) && i < l.n; i++) {
        struct store_revision rev;
        struct chunk_state cs = {json_object(), json_object()};
        json_t *sb;

        memset(&rev, 0, sizeof(rev));
        r = cs.chunks != NULL && cs.rules != NULL ? store_rev_latest(st, l.ids[i], &rev)
                                                  : pv_fail(PV_ERR_NOMEM, __func__);
        if (!pv_ok(r) && r.err == PV_ERR_NOTFOUND) {
            r = PV_RESULT_OK; /* a sandbox without a revision: version 0 */
        }
        if (pv_ok(r)) {
            r = store_chunk_each(st, l.ids[i], NULL, chunk_status, &cs);
        }
        json_t *inputs = NULL;
        struct store_revision base;
        memset(&base, 0, sizeof(base));
        if (pv_ok(r)) {
            r = advisor_inputs_json(st, l.names[i], &inputs);
        }
        if (pv_ok(r) && !pv_ok(store_base_latest(st, l.ids[i], &base))) {
            base.blob = NULL; /* no base: nothing to compare */
        }
        sb = pv_ok(r) ? json_pack("{s:I,s:o,s:O,s:O,s:o}", "version", (json_int_t)rev.rev, "hash",
                                  served_hash(st, l.names[i], &rev), "chunks", cs.chunks, "rules",
                                  cs.rules, "inputs", inputs)
                      : NULL;
        if (sb != NULL && base.blob != NULL) {
            json_object_set_new(sb, "base_blob", json_string(base.blob));
        }
        store_revision_clear(&base);
        if (pv_ok(r) && (sb == NULL || json_object_set_new(state, l.names[i], sb) != 0)) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
        json_decref(cs.chunks);
        json_decref(cs.rules);
        store_revision_clear(&rev);
    }
    advisor_sandboxes_free(&l);
    if (pv_ok(r)) {
        /* the global scope's inputs under "" (docs/audit.md#inputs) */
        json_t *inputs = NULL;
        r = advisor_inputs_json(st, "", &inputs);
        if (pv_ok(r) && json_object_set_new(state, "", json_pack("{s:o}", "inputs", inputs)) != 0) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
    }
    if (!pv_ok(r)) {
        json_decref(state);
        return r;
    }
    *out = state;
    return PV_RESULT_OK;
}

struct fold_ctx {
    json_t *implied;
    size_t n;
    bool bad;    /* out of memory, or a record that does not parse */
    bool bound;  /* a record carries decision_inputs */
    bool legacy; /* a record changed an input without carrying them */
};

/* A chain of records none of which ever changed an input without binding
 * it - a fresh one, or one written since the binding - binds "nothing set"
 * in the global scope until its first global record (docs/audit.md#inputs).
 * A chain without records (or only unsealed ones) binds nothing. */
static void fold_done(struct fold_ctx *x)
{
    if (x->n > 0 && !x->legacy && json_object_get(x->implied, "") == NULL) {
        json_object_set_new(x->implied, "", json_pack("{s:{}}", "inputs"));
    }
}

static void fold_one(void *arg, const struct store_event *e)
{
    struct fold_ctx *x = arg;
    json_t *rec;

    if (e->record[0] == '\0') {
        return; /* unsealed (--test-no-audit-chain after sealed records): no record */
    }
    rec = x->bad ? NULL : json_loads(e->record, 0, NULL);

    if (rec == NULL || !pv_ok(audit_state_fold(x->implied, rec))) {
        x->bad = true;
    }
    if (rec != NULL) {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        bool carries = json_object_get(json_object_get(rec, "data"), "decision_inputs") != NULL;
        x->bound |= carries;
        x->legacy |= !carries && kind != NULL && advisor_inputs_kind(kind);
    }
    x->n++;
    json_decref(rec);
}

static void log_disagreement(void *arg, const char *sandbox, const char *chunk,
                             const char *store_says, const char *chain_says, int64_t seq)
{
    char at[48] = "";

    (void)arg;
    if (seq > 0) {
        snprintf(at, sizeof(at), " (record seq %lld)", (long long)seq);
    }
    pv_log_warnx("audit: sandbox %s%s%s: the store says %s, the chain says %s%s", sandbox,
                 chunk != NULL ? " chunk " : "", chunk != NULL ? chunk : "", store_says, chain_says,
                 at);
}

/* A chain written before the inputs were bound (docs/audit.md#inputs):
 * the inputs the store holds now are recorded once, one CONFIG:INPUTS
 * record per scope (the global one and each sandbox), and the implied
 * state takes them. From then on every change is recorded. */
static pv_result adopt_inputs(struct store *st, json_t *implied, const json_t *actual)
{
    const char *name;
    json_t *act;
    pv_result r = store_begin(st);

    json_object_foreach((json_t *)PV_UNCONST(actual), name, act)
    {
        char line[160];
        snprintf(line, sizeof(line),
                 "CONFIG:INPUTS [INFO] gateway recorded the decision inputs of %s%s as found "
                 "(the first start that binds them)",
                 name[0] != '\0' ? "sandbox " : "the global scope", name);
        if (pv_ok(r)) {
            r = advisor_event(
                st, name, "CONFIG:INPUTS", line,
                json_pack("{s:O}", "decision_inputs", json_object_get(act, "inputs")));
        }
    }
    r = pv_ok(r) ? store_commit(st) : r;
    if (!pv_ok(r)) {
        store_rollback(st);
        return r;
    }
    json_object_foreach((json_t *)PV_UNCONST(actual), name, act)
    {
        json_t *imp = json_object_get(implied, name);
        if (imp == NULL && name[0] == '\0') {
            json_object_set_new(implied, "", json_object());
            imp = json_object_get(implied, "");
        }
        if (imp != NULL) {
            json_object_set(imp, "inputs", json_object_get(act, "inputs"));
        }
    }
    pv_log_info("audit: the chain predates the binding of decision inputs: recorded the store's "
                "inputs of %zu scope%s as found (docs/audit.md#inputs)",
                json_object_size(actual), json_object_size(actual) == 1 ? "" : "s");
    return PV_RESULT_OK;
}

pv_result advisor_audit_implied(struct store *st, json_t **out)
{
    struct fold_ctx x = {audit_state_new(), 0, false, false, false};
    pv_result r = x.implied != NULL ? store_event_each(st, 0, SIZE_MAX, fold_one, &x)
                                    : pv_fail(PV_ERR_NOMEM, __func__);

    if (pv_ok(r) && x.bad) {
        r = pv_fail(PV_ERR_IO, __func__);
    }
    if (pv_ok(r)) {
        fold_done(&x);
    }
    if (!pv_ok(r)) {
        json_decref(x.implied);
        *out = NULL;
        return r;
    }
    *out = x.implied;
    return PV_RESULT_OK;
}

pv_result advisor_audit_check_state(struct store *st, size_t *records, size_t *disagreements)
{
    struct fold_ctx x = {audit_state_new(), 0, false, false, false};
    json_t *actual = NULL;
    pv_result r;

    *records = 0;
    *disagreements = 0;
    PV_ENSURE(x.implied != NULL, PV_ERR_NOMEM);
    r = store_begin_read(st);
    if (pv_ok(r)) {
        r = store_event_each(st, 0, SIZE_MAX, fold_one, &x);
    }
    if (pv_ok(r) && x.bad) {
        r = pv_fail(PV_ERR_IO, __func__);
    }
    if (pv_ok(r)) {
        r = advisor_audit_store_state(st, &actual);
    }
    store_rollback(st);
    if (pv_ok(r) && x.legacy && !x.bound) {
        r = adopt_inputs(st, x.implied, actual);
    }
    if (pv_ok(r)) {
        fold_done(&x);
    }
    if (pv_ok(r)) {
        *records = x.n;
        *disagreements = audit_state_compare(x.implied, actual, log_disagreement, NULL);
    }
    json_decref(actual);
    json_decref(x.implied);
    return r;
}

/* ===========================================================================
 * Export (docs/audit.md#format)
 * ========================================================================= */

struct export_ctx {
    struct pv_dynbuf *out;
    json_t *blobs; /* referenced digests */
    int64_t last_seq;
    int64_t count;
    char head[65];
    bool bad;
};

static void export_one(void *arg, const struct store_event *e)
{
    struct export_ctx *x = arg;
    json_t *rec = json_loads(e->record, JSON_REJECT_DUPLICATES, NULL);
    json_t *refs = json_object_get(rec, "blobs");
    json_t *v;
    size_t i;

    if (rec == NULL || e->record[0] == '\0') {
        x->bad = true; /* an unsealed row cannot be exported as intact */
        json_decref(rec);
        return;
    }
    json_array_foreach(refs, i, v)
    {
        if (json_is_string(v)) {
            json_object_set_new(x->blobs, json_string_value(v), json_true());
        }
    }
    json_decref(rec);
    pv_dynbuf_puts(x->out, e->record);
    pv_dynbuf_putc(x->out, '\n');
    x->last_seq = e->seq;
    x->count++;
    snprintf(x->head, sizeof(x->head), "%s", e->seal);
}

/* long: the export is one read transaction writing the
 * header, the records and the blobs in order. */
pv_result advisor_audit_export(struct store *st, int64_t since, struct pv_dynbuf *out, char *err,
                               size_t errlen)
{
    struct pv_dynbuf body;
    struct export_ctx x;
    char first_prev[65];
    char seal[65];
    char pub[AUDIT_PUB_B64_LEN];
    const char *sha;
    json_t *v;
    json_t *hdr = NULL;
    json_t *state = NULL;
    char *text = NULL;
    pv_result r;

    err[0] = '\0';
    memset(&x, 0, sizeof(x));
    pv_dynbuf_init(&body, AUDIT_FILE_MAX);
    x.out = &body;
    x.blobs = json_object();
    r = x.blobs != NULL && audit_key != NULL ? store_begin_read(st)
                                             : pv_fail(PV_ERR_INTERNAL, __func__);
    if (!pv_ok(r)) {
        snprintf(err, errlen, "no audit key or out of memory");
        goto out;
    }
    if (since == 0) {
        memset(first_prev, '0', 64);
        first_prev[64] = '\0';
    } else if (!pv_ok(store_event_seal(st, since, first_prev))) {
        snprintf(err, errlen, "there is no record %lld", (long long)since);
        r = pv_fail(PV_ERR_NOTFOUND, __func__);
        goto out;
    }
    memcpy(x.head, first_prev, sizeof(x.head));
    x.last_seq = since;
    r = store_event_each(st, since, SIZE_MAX, export_one, &x);
    /* The store's state in the same snapshot: verify compares it with the
     * state the records imply (docs/audit.md#state). */
    if (pv_ok(r)) {
        r = advisor_audit_store_state(st, &state);
    }
    if (pv_ok(r) && x.bad) {
        snprintf(err, errlen, "the store holds an event without a sealed record");
        r = pv_fail(PV_ERR_IO, __func__);
    }
    json_object_foreach(x.blobs, sha, v)
    {
        size_t len = 0;
        char *data = pv_ok(r) ? store_blob_get(st, sha, &len) : NULL;
        char *b64 = data != NULL ? audit_b64(data, len) : NULL;
        if (pv_ok(r) && b64 == NULL) {
            snprintf(err, errlen, "blob %s is missing from the store", sha);
            r = pv_fail(PV_ERR_IO, __func__);
        }
        if (b64 != NULL) {
            pv_dynbuf_putf(&body, "{\"data_b64\":\"%s\",\"sha256\":\"%s\",\"type\":\"blob\"}\n",
                           b64, sha);
        }
        free(data);
        free(b64);
    }
    store_rollback(st);
    if (!pv_ok(r)) {
        if (err[0] == '\0') {
            snprintf(err, errlen, "cannot read the store: %s", store_errmsg(st));
        }
        goto out;
    }
    r = audit_key_pub_b64(audit_key, pub);
    hdr = pv_ok(r) ? json_pack("{s:s,s:s,s:s,s:I,s:s,s:I,s:I,s:s,s:I}", "type", "header", "format",
                               AUDIT_FORMAT, "pubkey", pub, "since", (json_int_t)since,
                               "first_prev", first_prev, "last_seq", (json_int_t)x.last_seq,
                               "records", (json_int_t)x.count, "head", x.head, "exported_ms",
                               (json_int_t)advisor_now_ms())
                   : NULL;
    if (hdr != NULL && state != NULL) {
        json_object_set_new(hdr, "state", state);
        state = NULL;
    }
    r = hdr != NULL ? audit_seal(audit_key, "header", hdr, seal, &text)
                    : pv_fail(PV_ERR_NOMEM, __func__);
    if (text == NULL || body.failed) {
        snprintf(err, errlen, "out of memory");
        r = pv_fail(PV_ERR_NOMEM, __func__);
        goto out;
    }
    pv_dynbuf_puts(out, text);
    pv_dynbuf_putc(out, '\n');
    if (body.len > 0) {
        pv_dynbuf_put(out, body.buf, body.len);
    }
    r = out->failed ? pv_fail(PV_ERR_NOMEM, __func__) : PV_RESULT_OK;
out:
    store_rollback(st);
    free(text);
    json_decref(hdr);
    json_decref(state);
    json_decref(x.blobs);
    pv_dynbuf_free(&body);
    return r;
}

/* ===========================================================================
 * The store's decision inputs against the chain's (docs/audit.md#inputs)
 * ========================================================================= */

/* Scope -> the inputs last found equal to the chain's (a fast path only:
 * a miss folds the chain). */
static pthread_mutex_t backed_mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *backed_seen;

static bool seen_equal(const char *scope, const json_t *now)
{
    bool eq;

    pthread_mutex_lock(&backed_mu);
    eq = json_equal(json_object_get(backed_seen, scope), PV_UNCONST(now));
    pthread_mutex_unlock(&backed_mu);
    return eq;
}

static void seen_set(const char *scope, const json_t *now)
{
    pthread_mutex_lock(&backed_mu);
    if (backed_seen == NULL) {
        backed_seen = json_object();
    }
    json_object_set_new(backed_seen, scope, json_deep_copy(now));
    pthread_mutex_unlock(&backed_mu);
}

/* The store's inputs of 'scope' against the chain's ('implied' folded on
 * first need). */
static bool scope_backed(struct store *st, const char *scope, json_t **implied)
{
    json_t *now = NULL;
    const json_t *rec;
    bool ok;

    pv_result r = advisor_inputs_json(st, scope, &now);

    if (!pv_ok(r)) {
        return r.err == PV_ERR_NOTFOUND; /* no such sandbox: its caller says so */
    }
    if (seen_equal(scope, now)) {
        json_decref(now);
        return true;
    }
    if (*implied == NULL && !pv_ok(advisor_audit_implied(st, implied))) {
        json_decref(now);
        return false;
    }
    rec = json_object_get(json_object_get(*implied, scope), "inputs");
    ok = rec == NULL || json_equal(PV_UNCONST(rec), now);
    if (ok && rec != NULL) {
        seen_set(scope, now);
    }
    json_decref(now);
    return ok;
}

bool advisor_inputs_backed(struct store *st, const char *sandbox)
{
    const char *scopes[] = {sandbox, ""};
    json_t *implied = NULL;
    bool ok = true;

    for (int attempt = 0; attempt < 2; attempt++) {
        ok = true;
        for (size_t i = 0; ok && i < PV_ARRAY_LEN(scopes); i++) {
            ok = scope_backed(st, scopes[i], &implied);
        }
        json_decref(implied);
        implied = NULL;
        if (ok) {
            return true;
        }
        /* once more: a change may have committed between the two reads */
    }
    pv_log_warnx("INTEGRITY: sandbox %s: the decision inputs the store holds (settings, "
                 "credentials, boundary, addresses, tool servers) are not the ones the audit "
                 "chain records: nothing is decided on them (docs/audit.md#inputs)",
                 sandbox);
    return false;
}
