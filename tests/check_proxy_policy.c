/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_policy.c - unit tests of proxy_policy.c (decisions, bodies)
 *
 * The decision wrappers must pass requests to model_decide() unchanged and
 * add only the proxy's own rules: identity failures and quarantine deny
 * first, and --test-allow-loopback admits exactly the loopback addresses an
 * endpoint names literally. The deny bodies are compared byte for byte with
 * the reference's wire format.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

static char policy_path[64];
static struct proxy_policy *pol;

static const char policy_text[] = "version: 1\n"
                                  "network_policies:\n"
                                  "  lit:\n"
                                  "    endpoints:\n"
                                  "      - host: 127.0.0.1\n"
                                  "        ports: [8080, 6443]\n"
                                  "      - host: loop.test\n"
                                  "        port: 8080\n"
                                  "      - host: 127.0.0.1\n"
                                  "        port: 9000\n"
                                  "        protocol: rest\n"
                                  "        rules:\n"
                                  "          - allow: {method: GET, path: /x}\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/curl\n"
                                  "  hostless:\n"
                                  "    endpoints:\n"
                                  "      - ports: [7000]\n"
                                  "        allowed_ips: [10.0.0.0/8]\n"
                                  "      - ports: [8181]\n"
                                  "        allowed_ips: [93.184.216.0/24]\n"
                                  "      - host: 127.0.0.1\n"
                                  "        port: 8181\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        rules:\n"
                                  "          - allow: {method: GET, path: /a/**}\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/curl\n"
                                  "  api:\n"
                                  "    endpoints:\n"
                                  "      - host: api.example.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        access: read-only\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/curl\n";

static void setup(void)
{
    char err[512];
    int fd;

    snprintf(policy_path, sizeof(policy_path), "/tmp/check_proxy_policy.XXXXXX");
    fd = mkstemp(policy_path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, policy_text, sizeof(policy_text) - 1),
                     (ssize_t)(sizeof(policy_text) - 1));
    close(fd);
    pol = proxy_policy_load(policy_path, 7, err, sizeof(err));
    ck_assert_msg(pol != NULL, "%s", err);
    ck_assert_uint_eq(proxy_policy_generation(pol), 7);
}

static void teardown(void)
{
    proxy_policy_unref(pol);
    pol = NULL;
    unlink(policy_path);
}

static struct proxy_identity *ident(const char *exe)
{
    struct proxy_identity *id = calloc(1, sizeof(*id));

    ck_assert_ptr_nonnull(id);
    id->refs = 1;
    id->pid = 42;
    id->known = exe != NULL;
    if (exe != NULL) {
        id->path[0] = strdup(exe);
        id->path[1] = strdup("/usr/bin/bash");
        id->n = 2;
    }
    return id;
}

static struct model_ip ip4(unsigned a, unsigned b, unsigned c, unsigned d)
{
    struct model_ip ip;

    memset(&ip, 0, sizeof(ip));
    ip.b[10] = 0xff;
    ip.b[11] = 0xff;
    ip.b[12] = (uint8_t)a;
    ip.b[13] = (uint8_t)b;
    ip.b[14] = (uint8_t)c;
    ip.b[15] = (uint8_t)d;
    return ip;
}

START_TEST(test_load_error)
{
    char path[] = "/tmp/check_proxy_bad.XXXXXX";
    char err[512];
    int fd = mkstemp(path);
    static const char bad[] = "version: 1\nnetwork_policies:\n  r:\n    endpoints:\n"
                              "      - host: \"*\"\n        port: 80\n";

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bad, sizeof(bad) - 1), (ssize_t)(sizeof(bad) - 1));
    close(fd);
    ck_assert_ptr_null(proxy_policy_load(path, 1, err, sizeof(err)));
    ck_assert_msg(strstr(err, path) != NULL, "error names the file: %s", err);
    ck_assert_ptr_null(proxy_policy_load("/nonexistent/policy.yaml", 1, err, sizeof(err)));
    ck_assert_uint_gt(strlen(err), 0);
    unlink(path);
}
END_TEST

struct conn_case {
    const char *exe; /* NULL: unknown identity */
    const char *host;
    uint16_t port;
    bool grant;
    enum model_reason reason;
    enum model_route route;
    const char *detail_part;
};

