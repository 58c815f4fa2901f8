/* SPDX-License-Identifier: Apache-2.0 */
/* audit_chain.c - canonical records, seals, and the export's verifier
 *
 * An export (docs/audit.md#format) is JSONL: a header line, one line per
 * record in sequence order, one line per referenced blob. The verifier
 * reads a file an attacker may have touched: every line is parsed with
 * duplicate keys refused, every digest is recomputed from the parsed
 * object (so whitespace or key order changes nothing, any change of a
 * value is caught), and the first bad line is named with the reason. Lines
 * are checked in file order; Ed25519 verification, the expensive part, runs
 * afterwards on several threads, and the earliest failure of either kind
 * is the one reported.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "audit/audit.h"
#include "audit/audit_int.h"

#define CANON_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)
#define MAX_THREADS 16

/* ===========================================================================
 * Canonical form, digests, base64
 * ========================================================================= */

char *audit_canonical(const json_t *j)
{
    return json_dumps(j, CANON_FLAGS);
}

void audit_sha256_hex(const void *data, size_t len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256(data, len, md);
    for (size_t i = 0; i < sizeof(md); i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}

char *audit_b64(const void *data, size_t len)
{
    size_t cap = 4 * ((len + 2) / 3) + 1;
    char *out;

    if (len > (size_t)INT32_MAX) {
        return NULL;
    }
    out = pv_malloc(cap);
    if (out != NULL) {
        EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    }
    return out;
}

unsigned char *audit_unb64(const char *text, size_t *len)
{
    size_t n = strlen(text);
    size_t pad = 0;
    unsigned char *out;
    int got;

    *len = 0;
    if (n % 4 != 0 || n > (size_t)INT32_MAX) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '+' || c == '/' || (c == '=' && i >= n - 2);
        if (!ok || (c != '=' && pad > 0)) {
            return NULL;
        }
        pad += c == '=';
    }
    out = pv_malloc(n / 4 * 3 + 1);
    if (out == NULL) {
        return NULL;
    }
    got = n > 0 ? EVP_DecodeBlock(out, (const unsigned char *)text, (int)n) : 0;
    if (got < 0 || (size_t)got < pad) {
        free(out);
        return NULL;
    }
    *len = (size_t)got - pad;
    out[*len] = '\0';
    return out;
}

static bool is_hex64(const char *s)
{
    if (s == NULL || strlen(s) != 64) {
        return false;
    }
    for (size_t i = 0; i < 64; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return false;
        }
    }
    return true;
}

/* ===========================================================================
 * Sealing
 * ========================================================================= */

/* The signed message: "proviso-audit/1 <what> <hash>". */
static size_t message(char *buf, size_t len, const char *what, const char *hash)
{
    int n = snprintf(buf, len, "%s %s %s", AUDIT_FORMAT, what, hash);
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

pv_result audit_seal(const struct audit_key *k, const char *what, json_t *obj, char seal[65],
                     char **sealed)
{
    unsigned char sig[AUDIT_SIG_LEN];
    char msg[128];
    char hash[65];
    char *text;
    char *b64;
    size_t mlen;

    json_object_del(obj, "hash");
    json_object_del(obj, "sig");
    text = audit_canonical(obj);
    PV_ENSURE(text != NULL, PV_ERR_NOMEM);
    audit_sha256_hex(text, strlen(text), hash);
    free(text);
    mlen = message(msg, sizeof(msg), what, hash);
    PV_ENSURE(mlen > 0, PV_ERR_INTERNAL);
    PV_GUARD(audit_sign(k, msg, mlen, sig));
    b64 = audit_b64(sig, sizeof(sig));
    PV_ENSURE(b64 != NULL, PV_ERR_NOMEM);
    PV_GUARD_JSON(json_object_set_new(obj, "hash", json_string(hash)), PV_ERR_NOMEM);
    PV_GUARD_JSON(json_object_set_new(obj, "sig", json_string(b64)), PV_ERR_NOMEM);
    free(b64);
    text = audit_canonical(obj);
    PV_ENSURE(text != NULL, PV_ERR_NOMEM);
    audit_sha256_hex(text, strlen(text), seal);
    if (sealed != NULL) {
        *sealed = text;
    } else {
        free(text);
    }
    return PV_RESULT_OK;
}

static void collect_refs(const json_t *j, json_t *set)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_object(j)) {
        json_object_foreach((json_t *)PV_UNCONST(j), key, v)
        {
            size_t kl = strlen(key);
            if (json_is_string(v) && kl >= 5 && strcmp(key + kl - 5, "_blob") == 0 &&
                is_hex64(json_string_value(v))) {
                json_object_set_new(set, json_string_value(v), json_true());
            } else {
                collect_refs(v, set);
            }
        }
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, v)
        {
            collect_refs(v, set);
        }
    }
}

