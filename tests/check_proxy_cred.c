/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_cred.c - unit tests of proxy_cred.c (credential placeholders)
 *
 * Tables run with tcase_add_loop_test: header fields (every shape: whole
 * value, `Scheme <placeholder>`, Basic, provider aliases; case, percent and
 * nested encodings, unknown keys, hosts a credential does not target, two
 * placeholders, a marker split across two fields), request targets (path
 * segments and query values, redacted and resolved forms), body content
 * types and bodies (the 256 KiB bound, UTF-8), the store's loader (modes,
 * owners, value files, refusals that never print a value), and the model's
 * loader, which accepts the same file and keeps no value.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "proxy/proxy_int.h"

static const char store_text[] = "credentials:\n"
                                 "  - name: api\n"
                                 "    target_hosts: [api.example.com, '*.example.org']\n"
                                 "    env: API_TOKEN\n"
                                 "    value: VAL1\n"
                                 "  - name: gh\n"
                                 "    type: github-pat\n"
                                 "    scopes: [repo]\n"
                                 "    target_hosts: [github.com]\n"
                                 "    env: GH\n"
                                 "    value: ghp_VALUE2\n"
                                 "  - name: enc\n"
                                 "    target_hosts: [api.example.com]\n"
                                 "    env: ENC\n"
                                 "    value: 'a/b c&d'\n"
                                 "  - name: metadata-only\n"
                                 "    target_hosts: [meta.example.com]\n";

static struct proxy_creds *store(void)
{
    char err[512];
    struct proxy_creds *s =
        proxy_creds_new_from("store.yaml", store_text, strlen(store_text), ".", err, sizeof(err));
    ck_assert_msg(s != NULL, "store: %s", err);
    ck_assert_uint_eq(proxy_creds_count(s), 3);
    return s;
}

#define NONE PROXY_CRED_NONE
#define OK PROXY_CRED_REWRITTEN
#define UNAV PROXY_CRED_UNAVAILABLE
#define MISM PROXY_CRED_MISMATCH
#define BIG PROXY_CRED_TOOBIG

/* ---------------------------------------------------------------------------
 * Header fields
 * ------------------------------------------------------------------------- */

struct hdr_case {
    const char *name;
    const char *value;
    const char *host;
    enum proxy_cred_status st;
    const char *out; /* the rewritten value (OK), or NULL */
    size_t n;        /* placeholders replaced */
};