static const struct conn_case conn_cases[] = {
    {"/usr/bin/curl", "api.example.com", 443, true, MODEL_REASON_ALLOWED, MODEL_ROUTE_INSPECTED,
     ""},
    {"/usr/bin/curl", "API.EXAMPLE.COM.", 443, true, MODEL_REASON_ALLOWED, MODEL_ROUTE_INSPECTED,
     ""},
    {"/usr/bin/wget", "api.example.com", 443, false, MODEL_REASON_BINARY, MODEL_ROUTE_NONE,
     "binary '/usr/bin/wget' not allowed in policy 'api'"},
    {"/usr/bin/curl", "api.example.com", 80, false, MODEL_REASON_NO_ENDPOINT, MODEL_ROUTE_NONE,
     "endpoint api.example.com:80 is not allowed by any policy"},
    {NULL, "api.example.com", 443, false, MODEL_REASON_BINARY, MODEL_ROUTE_NONE, "not allowed"},
    {"/usr/bin/curl", "bad host", 443, false, MODEL_REASON_BAD_HOST, MODEL_ROUTE_NONE,
     "invalid host"},
    /* an IP host is its own destination: granted, then blocked */
    {"/usr/bin/curl", "127.0.0.1", 8080, true, MODEL_REASON_DEST_BLOCKED, MODEL_ROUTE_OPAQUE,
     "always-blocked"},
};

START_TEST(test_connect)
{
    const struct conn_case *tc = &conn_cases[_i];
    struct proxy_identity *id = ident(tc->exe);
    struct proxy_verdict v;

    proxy_decide_connect(pol, id, tc->host, strlen(tc->host), tc->port, NULL, &v);
    ck_assert_msg(v.grant == tc->grant, "row %d grant", _i);
    ck_assert_msg(v.reason == tc->reason, "row %d reason %s", _i, model_reason_name(v.reason));
    ck_assert_int_eq(v.route, tc->route);
    ck_assert_msg(strstr(v.detail, tc->detail_part) != NULL, "row %d detail '%s'", _i, v.detail);
    proxy_identity_unref(id);
}
END_TEST

START_TEST(test_predeny)
{
    struct proxy_identity *id = ident("/usr/bin/curl");
    struct proxy_policy *q = proxy_policy_quarantine(9, "policy validation failed; x");
    struct proxy_verdict v;

    snprintf(id->deny, sizeof(id->deny), "binary integrity check failed: changed");
    proxy_decide_connect(pol, id, "api.example.com", 15, 443, NULL, &v);
    ck_assert(!v.allow && !v.grant);
    ck_assert_str_eq(v.detail, "binary integrity check failed: changed");
    id->deny[0] = '\0';
    proxy_decide_request(q, id, "api.example.com", 15, 443, "GET", "/", 1, NULL, &v);
    ck_assert(!v.allow && !v.grant);
    ck_assert_str_eq(v.detail, "policy validation failed; x");
    ck_assert_str_eq(v.policy, "-");
    ck_assert_uint_eq(proxy_policy_generation(q), 9);
    proxy_policy_unref(q);
    proxy_identity_unref(id);
}
END_TEST

START_TEST(test_request)
{
    struct proxy_identity *id = ident("/usr/bin/curl");
    struct proxy_verdict v;

    proxy_decide_request(pol, id, "api.example.com", 15, 443, "GET", "/repos?x=1", 10, NULL, &v);
    ck_assert(v.allow);
    ck_assert_str_eq(v.policy, "api");
    ck_assert_str_eq(v.binary, "/usr/bin/curl");
    proxy_decide_request(pol, id, "api.example.com", 15, 443, "DELETE", "/repos", 6, NULL, &v);
    ck_assert(!v.allow && !v.grant);
    ck_assert_int_eq(v.reason, MODEL_REASON_L7_NOT_PERMITTED);
    ck_assert_str_eq(v.detail, "DELETE /repos not permitted by policy");
    proxy_decide_request(pol, id, "api.example.com", 15, 443, "GET", "/../x", 5, NULL, &v);
    ck_assert(!v.allow);
    ck_assert_int_eq(v.reason, MODEL_REASON_BAD_TARGET);
    proxy_identity_unref(id);
}
END_TEST

struct dest_case {
    const char *host;
    uint16_t port;
    struct model_ip ip;
    bool loopback_on;
    const char *method; /* NULL: connection */
    bool allow;
    bool exception;
    bool audit;
};

static struct dest_case dest_cases[24];
static size_t ndest;