json_t *audit_blob_refs(const json_t *data)
{
    json_t *set = json_object();
    json_t *out = json_array();
    const char *key;
    json_t *v;
    const char **keys;
    size_t n = 0;

    if (set == NULL || out == NULL) {
        json_decref(set);
        json_decref(out);
        return NULL;
    }
    collect_refs(data, set);
    keys = pv_calloc(json_object_size(set) + 1, sizeof(*keys));
    if (keys == NULL) {
        json_decref(set);
        json_decref(out);
        return NULL;
    }
    json_object_foreach(set, key, v)
    {
        keys[n++] = key;
    }
    /* Sorted, so the record does not depend on hash-table order. */
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    }
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(out, json_string(keys[i]));
    }
    free(keys);
    json_decref(set);
    return out;
}

/* ===========================================================================
 * Reading an export
 * ========================================================================= */

struct line {
    const char *text; /* the line in the caller's buffer (no newline) */
    size_t len;
    json_t *obj; /* NULL when the line does not parse */
    size_t no;
    bool digested;  /* a record: hash and seal recomputed below */
    int blob_state; /* a blob: 1 digest matches, -1 it does not, -2 not base64 */
    char hash[65];
    char seal[65];
    char error[256];
};

struct lines {
    struct line *v;
    size_t n;
};

static void lines_free(struct lines *l)
{
    for (size_t i = 0; i < l->n; i++) {
        json_decref(l->v[i].obj);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static bool digests(json_t *obj, char hash[65], char seal[65]);
static int blob_digest(const json_t *obj);

struct parse_job {
    struct lines *l;
    size_t start;
    size_t step;
    bool digest;
};

/* Parse lines start, start+step, ...; digest the records among them. */
static void *parse_main(void *arg)
{
    struct parse_job *j = arg;

    for (size_t i = j->start; i < j->l->n; i += j->step) {
        struct line *ln = &j->l->v[i];
        json_error_t je;
        const char *type;

        ln->obj = json_loadb(ln->text, ln->len, JSON_REJECT_DUPLICATES, &je);
        if (ln->obj == NULL) {
            snprintf(ln->error, sizeof(ln->error), "not valid JSON (column %d: %.160s)", je.column,
                     je.text);
            continue;
        }
        if (!json_is_object(ln->obj)) {
            json_decref(ln->obj);
            ln->obj = NULL;
            snprintf(ln->error, sizeof(ln->error), "not a JSON object");
            continue;
        }
        type = json_string_value(json_object_get(ln->obj, "type"));
        if (j->digest && type != NULL && strcmp(type, "record") == 0) {
            ln->digested = digests(ln->obj, ln->hash, ln->seal);
        } else if (j->digest && type != NULL && strcmp(type, "blob") == 0) {
            ln->blob_state = blob_digest(ln->obj);
        }
    }
    return NULL;
}

/* Split 'buf' into lines (a final newline ends the last line, it does not
 * start an empty one) and parse them on up to 'threads' threads; with
 * 'digest', each record's hash and seal are recomputed there too, which is
 * most of a verification's work and needs nothing from other lines. */
static pv_result lines_parse(const char *buf, size_t len, unsigned threads, bool digest,
                             struct lines *out)
{
    struct parse_job jobs[MAX_THREADS] = {{0}};
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS];
    size_t cap = 0;
    size_t off = 0;

    memset(out, 0, sizeof(*out));
    while (off < len) {
        const char *nl = memchr(buf + off, '\n', len - off);
        size_t end = nl != NULL ? (size_t)(nl - buf) : len;
        struct line *ln;

        if (out->n == cap) {
            struct line *v;
            cap = cap == 0 ? 1024 : 2 * cap;
            v = pv_realloc(out->v, cap * sizeof(*v));
            if (v == NULL) {
                lines_free(out);
                PV_BAIL(PV_ERR_NOMEM);
            }
            out->v = v;
        }
        ln = &out->v[out->n++];
        memset(ln, 0, sizeof(*ln));
        ln->text = buf + off;
        ln->len = end - off;
        ln->no = out->n;
        off = end + 1;
    }
    threads = threads == 0 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (out->n < 64) {
        threads = 1;
    }
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (struct parse_job){.l = out, .start = t, .step = threads, .digest = digest};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, parse_main, &jobs[t]) == 0;
    }
    parse_main(&jobs[0]);
    for (unsigned t = 1; t < threads; t++) {
        if (started[t]) {
            pthread_join(tid[t], NULL);
        } else {
            parse_main(&jobs[t]);
        }
    }
    return PV_RESULT_OK;
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static bool int_of(const json_t *o, const char *key, int64_t *v)
{
    json_t *j = json_object_get(o, key);

    if (!json_is_integer(j) || json_integer_value(j) < 0) {
        return false;
    }
    *v = (int64_t)json_integer_value(j);
    return true;
}