static const struct hdr_case hdr_cases[] = {
    /* whole value, Scheme <placeholder>, aliases */
    {"X-Api-Key", "openshell:resolve:env:API_TOKEN", "api.example.com", OK, "VAL1", 1},
    {"Authorization", "Bearer openshell:resolve:env:API_TOKEN", "api.example.com", OK,
     "Bearer VAL1", 1},
    {"Authorization", "token openshell:resolve:env:GH", "github.com", OK, "token ghp_VALUE2", 1},
    {"X-Api-Key", "sk-proj-OPENSHELL-RESOLVE-ENV-API_TOKEN", "api.example.com", OK, "VAL1", 1},
    {"X-Api-Key", "OPENSHELL-RESOLVE-ENV-API_TOKEN", "api.example.com", OK, "VAL1", 1},
    {"Authorization", "Bearer provider-OPENSHELL-RESOLVE-ENV-GH", "github.com", OK,
     "Bearer ghp_VALUE2", 1},
    /* Basic base64("user:openshell:resolve:env:API_TOKEN") -> base64("user:VAL1") */
    {"Authorization", "Basic dXNlcjpvcGVuc2hlbGw6cmVzb2x2ZTplbnY6QVBJX1RPS0VO", "api.example.com",
     OK, "Basic dXNlcjpWQUwx", 1},
    {"Authorization", "basic   dXNlcjpvcGVuc2hlbGw6cmVzb2x2ZTplbnY6QVBJX1RPS0VO", "api.example.com",
     OK, "basic   dXNlcjpWQUwx", 1},
    /* two placeholders, one key twice; the key ends at a non-key byte */
    {"X-Pair", "openshell:resolve:env:API_TOKEN:openshell:resolve:env:API_TOKEN", "api.example.com",
     OK, "VAL1:VAL1", 2},
    {"X-Tail", "openshell:resolve:env:API_TOKEN-x", "api.example.com", OK, "VAL1-x", 1},
    {"X-In", "xopenshell:resolve:env:API_TOKEN", "api.example.com", OK, "xVAL1", 1},
    /* host-glob semantics: *.example.org covers a subdomain, not the apex */
    {"X-Api-Key", "openshell:resolve:env:API_TOKEN", "a.example.org", OK, "VAL1", 1},
    {"X-Api-Key", "openshell:resolve:env:API_TOKEN", "example.org", MISM, NULL, 0},
    {"X-Api-Key", "openshell:resolve:env:API_TOKEN", "API.EXAMPLE.COM", OK, "VAL1", 1},
    /* negative rows: another host, two keys for two hosts, unknown keys */
    {"X-Api-Key", "openshell:resolve:env:API_TOKEN", "github.com", MISM, NULL, 0},
    {"X-Pair", "openshell:resolve:env:GH openshell:resolve:env:API_TOKEN", "github.com", MISM, NULL,
     0},
    {"X-Api-Key", "openshell:resolve:env:NOPE", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "openshell:resolve:env:", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "openshell:resolve:env:1ABC", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "x-OPENSHELL-RESOLVE-ENV-NOPE", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "x-OPENSHELL-RESOLVE-ENV-API-TOKEN", "api.example.com", UNAV, NULL, 0},
    /* case sensitivity: markers and keys are exact; other spellings refused */
    {"X-Api-Key", "OPENSHELL:RESOLVE:ENV:API_TOKEN", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "openshell:resolve:env:api_token", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "sk-openshell-resolve-env-API_TOKEN", "api.example.com", UNAV, NULL, 0},
    /* percent-encoded and nested encodings are refused, never forwarded */
    {"X-Api-Key", "openshell%3Aresolve%3Aenv%3AAPI_TOKEN", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "openshell%253aresolve%253aenv%253aAPI_TOKEN", "api.example.com", UNAV, NULL, 0},
    {"X-Api-Key", "%6Fpenshell:resolve:env:API_TOKEN", "api.example.com", UNAV, NULL, 0},
    /* a placeholder beside a broken one: nothing is half-rewritten */
    {"X-Pair", "openshell:resolve:env:API_TOKEN OPENSHELL:resolve:env:API_TOKEN", "api.example.com",
     UNAV, NULL, 0},
    /* Basic hiding an unknown key */
    {"Authorization", "Basic dXNlcjpvcGVuc2hlbGw6cmVzb2x2ZTplbnY6Tk9QRQ==", "api.example.com", UNAV,
     NULL, 0},
    /* a marker in the field name */
    {"X-OPENSHELL-RESOLVE-ENV-API_TOKEN", "v", "api.example.com", UNAV, NULL, 0},
    /* no marker: untouched (also a Basic value without one) */
    {"Authorization", "Bearer abc", "api.example.com", NONE, NULL, 0},
    {"Authorization", "Basic dXNlcjpwYXNz", "api.example.com", NONE, NULL, 0},
    /* a marker split across two fields is no placeholder in either */
    {"X-A", "openshell:resolve:e", "api.example.com", NONE, NULL, 0},
    {"X-B", "nv:API_TOKEN", "api.example.com", NONE, NULL, 0},
};

START_TEST(test_header)
{
    const struct hdr_case *tc = &hdr_cases[_i];
    struct proxy_creds *s = store();
    struct pv_dynbuf out;
    struct proxy_cred_result r;
    enum proxy_cred_status st;

    pv_dynbuf_init(&out, 4096);
    st = proxy_cred_header(s, tc->host, tc->name, strlen(tc->name), tc->value, strlen(tc->value),
                           false, &out, &r);
    ck_assert_msg(st == tc->st, "%s: %s: status %d want %d (%s)", tc->name, tc->value, st, tc->st,
                  r.why);
    ck_assert_int_eq(r.st, st);
    if (tc->out != NULL) {
        ck_assert_str_eq(out.buf, tc->out);
        ck_assert_uint_eq(r.n, tc->n);
    }
    /* detection agrees with the rewriter: every refusal and rewrite was seen */
    ck_assert(proxy_cred_header_has_marker(tc->name, strlen(tc->name), tc->value,
                                           strlen(tc->value)) == (st != NONE));
    /* a refusal names keys and hosts, never a value */
    ck_assert_ptr_null(strstr(r.why, "VAL1"));
    ck_assert_ptr_null(strstr(r.why, "ghp_VALUE2"));
    pv_dynbuf_free(&out);
    proxy_creds_free(s);
}
END_TEST

