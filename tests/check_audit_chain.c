/* SPDX-License-Identifier: Apache-2.0 */
/* check_audit_chain.c - the audit chain's canonical form, keys, seals and
 * verifier
 *
 * The canonical form is pinned byte for byte (a change would break every
 * export ever written). A small export is built here the way the advisor
 * builds one (sealed records, a referenced blob, a sealed header) and then
 * mutated row by row: each mutation must be caught and named, or (for
 * whitespace) must not be.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"

/* ===========================================================================
 * Canonical form and base64
 * ========================================================================= */

static const struct {
    const char *in;
    const char *want;
} canon_rows[] = {
    {"{\"b\": 1, \"a\": [true, null, \"x\"]}", "{\"a\":[true,null,\"x\"],\"b\":1}"},
    {"{\"z\": {\"y\": 1, \"x\": 2}}", "{\"z\":{\"x\":2,\"y\":1}}"},
    {"{\"dash\": \"\\u2014\"}", "{\"dash\":\"\\u2014\"}"},
    {"{\"s\": \"tab\\tnl\\n\"}", "{\"s\":\"tab\\tnl\\n\"}"},
    {"{\"n\": -0, \"m\": 12345678901234}", "{\"m\":12345678901234,\"n\":0}"},
};

START_TEST(test_canonical)
{
    json_t *j = json_loads(canon_rows[_i].in, 0, NULL);
    char *got;

    ck_assert_ptr_nonnull(j);
    got = audit_canonical(j);
    ck_assert_str_eq(got, canon_rows[_i].want);
    free(got);
    json_decref(j);
}
END_TEST

static const struct {
    const char *text;
    const char *want; /* NULL: refused */
} b64_rows[] = {
    {"", ""},       {"YQ==", "a"},  {"YWI=", "ab"}, {"YWJj", "abc"}, {"YWJjZA==", "abcd"},
    {"YQ=", NULL},  {"Y===", NULL}, {"YQ=A", NULL}, {"YW Jj", NULL}, {"YW\nJ", NULL},
    {"????", NULL},
};

START_TEST(test_b64)
{
    size_t n = 0;
    unsigned char *got = audit_unb64(b64_rows[_i].text, &n);

    if (b64_rows[_i].want == NULL) {
        ck_assert_ptr_null(got);
        return;
    }
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, strlen(b64_rows[_i].want));
    ck_assert_mem_eq(got, b64_rows[_i].want, n);
    {
        char *back = audit_b64(got, n);
        ck_assert_str_eq(back, b64_rows[_i].text);
        free(back);
    }
    free(got);
}
END_TEST

START_TEST(test_blob_refs)
{
    const char *a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const char *b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    json_t *d = json_pack("{s:s,s:{s:s,s:s,s:s},s:s,s:s}", "z_blob", b, "inputs", "x_blob", a,
                          "y_blob", b, "empty_blob", "", "blob", a, "short_blob", "abc");
    json_t *refs = audit_blob_refs(d);
    char *text = audit_canonical(refs);
    char want[200];

    snprintf(want, sizeof(want), "[\"%s\",\"%s\"]", a, b);
    ck_assert_str_eq(text, want);
    free(text);
    json_decref(refs);
    json_decref(d);
}
END_TEST

/* ===========================================================================
 * Keys
 * ========================================================================= */

static char dir[64];