/* ===========================================================================
 * Verification
 * ========================================================================= */

struct vrec {
    const json_t *obj;
    size_t no;
    int64_t seq;
    char hash[65];
};

static void fail(struct audit_report *r, size_t line, int64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Keep the earliest failure (by line). */
static void fail(struct audit_report *r, size_t line, int64_t seq, const char *fmt, ...)
{
    va_list ap;

    if (r->status == AUDIT_TAMPERED && r->bad_line <= line) {
        return;
    }
    r->status = AUDIT_TAMPERED;
    r->bad_line = line;
    r->bad_seq = seq;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
    va_end(ap);
}

/* Recompute 'obj''s hash (without hash/sig) and seal (with them). The
 * object is ours (parsed from the file): hash and sig are taken out for
 * the first digest and put back, without copying the tree. */
static bool digests(json_t *obj, char hash[65], char seal[65])
{
    json_t *h = json_incref(json_object_get(obj, "hash"));
    json_t *sig = json_incref(json_object_get(obj, "sig"));
    char *text;
    bool ok;

    json_object_del(obj, "hash");
    json_object_del(obj, "sig");
    text = audit_canonical(obj);
    if (text != NULL) {
        audit_sha256_hex(text, strlen(text), hash);
        free(text);
    }
    ok = text != NULL && (h == NULL || json_object_set_new(obj, "hash", h) == 0) &&
         (sig == NULL || json_object_set_new(obj, "sig", sig) == 0);
    if (!ok) {
        return false;
    }
    text = audit_canonical(obj);
    if (text == NULL) {
        return false;
    }
    audit_sha256_hex(text, strlen(text), seal);
    free(text);
    return true;
}

static bool sig_valid(const struct audit_key *k, const char *what, const json_t *obj,
                      const char *hash)
{
    char msg[128];
    size_t mlen = message(msg, sizeof(msg), what, hash);
    const char *b64 = str_of(obj, "sig");
    size_t n = 0;
    unsigned char *sig = b64 != NULL ? audit_unb64(b64, &n) : NULL;
    bool ok = sig != NULL && mlen > 0 && audit_sig_ok(k, msg, mlen, sig, n);

    free(sig);
    return ok;
}

bool audit_signed_by(const struct audit_key *k, const char *what, const char *text)
{
    json_t *obj = json_loads(text, 0, NULL);
    const char *stored = str_of(obj, "hash");
    char hash[65];
    char seal[65];
    bool ok = stored != NULL && digests(obj, hash, seal) && strcmp(hash, stored) == 0 &&
              sig_valid(k, what, obj, hash);

    json_decref(obj);
    return ok;
}

struct sigjob {
    const struct audit_key *k;
    const struct vrec *recs;
    size_t n;
    size_t start;
    size_t step;
    size_t first_bad; /* n when none */
};

static void *sig_main(void *arg)
{
    struct sigjob *j = arg;

    j->first_bad = j->n;
    for (size_t i = j->start; i < j->n; i += j->step) {
        if (!sig_valid(j->k, "record", j->recs[i].obj, j->recs[i].hash)) {
            j->first_bad = i;
            break;
        }
    }
    return NULL;
}

/* The first record in [0, n) whose signature fails; n when none. */
static size_t check_sigs(const struct audit_key *k, const struct vrec *recs, size_t n,
                         unsigned threads)
{
    struct sigjob jobs[MAX_THREADS] = {{0}};
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS];
    size_t first = n;
    size_t t;

    threads = threads == 0 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (n < 64) {
        threads = 1;
    }
    for (t = 0; t < threads; t++) {
        jobs[t] = (struct sigjob){.k = k, .recs = recs, .n = n, .start = t, .step = threads};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, sig_main, &jobs[t]) == 0;
    }
    sig_main(&jobs[0]);
    for (t = 1; t < threads; t++) {
        if (started[t]) {
            pthread_join(tid[t], NULL);
        } else {
            sig_main(&jobs[t]);
        }
    }
    for (t = 0; t < threads; t++) {
        first = jobs[t].first_bad < first ? jobs[t].first_bad : first;
    }
    return first;
}