static void dest_cases_init(void)
{
    struct model_ip lo = ip4(127, 0, 0, 1);
    struct model_ip lo2 = ip4(127, 0, 0, 2);
    struct model_ip ten = ip4(10, 1, 2, 3);
    struct model_ip pub = ip4(93, 184, 216, 34);
    struct model_ip priv = ip4(192, 168, 1, 1);
    const struct dest_case rows[] = {
        {"127.0.0.1", 8080, lo, true, NULL, true, true, false},
        {"127.0.0.1", 8080, lo, false, NULL, false, false, false},
        {"2130706433", 8080, lo, true, NULL, true, true, false},
        {"0x7f.0.0.1", 8080, lo, true, NULL, true, true, false},
        {"loop.test", 8080, lo, true, NULL, false, false, false},
        {"127.0.0.1", 8080, lo2, true, NULL, false, false, false},
        {"127.0.0.2", 7000, lo2, true, NULL, false, false, false},
        {"127.0.0.1", 6443, lo, true, NULL, false, false, false},
        {"127.0.0.1", 9000, lo, true, "DELETE", true, true, true},
        {"127.0.0.1", 9000, lo, true, "GET", true, true, false},
        {"x.example", 7000, ten, true, NULL, true, false, false},
        {"x.example", 7000, priv, true, NULL, false, false, false},
        {"api.example.com", 443, pub, true, "GET", true, false, false},
        {"api.example.com", 443, priv, true, "GET", false, false, false},
        /* the switch admits loopback for a unit naming it, never through
         * another unit's allowed_ips (a public stand-in address once did) */
        {"127.0.0.1", 8181, lo, true, NULL, true, true, false},
        {"127.0.0.1", 8181, lo, true, "GET", false, false, false},
        {"127.0.0.1", 8181, pub, true, "GET", true, false, false},
    };

    ndest = PV_ARRAY_LEN(rows);
    memcpy(dest_cases, rows, sizeof(rows));
}

START_TEST(test_dest)
{
    const struct dest_case *tc;
    struct proxy_identity *id = ident("/usr/bin/curl");
    struct proxy_decide_opts o = {0};
    struct proxy_verdict v;

    dest_cases_init();
    ck_assert_uint_lt((size_t)_i, ndest);
    tc = &dest_cases[_i];
    o.test_allow_loopback = tc->loopback_on;
    proxy_decide_dest(pol, id, tc->host, strlen(tc->host), tc->port, tc->method,
                      tc->method != NULL ? "/x" : NULL, tc->method != NULL ? 2 : 0, &tc->ip, &o,
                      &v);
    ck_assert_msg(v.allow == tc->allow, "row %d allow (%s: %s)", _i, model_reason_name(v.reason),
                  v.detail);
    ck_assert_msg(v.loopback_exception == tc->exception, "row %d exception", _i);
    ck_assert_msg(v.audit == tc->audit, "row %d audit", _i);
    proxy_identity_unref(id);
}
END_TEST

START_TEST(test_ssrf_kind)
{
    ck_assert_str_eq(proxy_ssrf_kind(MODEL_REASON_DEST_INTERNAL), "internal address");
    ck_assert_str_eq(proxy_ssrf_kind(MODEL_REASON_DEST_BLOCKED), "internal address");
    ck_assert_str_eq(proxy_ssrf_kind(MODEL_REASON_DEST_ALLOWED_IPS), "allowed_ips check failed");
    ck_assert_str_eq(proxy_ssrf_kind(MODEL_REASON_DEST_PORT), "allowed_ips check failed");
    ck_assert_str_eq(proxy_ssrf_kind(MODEL_REASON_BINARY), "destination check failed");
}
END_TEST