static void key_setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/pv-audit.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void key_teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_key_file)
{
    char path[128];
    char err[256];
    char pub1[AUDIT_PUB_B64_LEN];
    char pub2[AUDIT_PUB_B64_LEN];
    struct stat st;
    struct audit_key *k;
    struct audit_key *pk;
    char *pem;
    FILE *f;

    snprintf(path, sizeof(path), "%s/audit.key", dir);
    k = audit_key_open(path, err, sizeof(err));
    ck_assert_msg(k != NULL, "%s", err);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    ck_assert(pv_ok(audit_key_pub_b64(k, pub1)));
    audit_key_free(k);
    /* The second start loads the same key. */
    k = audit_key_open(path, err, sizeof(err));
    ck_assert_ptr_nonnull(k);
    ck_assert(pv_ok(audit_key_pub_b64(k, pub2)));
    ck_assert_str_eq(pub1, pub2);
    /* The public key round-trips through both of its forms. */
    pk = audit_key_public(pub1, strlen(pub1), err, sizeof(err));
    ck_assert_ptr_nonnull(pk);
    audit_key_free(pk);
    pem = audit_key_pub_pem(k);
    ck_assert_ptr_nonnull(pem);
    pk = audit_key_public(pem, strlen(pem), err, sizeof(err));
    ck_assert_ptr_nonnull(pk);
    ck_assert(pv_ok(audit_key_pub_b64(pk, pub2)));
    ck_assert_str_eq(pub1, pub2);
    audit_key_free(pk);
    free(pem);
    audit_key_free(k);
    /* Wider permissions: refused. */
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_ptr_null(audit_key_open(path, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "must not be accessible"));
    /* Not a key: refused. */
    ck_assert_int_eq(unlink(path), 0);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a key\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0600), 0);
    ck_assert_ptr_null(audit_key_open(path, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "not an Ed25519 private key"));
}
END_TEST

static const char *const bad_pub_rows[] = {
    "",
    "   ",
    "AAAA",
    "not base64 at all",
    "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    /* 33 bytes */
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
};

START_TEST(test_bad_public_keys)
{
    char err[256];
    const char *t = bad_pub_rows[_i];

    ck_assert_ptr_null(audit_key_public(t, strlen(t), err, sizeof(err)));
}
END_TEST

/* ===========================================================================
 * An export, and what verify makes of its mutations
 * ========================================================================= */

#define NREC 100

static struct audit_key *key;
static struct audit_key *other;
static char *lines[NREC + 2]; /* header, records, blob */
static char pub[AUDIT_PUB_B64_LEN];

static char *record(int64_t seq, const char *prev, const char *blob, char seal[65])
{
    json_t *data = blob != NULL ? json_pack("{s:s}", "evidence_blob", blob) : json_object();
    json_t *r =
        json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:O,s:o,s:s}", "type", "record", "seq", (json_int_t)seq,
                  "ts_ms", (json_int_t)(1000 + seq), "kind", "CONFIG:SETTING", "sandbox", "",
                  "line", "CONFIG:SETTING [INFO] x \xe2\x80\x94 y", "data", data, "blobs",
                  audit_blob_refs(data), "prev", prev);
    char *text;

    ck_assert(pv_ok(audit_seal(key, "record", r, seal, NULL)));
    text = audit_canonical(r);
    json_decref(r);
    json_decref(data);
    return text;
}