/* A blob line's content against its name: 1 it matches, -1 it does not,
 * -2 not base64 (0: no name or data; check_blob_line reports it). */
static int blob_digest(const json_t *obj)
{
    const char *sha = str_of(obj, "sha256");
    const char *data = str_of(obj, "data_b64");
    unsigned char *raw;
    size_t n = 0;
    char got[65];

    if (!is_hex64(sha) || data == NULL) {
        return 0;
    }
    raw = audit_unb64(data, &n);
    if (raw == NULL) {
        return -2;
    }
    audit_sha256_hex(raw, n, got);
    free(raw);
    return strcmp(got, sha) == 0 ? 1 : -1;
}

/* Blob lines (digests computed by lines_parse). Into 'blobs': sha256 ->
 * line number (positive: intact, negative: altered). */
static void check_blob_line(const struct line *ln, json_t *blobs, struct audit_report *r)
{
    const char *sha = str_of(ln->obj, "sha256");

    if (ln->blob_state == 0) {
        fail(r, ln->no, 0, "blob line without a sha256 and data_b64");
        return;
    }
    if (json_object_get(blobs, sha) != NULL) {
        fail(r, ln->no, 0, "blob %s appears twice", sha);
        return;
    }
    if (ln->blob_state == -2) {
        fail(r, ln->no, 0, "blob %s: data_b64 is not base64", sha);
    }
    json_object_set_new(
        blobs, sha, json_integer(ln->blob_state == 1 ? (json_int_t)ln->no : -(json_int_t)ln->no));
    if (ln->blob_state == 1) {
        r->blobs++;
    }
}

/* One record line against its predecessor. False stops the walk. */
static bool check_record(const struct line *ln, const json_t *blobs, int64_t expect_seq,
                         const char *expect_prev, struct vrec *out, char seal[65],
                         struct audit_report *r)
{
    const json_t *o = ln->obj;
    const json_t *refs = json_object_get(o, "blobs");
    const char *prev = str_of(o, "prev");
    const char *hash = str_of(o, "hash");
    int64_t seq = 0;
    int64_t ts = 0;
    json_t *v;
    size_t i;

