/* SPDX-License-Identifier: Apache-2.0 */
/* audit_state.c - the state a chain of records implies, and its comparison
 *
 * Folding the records of a chain in sequence order gives, per sandbox, the
 * effective revision its last revision-writing record names (version and
 * hash) and, per chunk, the status its last decision record implies
 * (docs/audit.md#state). The advisor compares that with its store at start
 * (and refuses a store that disagrees); the export carries the store's
 * state in its signed header, and verify compares it with the records of a
 * whole-chain export. Both sides have the same shape:
 *
 *   {"<sandbox>": {"version": N, "hash": "<hex>", "seq": S,
 *                  "chunks": {"<id>": "<status>", ...}}, ...}
 *
 * "seq" (implied side only) is the record behind the revision; the
 * implied side keeps each chunk's record seq in a parallel "chunk_seq"
 * object. One pass, one hash lookup per record: linear in the chain.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static bool kind_is(const char *kind, const char *want)
{
    return kind != NULL && strcmp(kind, want) == 0;
}

bool audit_record_writes_revision(const json_t *rec)
{
    static const char *const kinds[] = {"CONFIG:CREATED", "CONFIG:APPROVED", "CONFIG:REMOVED",
                                        "CONFIG:MERGED",  "CONFIG:RESOLVED", "CONFIG:SUSPENDED"};
    const char *kind = str_of(rec, "kind");
    const json_t *data = json_object_get(rec, "data");
    bool known = false;

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        known |= kind_is(kind, kinds[i]);
    }
    return known && json_is_integer(json_object_get(data, "version")) &&
           json_integer_value(json_object_get(data, "version")) > 0 &&
           str_of(data, "hash") != NULL && str_of(data, "hash")[0] != '\0';
}

json_t *audit_state_new(void)
{
    return json_object();
}

/* The implied entry of 'sandbox', created when missing. */
static json_t *sandbox_entry(json_t *state, const char *sandbox)
{
    json_t *sb = json_object_get(state, sandbox);

    if (sb == NULL) {
        sb = json_pack("{s:I,s:s,s:I,s:{},s:{}}", "version", (json_int_t)0, "hash", "", "seq",
                       (json_int_t)0, "chunks", "chunk_seq");
        if (sb == NULL || json_object_set_new(state, sandbox, sb) != 0) {
            return NULL;
        }
    }
    return sb;
}

void audit_rule_digest(const json_t *rule, const char *name, char out[65])
{
    char *text = audit_canonical(rule);
    size_t nlen = strlen(name);
    size_t tlen = text != NULL ? strlen(text) : 0;
    char *both = pv_malloc(nlen + tlen + 2);

    out[0] = '\0';
    if (text != NULL && both != NULL) {
        memcpy(both, name, nlen);
        both[nlen] = '\n';
        memcpy(both + nlen + 1, text, tlen + 1);
        audit_sha256_hex(both, nlen + 1 + tlen, out);
    }
    free(both);
    free(text);
}

/* An approval's rule (data.inputs.rule and rule_name) as the digest the
 * store's approved chunk must have (compare_chunks). */
static void set_rule(json_t *sb, const json_t *data)
{
    const json_t *in = json_object_get(data, "inputs");
    const json_t *rule = json_object_get(in, "rule");
    const char *name = str_of(in, "rule_name");
    const char *id = str_of(data, "chunk_id");
    char digest[65];

    if (id == NULL || rule == NULL || name == NULL) {
        return; /* an older record: nothing to bind */
    }
    audit_rule_digest(rule, name, digest);
    if (json_object_get(sb, "rules") == NULL) {
        json_object_set_new(sb, "rules", json_object());
    }
    json_object_set_new(json_object_get(sb, "rules"), id, json_string(digest));
}

static void set_chunk(json_t *sb, const char *id, const char *status, json_int_t seq)
{
    json_object_set_new(json_object_get(sb, "chunks"), id, json_string(status));
    json_object_set_new(json_object_get(sb, "chunk_seq"), id, json_integer(seq));
}