START_TEST(test_redact_and_no_store)
{
    struct proxy_creds *s = store();
    struct pv_dynbuf out;
    struct proxy_cred_result r;
    const char *v = "Bearer openshell:resolve:env:NOPE and sk-OPENSHELL-RESOLVE-ENV-GH";

    pv_dynbuf_init(&out, 4096);
    /* redacting needs no value and no target: every placeholder goes */
    ck_assert_int_eq(proxy_cred_rewrite(s, "x.invalid", v, strlen(v), true, &out, &r), OK);
    ck_assert_str_eq(out.buf, "Bearer [CREDENTIAL] and [CREDENTIAL]");
    ck_assert_uint_eq(r.n, 2);
    pv_dynbuf_reset(&out);
    /* no store: every placeholder is unavailable */
    ck_assert_int_eq(proxy_cred_rewrite(NULL, "api.example.com", v, strlen(v), false, &out, &r),
                     UNAV);
    /* the output cap holds */
    pv_dynbuf_free(&out);
    pv_dynbuf_init(&out, 3);
    ck_assert_int_eq(proxy_cred_rewrite(s, "api.example.com", "openshell:resolve:env:API_TOKEN", 31,
                                        false, &out, &r),
                     BIG);
    pv_dynbuf_free(&out);
    proxy_creds_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Request targets
 * ------------------------------------------------------------------------- */

struct target_case {
    const char *t;
    const char *host;
    enum proxy_cred_status st;
    const char *up;  /* for the upstream (OK) */
    const char *red; /* for the policy and the logs (OK and refusals) */
};

static const struct target_case target_cases[] = {
    {"/v1/openshell:resolve:env:API_TOKEN/x", "api.example.com", OK, "/v1/VAL1/x",
     "/v1/%5BCREDENTIAL%5D/x"},
    {"/v1/x?k=openshell%3Aresolve%3Aenv%3AAPI_TOKEN&a=b", "api.example.com", OK, "/v1/x?k=VAL1&a=b",
     "/v1/x?k=%5BCREDENTIAL%5D&a=b"},
    {"/v1/x?k=Bearer+openshell:resolve:env:API_TOKEN", "api.example.com", OK,
     "/v1/x?k=Bearer%20VAL1", "/v1/x?k=Bearer%20%5BCREDENTIAL%5D"},
    {"/p/pre-OPENSHELL-RESOLVE-ENV-API_TOKEN", "api.example.com", OK, "/p/VAL1",
     "/p/%5BCREDENTIAL%5D"},
    /* a value with reserved bytes is encoded in its segment */
    {"/s/openshell:resolve:env:ENC/t", "api.example.com", OK, "/s/a%2Fb%20c%26d/t",
     "/s/%5BCREDENTIAL%5D/t"},
    {"/q?x=openshell:resolve:env:ENC", "api.example.com", OK, "/q?x=a%2Fb%20c%26d",
     "/q?x=%5BCREDENTIAL%5D"},
    /* no marker: copied as is */
    {"/v1/plain?a=1&b", "api.example.com", NONE, "/v1/plain?a=1&b", "/v1/plain?a=1&b"},
    /* negative rows (the redacted form is still complete) */
    {"/v1/openshell:resolve:env:API_TOKEN", "github.com", MISM, NULL, "/v1/%5BCREDENTIAL%5D"},
    {"/v1/openshell:resolve:env:NOPE", "api.example.com", UNAV, NULL, "/v1/%5BCREDENTIAL%5D"},
    {"/v1/x?openshell:resolve:env:API_TOKEN=1", "api.example.com", UNAV, NULL,
     "/v1/x?[CREDENTIAL]=1"},
    /* a ';'-separated key is a key to Rack 2 and old Django and Go */
    {"/v1/x?a=1;openshell:resolve:env:API_TOKEN=1", "api.example.com", UNAV, NULL,
     "/v1/x?a=1;[CREDENTIAL]=1"},
    {"/v1/x?a=openshell:resolve:env:API_TOKEN;b=2", "api.example.com", OK, "/v1/x?a=VAL1;b=2",
     "/v1/x?a=%5BCREDENTIAL%5D;b=2"},
    {"/v1/openshell:resolve:env:API_TOKEN%zz", "api.example.com", UNAV, NULL, "/v1/[CREDENTIAL]"},
    {"/v1/OPENSHELL%3Aresolve%3Aenv%3AAPI_TOKEN", "api.example.com", UNAV, NULL,
     "/v1/[CREDENTIAL]"},
};

START_TEST(test_target)
{
    const struct target_case *tc = &target_cases[_i];
    struct proxy_creds *s = store();
    struct pv_dynbuf up;
    struct pv_dynbuf red;
    struct proxy_cred_result r;
    enum proxy_cred_status st;

    pv_dynbuf_init(&up, 8192);
    pv_dynbuf_init(&red, 8192);
    st = proxy_cred_target(s, tc->host, tc->t, strlen(tc->t), &up, &red, &r);
    ck_assert_msg(st == tc->st, "%s: status %d want %d (%s)", tc->t, st, tc->st, r.why);
    if (tc->up != NULL) {
        ck_assert_str_eq(up.buf, tc->up);
    }
    ck_assert_str_eq(red.buf, tc->red);
    ck_assert_ptr_null(strstr(red.buf, "VAL1"));
    pv_dynbuf_free(&up);
    pv_dynbuf_free(&red);
    proxy_creds_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Bodies
 * ------------------------------------------------------------------------- */

struct type_case {
    const char *ct;
    bool ok;
};

static const struct type_case type_cases[] = {
    {"application/json", true},
    {"Application/JSON; charset=utf-8", true},
    {"application/json;charset=\"UTF-8\"", true},
    {"application/x-www-form-urlencoded", true},
    {"text/plain", true},
    {"TEXT/HTML; charset=us-ascii", true},
    {"text/plain ", true},
    {"application/json; charset=iso-8859-1", false},
    {"text/plain; charset=utf-16", false},
    {"application/octet-stream", false},
    {"application/jsonx", false},
    {"multipart/form-data; boundary=x", false},
    {"text/", false},
    {"", false},
    /* one parameter parse (pv_ctype_parse): a charset inside another
     * parameter's quotes, or a second charset, does not pass as UTF-8 */
    {"application/json; foo=\"charset=utf-8\"; charset=utf-7", false},
    {"application/json; charset=utf-8; charset=utf-7", false},
    {"application/json; Charset=utf-8; CHARSET=utf-8", false},
    {"application/json; foo=\"a;b\"; charset=utf-8", true},
    {"application/json; charset=\"utf\\-8\"", true},
    {"application/json; charset", false},
    {"application/json; charset=\"utf-8", false},
    {"application/json charset=utf-8", false},
    {"application/json;; charset=utf-8", true},
};

START_TEST(test_body_type)
{
    const struct type_case *tc = &type_cases[_i];
    ck_assert_msg(proxy_cred_body_type(tc->ct, strlen(tc->ct)) == tc->ok, "%s", tc->ct);
}
END_TEST

START_TEST(test_body)
{
    struct proxy_creds *s = store();
    struct pv_dynbuf out;
    struct proxy_cred_result r;
    const char *json = "{\"k\":\"openshell:resolve:env:API_TOKEN\",\"u\":\"\xc3\xa9\"}";
    char *big = malloc(PROXY_CRED_BODY_MAX + 2);
    const char bad_utf8[] = "\xff openshell:resolve:env:API_TOKEN";
    const char bin[] = "\xff\xfe binary";

    ck_assert_ptr_nonnull(big);
    pv_dynbuf_init(&out, PROXY_CRED_BODY_MAX + PROXY_CRED_GROWTH);
    ck_assert_int_eq(proxy_cred_body(s, "api.example.com", json, strlen(json), &out, &r), OK);
    ck_assert_str_eq(out.buf, "{\"k\":\"VAL1\",\"u\":\"\xc3\xa9\"}");
    /* the length changed: the caller writes Content-Length from out.len */
    ck_assert_uint_eq(out.len, strlen(json) - strlen("openshell:resolve:env:API_TOKEN") + 4);
    pv_dynbuf_reset(&out);
    /* exactly the bound is read; one byte more is refused */
    memset(big, 'a', PROXY_CRED_BODY_MAX + 1);
    memcpy(big + PROXY_CRED_BODY_MAX - 31, "openshell:resolve:env:API_TOKEN", 31);
    ck_assert_int_eq(proxy_cred_body(s, "api.example.com", big, PROXY_CRED_BODY_MAX, &out, &r), OK);
    ck_assert_uint_eq(out.len, PROXY_CRED_BODY_MAX - 31 + 4);
    pv_dynbuf_reset(&out);
    ck_assert_int_eq(proxy_cred_body(s, "api.example.com", big, PROXY_CRED_BODY_MAX + 1, &out, &r),
                     BIG);
    pv_dynbuf_reset(&out);
    /* not UTF-8: passed unchanged, unless it holds a marker */
    ck_assert_int_eq(proxy_cred_body(s, "api.example.com", bin, sizeof(bin) - 1, &out, &r), NONE);
    ck_assert_uint_eq(out.len, sizeof(bin) - 1);
    pv_dynbuf_reset(&out);
    ck_assert_int_eq(
        proxy_cred_body(s, "api.example.com", bad_utf8, sizeof(bad_utf8) - 1, &out, &r), UNAV);
    pv_dynbuf_reset(&out);
    /* the host decides for bodies too */
    ck_assert_int_eq(proxy_cred_body(s, "github.com", json, strlen(json), &out, &r), MISM);
    free(big);
    pv_dynbuf_free(&out);
    proxy_creds_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------
 * The store's loader
 * ------------------------------------------------------------------------- */

struct load_case {
    const char *text;
    const char *want; /* NULL: loads; else a substring of the error */
};

static const struct load_case load_cases[] = {
    {"credentials:\n  - {name: a, env: K, value: SECRETX, target_hosts: [h.example]}\n", NULL},
    {"credentials:\n  - {name: a, env: K, value_file: v.secret}\n", NULL},
    {"credentials:\n  - {name: a, env: K}\n", "env without value or value_file"},
    {"credentials:\n  - {name: a, value: SECRETX}\n", "needs env"},
    {"credentials:\n  - {name: a, env: K, value: SECRETX, value_file: v.secret}\n",
     "both value and value_file"},
    {"credentials:\n  - {name: a, env: 'K-1', value: SECRETX}\n", "must match"},
    {"credentials:\n  - {name: a, env: K, value: SECRETX}\n  - {name: b, env: K, value: "
     "SECRETX}\n",
     "duplicate credential env 'K'"},
    {"credentials:\n  - {name: a, env: K, value: \"SECRETX\\r\\nX-Evil: 1\"}\n",
     "without CR, LF or NUL"},
    {"credentials:\n  - {name: a, env: K, value: ''}\n", "non-empty string"},
    {"credentials:\n  - {name: a, env: K, value: [SECRETX]}\n", "non-empty string"},
    {"credentials:\n  - {name: a, env: K, value_file: missing.secret}\n", "missing.secret"},
    {"credentials:\n  - {name: a, env: K, value_file: open.secret}\n", "mode 0600 or stricter"},
    {"credentials:\n  - {name: a, env: K, valu: SECRETX}\n", "valu"},
};

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    ck_assert_int_eq(fchmod(fd, mode), 0);
    close(fd);
}

START_TEST(test_load)
{
    const struct load_case *tc = &load_cases[_i];
    char dir[] = "/tmp/check_proxy_cred.XXXXXX";
    char path[256];
    char err[1024] = "";
    struct proxy_creds *s;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/v.secret", dir);
    write_file(path, "SECRETF\n", 0600);
    snprintf(path, sizeof(path), "%s/open.secret", dir);
    write_file(path, "SECRETF\n", 0644);
    snprintf(path, sizeof(path), "%s/store.yaml", dir);
    write_file(path, tc->text, 0600);
    s = proxy_creds_load(path, err, sizeof(err));
    if (tc->want == NULL) {
        ck_assert_msg(s != NULL, "%s", err);
        ck_assert_uint_eq(proxy_creds_count(s), 1);
    } else {
        ck_assert_ptr_null(s);
        ck_assert_msg(strstr(err, tc->want) != NULL, "want [%s] in [%s]", tc->want, err);
    }
    ck_assert_ptr_null(strstr(err, "SECRET"));
    proxy_creds_free(s);
    /* the store itself must be private too, and no symlink */
    if (tc->want == NULL) {
        char link[300];
        ck_assert_int_eq(chmod(path, 0640), 0);
        ck_assert_ptr_null(proxy_creds_load(path, err, sizeof(err)));
        ck_assert_ptr_nonnull(strstr(err, "mode 0600 or stricter (it is uid"));
        ck_assert_int_eq(chmod(path, 0400), 0);
        s = proxy_creds_load(path, err, sizeof(err));
        ck_assert_ptr_nonnull(s);
        proxy_creds_free(s);
        snprintf(link, sizeof(link), "%s/link.yaml", dir);
        ck_assert_int_eq(symlink(path, link), 0);
        ck_assert_ptr_null(proxy_creds_load(link, err, sizeof(err)));
        unlink(link);
    }
    unlink(path);
    snprintf(path, sizeof(path), "%s/v.secret", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/open.secret", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_value_file_newline)
{
    char dir[] = "/tmp/check_proxy_cred.XXXXXX";
    char path[256];
    char err[1024];
    struct proxy_creds *s;
    struct pv_dynbuf out;
    struct proxy_cred_result r;
    const char *text = "- {name: a, env: K, value_file: v.secret, target_hosts: [h.example]}\n";

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/v.secret", dir);
    write_file(path, "line-secret\r\n", 0600);
    snprintf(path, sizeof(path), "%s/s.yaml", dir);
    write_file(path, text, 0600);
    s = proxy_creds_load(path, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    pv_dynbuf_init(&out, 4096);
    ck_assert_int_eq(
        proxy_cred_rewrite(s, "h.example", "openshell:resolve:env:K", 23, false, &out, &r), OK);
    /* one trailing newline (CRLF too) belongs to the file, not the value */
    ck_assert_str_eq(out.buf, "line-secret");
    pv_dynbuf_free(&out);
    proxy_creds_free(s);
    unlink(path);
    snprintf(path, sizeof(path), "%s/v.secret", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* The prover's loader reads the same file: metadata only, no value kept,
 * and no diagnostic of a bad secret prints it. */
START_TEST(test_model_reads_store)
{
    struct model_diags *d = model_diags_new();
    struct model_credset *cs = model_credset_load("store.yaml", store_text, strlen(store_text), d);
    const char *bad = "- {name: a, env: K, value: [SECRETX], target_hosts: [h]}\n";

    ck_assert_ptr_nonnull(cs);
    ck_assert_uint_eq(model_credset_count(cs), 4);
    ck_assert_str_eq(model_cred_name(cs, 1), "gh");
    ck_assert_str_eq(model_cred_env(cs, 1), "GH");
    ck_assert_ptr_null(model_cred_env(cs, 3));
    ck_assert_str_eq(model_cred_scope(cs, 1, 0), "repo");
    ck_assert(model_cred_covers_host(cs, 0, "b.example.org", 13));
    model_credset_free(cs);
    ck_assert_ptr_null(model_credset_load("bad.yaml", bad, strlen(bad), d));
    for (size_t i = 0; i < model_diags_count(d); i++) {
        ck_assert_ptr_null(strstr(model_diags_line(d, i), "SECRETX"));
    }
    ck_assert_uint_ge(model_diags_count(d), 1);
    model_diags_free(d);
    ck_assert(model_cred_key_valid("A_1", 3));
    ck_assert(model_cred_key_valid("_x", 2));
    ck_assert(!model_cred_key_valid("1A", 2));
    ck_assert(!model_cred_key_valid("A-B", 3));
    ck_assert(!model_cred_key_valid("", 0));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("proxy_cred");
    TCase *t = tcase_create("cred");

    tcase_add_loop_test(t, test_header, 0, (int)PV_ARRAY_LEN(hdr_cases));
    tcase_add_test(t, test_redact_and_no_store);
    tcase_add_loop_test(t, test_target, 0, (int)PV_ARRAY_LEN(target_cases));
    tcase_add_loop_test(t, test_body_type, 0, (int)PV_ARRAY_LEN(type_cases));
    tcase_add_test(t, test_body);
    tcase_add_loop_test(t, test_load, 0, (int)PV_ARRAY_LEN(load_cases));
    tcase_add_test(t, test_value_file_newline);
    tcase_add_test(t, test_model_reads_store);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    int failed;

    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