    if (!int_of(o, "seq", &seq) || !int_of(o, "ts_ms", &ts) || str_of(o, "kind") == NULL ||
        str_of(o, "sandbox") == NULL || str_of(o, "line") == NULL ||
        !json_is_object(json_object_get(o, "data")) || !json_is_array(refs) || !is_hex64(prev) ||
        !is_hex64(hash) || str_of(o, "sig") == NULL) {
        fail(r, ln->no, seq, "record is missing a field or has one of the wrong type");
        return false;
    }
    if (seq != expect_seq) {
        fail(r, ln->no, seq, "%s: expected seq %lld, found %lld",
             seq > expect_seq ? "sequence gap (a record is missing)"
                              : "sequence out of order (records were reordered or repeated)",
             (long long)expect_seq, (long long)seq);
        return false;
    }
    if (strcmp(prev, expect_prev) != 0) {
        fail(r, ln->no, seq,
             "prev does not match the digest of the record before it (a record was removed, "
             "inserted, reordered or changed)");
        return false;
    }
    if (!ln->digested) {
        fail(r, ln->no, seq, "out of memory");
        return false;
    }
    memcpy(out->hash, ln->hash, sizeof(out->hash));
    memcpy(seal, ln->seal, 65);
    if (strcmp(out->hash, hash) != 0) {
        fail(r, ln->no, seq, "content does not match its hash (the record was edited)");
        return false;
    }
    json_array_foreach(refs, i, v)
    {
        const char *sha = json_string_value(v);
        json_t *at = sha != NULL ? json_object_get(blobs, sha) : NULL;
        if (!is_hex64(sha)) {
            fail(r, ln->no, seq, "blobs[%zu] is not a SHA-256", i);
            return false;
        }
        if (at == NULL) {
            fail(r, ln->no, seq, "blob %s referenced here is missing from the export", sha);
            return false;
        }
        if (json_integer_value(at) < 0) {
            fail(r, ln->no, seq,
                 "blob %s referenced here is altered: its content (line %lld) does not match "
                 "its digest",
                 sha, (long long)-json_integer_value(at));
            return false;
        }
    }
    out->obj = o;
    out->no = ln->no;
    out->seq = seq;
    return true;
}

static bool header_valid(const json_t *h)
{
    int64_t v;

    return json_is_object(h) && str_of(h, "type") != NULL &&
           strcmp(str_of(h, "type"), "header") == 0 && str_of(h, "format") != NULL &&
           strcmp(str_of(h, "format"), AUDIT_FORMAT) == 0 && int_of(h, "since", &v) &&
           int_of(h, "last_seq", &v) && int_of(h, "records", &v) &&
           is_hex64(str_of(h, "first_prev")) && is_hex64(str_of(h, "head")) &&
           is_hex64(str_of(h, "hash")) && str_of(h, "sig") != NULL;
}

static void check_header(json_t *h, const struct audit_key *k, size_t nrec, int64_t last_seq,
                         const char *head, struct audit_report *r)
{
    char hash[65];
    char seal[65];
    int64_t since = 0;
    int64_t hlast = 0;
    int64_t hrec = 0;

    (void)int_of(h, "since", &since);
    (void)int_of(h, "last_seq", &hlast);
    (void)int_of(h, "records", &hrec);
    if (!digests(h, hash, seal) || strcmp(hash, str_of(h, "hash")) != 0) {
        fail(r, 1, 0, "header: content does not match its hash (the header was edited)");
    } else if (!sig_valid(k, "header", h, hash)) {
        fail(r, 1, 0, "header: signature does not verify with the trusted key");
    } else if (since == 0 && strcmp(str_of(h, "first_prev"), AUDIT_GENESIS) != 0) {
        fail(r, 1, 0, "header: an export from the start must begin at the genesis digest");
    } else if ((size_t)hrec != nrec || hlast != (nrec > 0 ? last_seq : since) ||
               strcmp(str_of(h, "head"), head) != 0) {
        fail(r, 1, 0,
             "records are missing at the end: the header names %lld records up to seq %lld, "
             "the file holds %zu up to seq %lld",
             (long long)hrec, (long long)hlast, nrec, (long long)(nrec > 0 ? last_seq : since));
    }
}

/* The first disagreement between the header's store state and the
 * records; the count in 'n'. */
struct state_ctx {
    struct audit_report *r;
    const struct vrec *recs;
    size_t nrec;
    size_t n;
};