/* Every chunk of 'sb' whose implied status is 'from' becomes 'to'. */
static void move_all(json_t *sb, const char *from, const char *to, json_int_t seq)
{
    json_t *chunks = json_object_get(sb, "chunks");
    const char *id;
    json_t *v;

    json_object_foreach(chunks, id, v)
    {
        if (kind_is(json_string_value(v), from)) {
            json_string_set(v, to);
            json_object_set_new(json_object_get(sb, "chunk_seq"), id, json_integer(seq));
        }
    }
}

/* The chunk ids a record names: data.chunk_id, and the strings of
 * data.chunk_ids (a record that decides several at once). */
static void each_chunk(json_t *sb, const json_t *data, const char *status, json_int_t seq)
{
    const char *one = str_of(data, "chunk_id");
    const json_t *v;
    size_t i;

    if (one != NULL) {
        set_chunk(sb, one, status, seq);
    }
    json_array_foreach(json_object_get(data, "chunk_ids"), i, v)
    {
        if (json_is_string(v)) {
            set_chunk(sb, json_string_value(v), status, seq);
        }
    }
}

/* The inputs a record binds (data.decision_inputs) for its scope: the
 * sandbox's entry, or the global one under "" (docs/audit.md#inputs). */
static pv_result fold_inputs(json_t *state, const char *scope, const json_t *inputs, json_int_t seq)
{
    json_t *e = scope[0] != '\0' ? sandbox_entry(state, scope) : json_object_get(state, "");

    if (e == NULL && scope[0] == '\0') {
        e = json_object();
        if (e == NULL || json_object_set_new(state, "", e) != 0) {
            PV_BAIL(PV_ERR_NOMEM);
        }
    }
    PV_ENSURE(e != NULL, PV_ERR_NOMEM);
    json_object_set_new(e, "inputs", json_deep_copy(inputs));
    json_object_set_new(e, "inputs_seq", json_integer(seq));
    return PV_RESULT_OK;
}