START_TEST(test_reply_json)
{
    size_t len = 0;
    char *r = proxy_reply_json(403, "policy_denied", "CONNECT h:443 not permitted by policy",
                               "endpoint h:443 is not allowed by any policy", NULL, &len);
    static const char want[] =
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: 129\r\n"
        "Connection: close\r\n\r\n"
        "{\"detail\":\"CONNECT h:443 not permitted by policy\",\"error\":\"policy_denied\","
        "\"reason\":\"endpoint h:443 is not allowed by any policy\"}";

    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r, want);
    ck_assert_uint_eq(len, strlen(want));
    free(r);
    r = proxy_reply_json(403, "ssrf_denied", "CONNECT h:1 blocked: internal address", NULL, NULL,
                         &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "\r\n\r\n{\"detail\":\"CONNECT h:1 blocked: internal address\","
                        "\"error\":\"ssrf_denied\"}") != NULL);
    free(r);
    r = proxy_reply_json(502, "upstream_unreachable", "x\"y", "", NULL, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strncmp(r, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
    ck_assert(strstr(r, "{\"detail\":\"x\\\"y\",\"error\":\"upstream_unreachable\"}") != NULL);
    free(r);
    ck_assert_str_eq(proxy_reply_bare(431), "HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n");
    ck_assert_str_eq(proxy_reply_bare(400), "HTTP/1.1 400 Bad Request\r\n\r\n");
}
END_TEST

/* The fixed-buffer builders of proxy_reply.c: exact bytes, and 0 (send
 * nothing) rather than a truncated head when the buffer is too small. */
START_TEST(test_reply_fixed)
{
    char buf[512];
    char small[40];
    size_t n;

    n = proxy_reply_text(400, "use http", buf, sizeof(buf));
    ck_assert_str_eq(buf, "HTTP/1.1 400 Bad Request\r\nContent-Length: 9\r\n"
                          "Connection: close\r\n\r\nuse http\n");
    ck_assert_uint_eq(n, strlen(buf));
    n = proxy_reply_message(500, "credential_unavailable", "m", buf, sizeof(buf));
    ck_assert_str_eq(buf, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                          "Content-Length: 48\r\nConnection: close\r\n\r\n"
                          "{\"error\":\"credential_unavailable\",\"message\":\"m\"}");
    ck_assert_uint_eq(n, strlen(buf));
    n = proxy_reply_authority(buf, sizeof(buf));
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert(strncmp(buf, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
    ck_assert(strstr(buf, "\r\n\r\n{\"error\":\"request_authority_mismatch\",") != NULL);
    n = proxy_reply_json_head(412, 7, buf, sizeof(buf));
    ck_assert_str_eq(buf, "HTTP/1.1 412 Precondition Failed\r\nContent-Type: application/json\r\n"
                          "Content-Length: 7\r\nConnection: close\r\n\r\n");
    ck_assert_uint_eq(n, strlen(buf));
    /* negative: nothing fits, nothing is sent */
    ck_assert_uint_eq(proxy_reply_text(400, "use http", small, sizeof(small)), 0);
    ck_assert_uint_eq(proxy_reply_message(403, "e", "m", small, sizeof(small)), 0);
    ck_assert_uint_eq(proxy_reply_authority(small, sizeof(small)), 0);
    ck_assert_uint_eq(proxy_reply_json_head(200, 1, small, 10), 0);
    /* an unknown status still gets a phrase */
    ck_assert_str_eq(proxy_reply_status_text(299), "Error");
    ck_assert_str_eq(proxy_reply_status_text(429), "Too Many Requests");
}
END_TEST

START_TEST(test_reply_l7)
{
    struct proxy_l7_deny d = {"policy_denied",
                              "api\r\nX-Evil: 1",
                              "DELETE",
                              "/repos/x",
                              "DELETE /repos/x not permitted by policy",
                              "api.example.com",
                              443,
                              "/usr/bin/curl",
                              NULL /* skill: proposals off */,
                              NULL /* not a GraphQL denial */,
                              false};
    size_t len = 0;
    char *r = proxy_reply_l7(&d, &len);
    const char *body;

    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(len, strlen(r));
    ck_assert(strncmp(r, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
    /* the policy name cannot inject header lines */
    ck_assert(strstr(r, "X-OpenShell-Policy: api??X-Evil: 1\r\n") != NULL);
    ck_assert(strstr(r, "\r\nX-Evil") == NULL);
    body = strstr(r, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(
        body + 4,
        "{\"error\":\"policy_denied\",\"policy\":\"api\\r\\nX-Evil: 1\",\"rule\":\"DELETE "
        "/repos/x\","
        "\"detail\":\"DELETE /repos/x not permitted by policy\",\"layer\":\"l7\","
        "\"protocol\":\"rest\",\"method\":\"DELETE\",\"path\":\"/repos/x\",\"host\":"
        "\"api.example.com\",\"port\":443,\"binary\":\"/usr/bin/curl\",\"rule_missing\":"
        "{\"type\":\"rest_allow\",\"layer\":\"l7\",\"method\":\"DELETE\",\"path\":\"/repos/x\","
        "\"host\":\"api.example.com\",\"port\":443,\"binary\":\"/usr/bin/curl\"},"
        "\"next_steps\":[]}");
    free(r);
    /* unknown binary: no binary keys */
    d.binary = "-";
    d.policy = "-";
    r = proxy_reply_l7(&d, &len);
    ck_assert_ptr_nonnull(r);
    ck_assert(strstr(r, "\"binary\"") == NULL);
    ck_assert(strstr(r, "X-OpenShell-Policy: -\r\n") != NULL);
    free(r);
}
END_TEST

START_TEST(test_refcount)
{
    struct proxy_policy *p2 = proxy_policy_ref(pol);

    ck_assert_ptr_eq(p2, pol);
    proxy_policy_unref(p2);
    ck_assert_ptr_nonnull(proxy_policy_model(pol));
    proxy_policy_unref(NULL);
    ck_assert_ptr_null(proxy_policy_ref(NULL));
}
END_TEST

static Suite *policy_suite(void)
{
    Suite *s = suite_create("proxy_policy");
    TCase *tc = tcase_create("policy");

    dest_cases_init();
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_load_error);
    tcase_add_loop_test(tc, test_connect, 0, (int)PV_ARRAY_LEN(conn_cases));
    tcase_add_test(tc, test_predeny);
    tcase_add_test(tc, test_request);
    tcase_add_loop_test(tc, test_dest, 0, (int)ndest);
    tcase_add_test(tc, test_ssrf_kind);
    tcase_add_test(tc, test_reply_json);
    tcase_add_test(tc, test_reply_l7);
    tcase_add_test(tc, test_reply_fixed);
    tcase_add_test(tc, test_refcount);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(policy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