static void state_disagrees(void *arg, const char *sandbox, const char *chunk,
                            const char *store_says, const char *chain_says, int64_t seq)
{
    struct state_ctx *x = arg;
    size_t line = 1;

    if (x->n++ > 0) {
        return;
    }
    for (size_t i = 0; i < x->nrec; i++) {
        if (x->recs[i].seq == seq) {
            line = x->recs[i].no;
        }
    }
    fail(x->r, line, seq,
         "the store disagrees with the chain: sandbox %s%s%s: the store says %s, "
         "the chain says %s",
         sandbox, chunk != NULL ? " chunk " : "", chunk != NULL ? chunk : "", store_says,
         chain_says);
}

/* docs/audit.md#state: a whole-chain export's header carries the store's
 * state at the export; the records must imply exactly that state. An
 * export from 'since' > 0 lacks the records before it: not checked. */
static void check_state(const json_t *h, const struct vrec *recs, size_t n, struct audit_report *r)
{
    const json_t *actual = json_object_get(h, "state");
    struct state_ctx x = {r, recs, n, 0};
    json_t *implied;
    int64_t since = 0;

    (void)int_of(h, "since", &since);
    if (!json_is_object(actual) || since != 0) {
        return;
    }
    implied = audit_state_new();
    for (size_t i = 0; implied != NULL && i < n; i++) {
        if (!pv_ok(audit_state_fold(implied, recs[i].obj))) {
            json_decref(implied);
            implied = NULL;
        }
    }
    if (implied == NULL) {
        fail(r, 1, 0, "out of memory");
        return;
    }
    r->state_checked = true;
    if (audit_state_compare(implied, actual, state_disagrees, &x) > 1) {
        size_t len = strlen(r->reason);
        snprintf(r->reason + len, sizeof(r->reason) - len, " (and %zu more disagreements)",
                 x.n - 1);
    }
    json_decref(implied);
}

json_t *audit_header(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len);
    json_t *h =
        json_loadb(buf, nl != NULL ? (size_t)(nl - buf) : len, JSON_REJECT_DUPLICATES, NULL);

    if (!json_is_object(h)) {
        json_decref(h);
        return NULL;
    }
    return h;
}

void audit_verify(const char *buf, size_t len, const struct audit_key *trusted, unsigned threads,
                  bool every_sig, struct audit_report *out)
{
    struct lines l;
    struct vrec *recs = NULL;
    json_t *blobs = json_object();
    json_t *h;
    char expect_prev[65];
    char seal[65];
    int64_t seq = 0;
    size_t n = 0;
    size_t bad;

    memset(out, 0, sizeof(*out));
    out->status = AUDIT_UNREADABLE;
    if (blobs == NULL || !pv_ok(lines_parse(buf, len, threads, true, &l))) {
        snprintf(out->reason, sizeof(out->reason), "out of memory");
        json_decref(blobs);
        return;
    }
    h = l.n > 0 ? l.v[0].obj : NULL;
    if (!header_valid(h)) {
        snprintf(out->reason, sizeof(out->reason),
                 "line 1: not a %s export header (type, format, since, first_prev, last_seq, "
                 "records, head, hash, sig)",
                 AUDIT_FORMAT);
        goto done;
    }
    out->status = AUDIT_INTACT;
    recs = pv_calloc(l.n, sizeof(*recs));
    if (recs == NULL) {
        out->status = AUDIT_UNREADABLE;
        snprintf(out->reason, sizeof(out->reason), "out of memory");
        goto done;
    }
    for (size_t i = 1; i < l.n; i++) {
        const char *type = l.v[i].obj != NULL ? str_of(l.v[i].obj, "type") : NULL;
        if (type != NULL && strcmp(type, "blob") == 0) {
            check_blob_line(&l.v[i], blobs, out);
        }
    }
    (void)int_of(h, "since", &seq);
    seq++;
    snprintf(expect_prev, sizeof(expect_prev), "%s", str_of(h, "first_prev"));
    for (size_t i = 1; i < l.n; i++) {
        const struct line *ln = &l.v[i];
        const char *type = ln->obj != NULL ? str_of(ln->obj, "type") : NULL;

        if (ln->obj == NULL) {
            fail(out, ln->no, 0, "%s", ln->error);
            break;
        }
        if (type != NULL && strcmp(type, "blob") == 0) {
            continue;
        }
        if (type == NULL || strcmp(type, "record") != 0) {
            fail(out, ln->no, 0, "not a record or blob line");
            break;
        }
        if (!check_record(ln, blobs, seq, expect_prev, &recs[n], seal, out)) {
            break;
        }
        memcpy(expect_prev, seal, sizeof(expect_prev));
        if (n == 0) {
            out->first_seq = seq;
        }
        out->last_seq = seq;
        n++;
        seq++;
    }
    out->records = n;
    memcpy(out->head, expect_prev, sizeof(out->head));
    /* Signatures. Each record's prev is the digest of the whole record
     * before it, signature included, so the chain binds every earlier
     * signature: when the links hold, the last record's signature and the
     * header's vouch for the whole file (docs/audit.md#verify). Every
     * signature is checked when asked, and whenever something failed, so
     * that the first bad record is the one named. */
    if (every_sig || out->status != AUDIT_INTACT ||
        (n > 0 && !sig_valid(trusted, "record", recs[n - 1].obj, recs[n - 1].hash))) {
        bad = check_sigs(trusted, recs, n, threads);
        if (bad < n) {
            fail(out, recs[bad].no, recs[bad].seq,
                 "signature does not verify with the trusted key (re-signed with another key, "
                 "or the signature was edited)");
        }
    }
    if (out->status == AUDIT_INTACT) {
        check_header(h, trusted, n, out->last_seq, out->head, out);
    }
    if (out->status == AUDIT_INTACT) {
        check_state(h, recs, n, out);
    }
done:
    free(recs);
    json_decref(blobs);
    lines_free(&l);
}