pv_result audit_state_fold(json_t *state, const json_t *rec)
{
    const char *kind = str_of(rec, "kind");
    const char *sandbox = str_of(rec, "sandbox");
    const json_t *data = json_object_get(rec, "data");
    json_int_t seq = json_integer_value(json_object_get(rec, "seq"));
    json_t *sb;

    if (json_is_object(json_object_get(data, "decision_inputs")) &&
        json_object_get(state, "") == NULL) {
        /* From the first record that binds inputs on, every change of a
         * global input is recorded: none so far means none set. */
        json_t *none = json_object();
        PV_GUARD(fold_inputs(state, "", none, seq));
        json_decref(none);
    }
    if (kind != NULL && sandbox != NULL && sandbox[0] == '\0' &&
        json_is_object(json_object_get(data, "decision_inputs"))) {
        return fold_inputs(state, "", json_object_get(data, "decision_inputs"), seq);
    }
    if (kind == NULL || sandbox == NULL || sandbox[0] == '\0') {
        return PV_RESULT_OK; /* global events imply nothing about a sandbox */
    }
    if (kind_is(kind, "CONFIG:DELETED")) {
        json_object_del(state, sandbox);
        return PV_RESULT_OK;
    }
    if (kind_is(kind, "CONFIG:CREATED")) {
        json_object_del(state, sandbox); /* a name used again starts afresh */
    }
    sb = sandbox_entry(state, sandbox);
    PV_ENSURE(sb != NULL, PV_ERR_NOMEM);
    if (audit_record_writes_revision(rec)) {
        json_object_set_new(sb, "version", json_copy(json_object_get(data, "version")));
        json_object_set_new(sb, "hash", json_string(str_of(data, "hash")));
        json_object_set_new(sb, "seq", json_integer(seq));
        if (str_of(data, "base_blob") != NULL) {
            /* the base every composition of this revision started from:
             * the store's latest base revision must hold it */
            json_object_set_new(sb, "base_blob", json_string(str_of(data, "base_blob")));
        }
    }
    if (json_is_object(json_object_get(data, "decision_inputs"))) {
        PV_GUARD(fold_inputs(state, sandbox, json_object_get(data, "decision_inputs"), seq));
    }
    if (kind_is(kind, "CONFIG:PROPOSED")) {
        each_chunk(sb, data, "pending", seq);
    } else if (kind_is(kind, "CONFIG:APPROVED")) {
        each_chunk(sb, data, "approved", seq);
        set_rule(sb, data);
    } else if (kind_is(kind, "CONFIG:REJECTED")) {
        each_chunk(sb, data, "rejected", seq);
    } else if (kind_is(kind, "CONFIG:SUSPENDED")) {
        each_chunk(sb, data, "suspended", seq);
    } else if (kind_is(kind, "CONFIG:REMOVED") && json_object_get(data, "cleared") != NULL) {
        /* clear deletes the pending chunks it finds: every chunk the chain
         * says is pending at this record */
        move_all(sb, "pending", "deleted", seq);
    } else if (kind_is(kind, "CONFIG:REMOVED")) {
        /* undo returns the chunk to pending; a reject follows with its own
         * record */
        each_chunk(sb, data, "pending", seq);
    }
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Comparison
 * ------------------------------------------------------------------------- */

static size_t say(audit_disagree_fn fn, void *arg, const char *sandbox, const char *chunk,
                  const char *store, const char *chain, json_int_t seq)
{
    if (fn != NULL) {
        fn(arg, sandbox, chunk, store, chain, (int64_t)seq);
    }
    return 1;
}

/* An approved chunk's rule against the one its approval record carries
 * (both sides hold the digest of audit_rule_digest; a side without one,
 * an older record or export, binds nothing). */
static size_t compare_rule(const char *name, const char *id, const json_t *imp, const json_t *act,
                           json_int_t seq, audit_disagree_fn fn, void *arg)
{
    const char *chain = str_of(json_object_get(imp, "rules"), id);
    const char *store = str_of(json_object_get(act, "rules"), id);
    char s[120];
    char c[120];

    if (chain == NULL || store == NULL || strcmp(chain, store) == 0) {
        return 0;
    }
    snprintf(s, sizeof(s), "approved with rule digest %s", store);
    snprintf(c, sizeof(c), "approved with rule digest %s", chain);
    return say(fn, arg, name, id, s, c, seq);
}

static size_t compare_chunks(const char *name, const json_t *imp, const json_t *act,
                             audit_disagree_fn fn, void *arg)
{
    const json_t *ichunks = json_object_get(imp, "chunks");
    const json_t *iseq = json_object_get(imp, "chunk_seq");
    const json_t *achunks = json_object_get(act, "chunks");
    const char *id;
    json_t *v;
    size_t n = 0;

    json_object_foreach((json_t *)PV_UNCONST(ichunks), id, v)
    {
        const char *chain = json_string_value(v);
        const char *store = json_string_value(json_object_get(achunks, id));
        json_int_t seq = json_integer_value(json_object_get(iseq, id));

        if (store == NULL && kind_is(chain, "deleted")) {
            continue;
        }
        if (store == NULL || chain == NULL || strcmp(store, chain) != 0) {
            n += say(fn, arg, name, id, store != NULL ? store : "(no such chunk)", chain, seq);
        } else if (kind_is(chain, "approved")) {
            n += compare_rule(name, id, imp, act, seq, fn, arg);
        }
    }
    json_object_foreach((json_t *)PV_UNCONST(achunks), id, v)
    {
        if (json_object_get(ichunks, id) == NULL) {
            n += say(fn, arg, name, id, json_string_value(v) != NULL ? json_string_value(v) : "?",
                     "(no record of this chunk)", 0);
        }
    }
    return n;
}

/* The base policy the last revision record composed from against the
 * store's latest base revision (a side without one binds nothing). */
static size_t compare_base(const char *name, const json_t *imp, const json_t *act,
                           audit_disagree_fn fn, void *arg)
{
    const char *chain = str_of(imp, "base_blob");
    const char *store = str_of(act, "base_blob");
    char s[120];
    char c[120];

    if (chain == NULL || store == NULL || strcmp(chain, store) == 0) {
        return 0;
    }
    snprintf(s, sizeof(s), "base policy blob %.16s...", store);
    snprintf(c, sizeof(c), "base policy blob %.16s...", chain);
    return say(fn, arg, name, NULL, s, c, json_integer_value(json_object_get(imp, "seq")));
}

/* One input's side of a disagreement, e.g. "input setting:k sha256 ab12..." */
static void input_says(char *out, size_t len, const char *key, const char *digest)
{
    if (digest == NULL) {
        snprintf(out, len, "input %s unset", key);
    } else {
        snprintf(out, len, "input %s sha256 %.16s...", key, digest);
    }
}

/* The inputs the chain last bound for a scope against the store's (both
 * {key: digest}); nothing when either side has none (a chain or an export
 * from before the binding). */
static size_t compare_inputs(const char *name, const json_t *imp, const json_t *act,
                             audit_disagree_fn fn, void *arg)
{
    const json_t *ii = json_object_get(imp, "inputs");
    const json_t *ai = json_object_get(act, "inputs");
    json_int_t seq = json_integer_value(json_object_get(imp, "inputs_seq"));
    const char *label = name[0] != '\0' ? name : "(global)";
    const char *key;
    json_t *v;
    size_t n = 0;
    char s[160];
    char c[160];

    if (!json_is_object(ii) || !json_is_object(ai)) {
        return 0;
    }
    json_object_foreach((json_t *)PV_UNCONST(ii), key, v)
    {
        const char *store = str_of(ai, key);
        if (store == NULL ||
            strcmp(store, json_string_value(v) != NULL ? json_string_value(v) : "") != 0) {
            input_says(s, sizeof(s), key, store);
            input_says(c, sizeof(c), key, json_string_value(v));
            n += say(fn, arg, label, NULL, s, c, seq);
        }
    }
    json_object_foreach((json_t *)PV_UNCONST(ai), key, v)
    {
        if (json_object_get(ii, key) == NULL) {
            input_says(s, sizeof(s), key, json_string_value(v));
            input_says(c, sizeof(c), key, NULL);
            n += say(fn, arg, label, NULL, s, c, seq);
        }
    }
    return n;
}

size_t audit_state_compare(const json_t *implied, const json_t *actual, audit_disagree_fn fn,
                           void *arg)
{
    const char *name;
    json_t *imp;
    json_t *act;
    size_t n = 0;

    json_object_foreach((json_t *)PV_UNCONST(implied), name, imp)
    {
        json_int_t iv = json_integer_value(json_object_get(imp, "version"));
        json_int_t seq = json_integer_value(json_object_get(imp, "seq"));
        const char *ih = str_of(imp, "hash");
        char store[160];
        char chain[160];

        act = json_object_get(actual, name);
        if (name[0] == '\0') {
            n += compare_inputs(name, imp, act, fn, arg); /* the global scope */
            continue;
        }
        if (act == NULL) {
            n += say(fn, arg, name, NULL, "(no such sandbox)", "the sandbox exists", seq);
            continue;
        }
        if (iv > 0) {
            json_int_t av = json_integer_value(json_object_get(act, "version"));
            const char *ah = str_of(act, "hash");
            if (av != iv || ah == NULL || ih == NULL || strcmp(ah, ih) != 0) {
                snprintf(store, sizeof(store), "revision v%lld hash %s", (long long)av,
                         ah != NULL ? ah : "?");
                snprintf(chain, sizeof(chain), "revision v%lld hash %s", (long long)iv,
                         ih != NULL ? ih : "?");
                n += say(fn, arg, name, NULL, store, chain, seq);
            }
        }
        n += compare_base(name, imp, act, fn, arg);
        n += compare_chunks(name, imp, act, fn, arg);
        n += compare_inputs(name, imp, act, fn, arg);
    }
    json_object_foreach((json_t *)PV_UNCONST(actual), name, act)
    {
        if (name[0] != '\0' && json_object_get(implied, name) == NULL) {
            n += say(fn, arg, name, NULL, "the sandbox exists", "(no such sandbox)", 0);
        }
    }
    return n;
}