static void export_setup(void)
{
    char err[256];
    char path[128];
    char prev[65] = AUDIT_GENESIS;
    char seal[65];
    char sha[65];
    const char *blob = "the prover's answer";
    char *b64 = audit_b64(blob, strlen(blob));
    json_t *h;

    key_setup();
    snprintf(path, sizeof(path), "%s/audit.key", dir);
    key = audit_key_open(path, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/other.key", dir);
    other = audit_key_open(path, err, sizeof(err));
    ck_assert(key != NULL && other != NULL);
    ck_assert(pv_ok(audit_key_pub_b64(key, pub)));
    audit_sha256_hex(blob, strlen(blob), sha);
    for (int i = 1; i <= NREC; i++) {
        lines[i] = record(i, prev, i == 3 ? sha : NULL, seal);
        memcpy(prev, seal, sizeof(prev));
    }
    lines[NREC + 1] = pv_malloc(512);
    snprintf(lines[NREC + 1], 512, "{\"data_b64\":\"%s\",\"sha256\":\"%s\",\"type\":\"blob\"}", b64,
             sha);
    free(b64);
    h = json_pack("{s:s,s:s,s:s,s:i,s:s,s:i,s:i,s:s}", "type", "header", "format", AUDIT_FORMAT,
                  "pubkey", pub, "since", 0, "first_prev", AUDIT_GENESIS, "last_seq", NREC,
                  "records", NREC, "head", prev);
    ck_assert(pv_ok(audit_seal(key, "header", h, seal, NULL)));
    lines[0] = audit_canonical(h);
    json_decref(h);
}

static void export_teardown(void)
{
    for (size_t i = 0; i < NREC + 2; i++) {
        free(lines[i]);
        lines[i] = NULL;
    }
    audit_key_free(key);
    audit_key_free(other);
    key_teardown();
}

/* The export with line 'skip' left out (-1: none) and line 'a' and 'b'
 * swapped; caller frees. */
static char *join(int skip, int a, int b)
{
    size_t cap = 1;
    char *out;

    for (int i = 0; i < NREC + 2; i++) {
        cap += strlen(lines[i]) + 1;
    }
    size_t off = 0;

    out = pv_malloc(cap);
    out[0] = '\0';
    for (int i = 0; i < NREC + 2; i++) {
        int k = i == a ? b : i == b ? a : i;
        if (k == skip) {
            continue;
        }
        off += (size_t)snprintf(out + off, cap - off, "%s\n", lines[k]);
    }
    return out;
}

/* Replace the first 'from' in 's' by 'to' (same length or not). */
static char *edit(char *s, const char *from, const char *to)
{
    char *at = strstr(s, from);
    char *out;

    ck_assert_msg(at != NULL, "test: '%s' not found", from);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;

    out = pv_malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    free(s);
    return out;
}

static const struct {
    const char *name;
    int skip, a, b;        /* join() */
    const char *from, *to; /* an edit, or NULL */
    bool other_key;
    enum audit_status want;
    int64_t bad_seq;
    const char *reason;
} mut_rows[] = {
    {"intact", -1, -1, -1, NULL, NULL, false, AUDIT_INTACT, 0, NULL},
    {"whitespace only", -1, -1, -1, "\"seq\":2,", "\"seq\" :  2 ,", false, AUDIT_INTACT, 0, NULL},
    {"one byte of a record", -1, -1, -1, "\"ts_ms\":1002", "\"ts_ms\":1003", false, AUDIT_TAMPERED,
     2, "content does not match its hash"},
    {"one byte of the blob", -1, -1, -1, "dGhl", "dGhm", false, AUDIT_TAMPERED, 3, "is altered"},
    {"blob removed", NREC + 1, -1, -1, NULL, NULL, false, AUDIT_TAMPERED, 3, "is missing"},
    {"a record dropped", 4, -1, -1, NULL, NULL, false, AUDIT_TAMPERED, 5, "sequence gap"},
    {"the first record dropped", 1, -1, -1, NULL, NULL, false, AUDIT_TAMPERED, 2, "expected seq 1"},
    {"two records swapped", -1, 2, 3, NULL, NULL, false, AUDIT_TAMPERED, 3, "sequence gap"},
    {"the last record dropped", NREC, -1, -1, NULL, NULL, false, AUDIT_TAMPERED, 0,
     "records are missing at the end"},
    {"another key", -1, -1, -1, NULL, NULL, true, AUDIT_TAMPERED, 1, "signature does not verify"},
    {"the header's signature edited", -1, -1, -1, "\"sig\":\"", "\"sig\":\"A", false,
     AUDIT_TAMPERED, 0, "header: signature does not verify"},
    {"a duplicate key", -1, -1, -1, "\"seq\":2,", "\"seq\":2,\"seq\":2,", false, AUDIT_TAMPERED, 0,
     "not valid JSON"},
    {"a seq renumbered", -1, -1, -1, "\"seq\":4,", "\"seq\":5,", false, AUDIT_TAMPERED, 5,
     "sequence gap"},
    {"the header's count", -1, -1, -1, "\"records\":100", "\"records\":101", false, AUDIT_TAMPERED,
     0, "header: content does not match"},
    {"the header replaced", -1, -1, -1, "\"type\":\"header\"", "\"type\":\"heade\"", false,
     AUDIT_UNREADABLE, 0, "not a proviso-audit/1 export header"},
    {"a foreign line", -1, -1, -1, "\"type\":\"record\"", "\"type\":\"note\"", false,
     AUDIT_TAMPERED, 0, "not a record or blob line"},
    {"a string for a number", -1, -1, -1, "\"ts_ms\":1004", "\"ts_ms\":\"1004\"", false,
     AUDIT_TAMPERED, 4, "wrong type"},
};

START_TEST(test_mutations)
{
    struct audit_report r;
    char *text = join(mut_rows[_i].skip, mut_rows[_i].a, mut_rows[_i].b);

    if (mut_rows[_i].from != NULL) {
        text = edit(text, mut_rows[_i].from, mut_rows[_i].to);
    }
    for (unsigned mode = 0; mode < 4; mode++) {
        unsigned threads = 1 + mode % 2;
        bool every = mode >= 2;
        audit_verify(text, strlen(text), mut_rows[_i].other_key ? other : key, threads, every, &r);
        ck_assert_msg(r.status == mut_rows[_i].want, "%s (mode %u): status %d (%s)",
                      mut_rows[_i].name, mode, (int)r.status, r.reason);
        if (mut_rows[_i].reason != NULL) {
            ck_assert_msg(strstr(r.reason, mut_rows[_i].reason) != NULL, "%s: reason '%s'",
                          mut_rows[_i].name, r.reason);
        }
        if (mut_rows[_i].want == AUDIT_TAMPERED) {
            ck_assert_msg(r.bad_seq == mut_rows[_i].bad_seq, "%s: bad seq %lld", mut_rows[_i].name,
                          (long long)r.bad_seq);
        } else if (mut_rows[_i].want == AUDIT_INTACT) {
            ck_assert_uint_eq(r.records, NREC);
            ck_assert_uint_eq(r.blobs, 1);
        }
    }
    free(text);
}
END_TEST

START_TEST(test_load)
{
    char *text = join(-1, -1, -1);
    char err[256];
    json_t *recs = NULL;
    json_t *blobs = NULL;

    ck_assert(pv_ok(audit_load(text, strlen(text), &recs, &blobs, err, sizeof(err))));
    ck_assert_uint_eq(json_array_size(recs), NREC);
    ck_assert_uint_eq(json_object_size(blobs), 1);
    json_decref(recs);
    json_decref(blobs);
    ck_assert(!pv_ok(audit_load("{\"type\":\"x\"}\n", 13, &recs, &blobs, err, sizeof(err))));
    ck_assert(!pv_ok(audit_load("nope\n", 5, &recs, &blobs, err, sizeof(err))));
    ck_assert_ptr_nonnull(strstr(err, "line 1"));
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("audit_chain");
    TCase *t = tcase_create("format");
    TCase *k = tcase_create("keys");
    TCase *v = tcase_create("verify");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(t, test_canonical, 0, (int)PV_ARRAY_LEN(canon_rows));
    tcase_add_loop_test(t, test_b64, 0, (int)PV_ARRAY_LEN(b64_rows));
    tcase_add_test(t, test_blob_refs);
    suite_add_tcase(s, t);
    tcase_add_checked_fixture(k, key_setup, key_teardown);
    tcase_add_test(k, test_key_file);
    tcase_add_loop_test(k, test_bad_public_keys, 0, (int)PV_ARRAY_LEN(bad_pub_rows));
    suite_add_tcase(s, k);
    tcase_add_checked_fixture(v, export_setup, export_teardown);
    tcase_add_loop_test(v, test_mutations, 0, (int)PV_ARRAY_LEN(mut_rows));
    tcase_add_test(v, test_load);
    suite_add_tcase(s, v);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