/* ===========================================================================
 * Loading for replay
 * ========================================================================= */

pv_result audit_load(const char *buf, size_t len, json_t **records, json_t **blobs, char *err,
                     size_t errlen)
{
    struct lines l;
    json_t *recs = json_array();
    json_t *bl = json_object();

    *records = NULL;
    *blobs = NULL;
    if (recs == NULL || bl == NULL || !pv_ok(lines_parse(buf, len, 1, false, &l))) {
        json_decref(recs);
        json_decref(bl);
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    for (size_t i = 0; i < l.n; i++) {
        const struct line *ln = &l.v[i];
        const char *type = ln->obj != NULL ? str_of(ln->obj, "type") : NULL;

        if (ln->obj == NULL || type == NULL) {
            snprintf(err, errlen, "line %zu: %s", ln->no,
                     ln->obj == NULL ? ln->error : "a line without a type");
            goto bad;
        }
        if (strcmp(type, "record") == 0) {
            json_array_append(recs, ln->obj);
        } else if (strcmp(type, "blob") == 0) {
            const char *sha = str_of(ln->obj, "sha256");
            const char *data = str_of(ln->obj, "data_b64");
            size_t n = 0;
            unsigned char *raw = data != NULL ? audit_unb64(data, &n) : NULL;
            if (!is_hex64(sha) || raw == NULL) {
                free(raw);
                snprintf(err, errlen, "line %zu: a blob line without sha256 and base64 data",
                         ln->no);
                goto bad;
            }
            json_t *text = json_stringn((const char *)raw, n);
            free(raw);
            if (text == NULL) {
                snprintf(err, errlen, "line %zu: blob %s is not UTF-8 text", ln->no, sha);
                goto bad;
            }
            json_object_set_new(bl, sha, text);
        } else if (strcmp(type, "header") != 0 || i != 0) {
            snprintf(err, errlen, "line %zu: unexpected line type '%s'", ln->no, type);
            goto bad;
        }
    }
    lines_free(&l);
    *records = recs;
    *blobs = bl;
    return PV_RESULT_OK;
bad:
    lines_free(&l);
    json_decref(recs);
    json_decref(bl);
    PV_BAIL(PV_ERR_PARSE);
}
