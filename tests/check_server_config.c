/* SPDX-License-Identifier: Apache-2.0 */
/* check_server_config.c - proviso-prover configuration: defaults, YAML and JSON files
 *
 * Each row applies one document on top of the embedded defaults and checks
 * either the resulting settings or the exact FILE:LINE:COL error. A loader
 * that ignored unknown keys, accepted out-of-range numbers or located errors
 * at the wrong token fails a row.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

struct row {
    const char *text;
    const char *err; /* NULL: must load; else the error's prefix */
    unsigned port, workers, max_concurrent, timeout_ms, max_timeout_ms;
    size_t body_limit;
    const char *bind;
};

#define DEF SERVER_DEFAULT_PORT, 0, 64, 2000, 30000, 1048576, "127.0.0.1"

static const struct row rows[] = {
    {"", NULL, DEF},
    {"# only a comment\n", NULL, DEF},
    {"{}", NULL, DEF},
    {"port: 9000\n", NULL, 9000, 0, 64, 2000, 30000, 1048576, "127.0.0.1"},
    {"port: 0\nworkers: 3\nmax_concurrent: 5\n", NULL, 0, 3, 5, 2000, 30000, 1048576, "127.0.0.1"},
    {"{\"port\": 81, \"bind\": \"::1\", \"body_limit\": 2048, \"timeout_ms\": 10, "
     "\"max_timeout_ms\": 20}",
     NULL, 81, 0, 64, 10, 20, 2048, "::1"},
    {"bind: 0.0.0.0\ntimeout_ms: 30000\n", NULL, SERVER_DEFAULT_PORT, 0, 64, 30000, 30000, 1048576,
     "0.0.0.0"},
    {"port: \"8080\"\n", NULL, 8080, 0, 64, 2000, 30000, 1048576, "127.0.0.1"},
    /* negative rows: the error and its location */
    {"port: 70000\n", "c.yaml:1:7: port: must be an integer between 0 and 65535", DEF},
    {"port: -1\n", "c.yaml:1:7: port: must be an integer", DEF},
    {"port: 0x10\n", "c.yaml:1:7: port: must be an integer", DEF},
    {"port: 8080\nworkerz: 2\n", "c.yaml:2:1: workerz: unknown key", DEF},
    {"port: 1\nport: 2\n", "c.yaml:2:1: duplicate key 'port'", DEF},
    {"workers: [1, 2]\n", "c.yaml:1:10: workers: value must be a scalar", DEF},
    {"workers: {a: 1}\n", "c.yaml:1:10: workers: value must be a scalar", DEF},
    {"- port: 1\n", "c.yaml:1:1: configuration must be a mapping", DEF},
    {"8080\n", "c.yaml:1:1: configuration must be a mapping", DEF},
    {"port: [\n", "c.yaml:2:1: invalid YAML: did not find expected node content", DEF},
    {"port: 1\nbind: \"127.0.0.1\n", "c.yaml:3:1: invalid YAML: found unexpected end of stream",
     DEF},
    {"bind: localhost\n", "c.yaml:1:7: bind: must be an IPv4 or IPv6 address literal", DEF},
    {"body_limit: 10\n", "c.yaml:1:13: body_limit: must be an integer between 1024", DEF},
    {"max_concurrent: 0\n", "c.yaml:1:17: max_concurrent: must be an integer between 1", DEF},
    {"timeout_ms: 5000\nmax_timeout_ms: 100\n", "timeout_ms (5000) exceeds max_timeout_ms (100)",
     DEF},
    {"port: &x 1\nworkers: *x\n", "c.yaml:1:7: aliases and anchors are not supported", DEF},
    {"{\"port\": 1, \"port\": 1}", "c.yaml:1:13: duplicate key 'port'", DEF},
    /* the one reader's other refusals, located as the policy's are */
    {"port: 1\n---\nport: 2\n", "c.yaml:2:1: more than one YAML document", DEF},
    {"port: !custom 1\n", "c.yaml:1:7: YAML tags are not supported", DEF},
    {"[a]: 1\n", "c.yaml:1:1: mapping keys must be scalars", DEF},
    {"port:\n", "c.yaml:1:6: port: must be an integer between 0 and 65535", DEF},
    {"port: ~\n", "c.yaml:1:7: port: must be an integer between 0 and 65535", DEF},
    {"workers: [1]\nport: 70000\n", "c.yaml:1:10: workers: value must be a scalar", DEF},
};

START_TEST(test_config_table)
{
    const struct row *r = &rows[_i];
    struct server_config c;
    char err[512] = "";
    pv_result res;

    server_config_defaults(&c);
    res = server_config_load(&c, "c.yaml", r->text, strlen(r->text), err, sizeof(err));
    if (r->err != NULL) {
        ck_assert_msg(!pv_ok(res), "row %d loaded: %s", _i, r->text);
        ck_assert_msg(strncmp(err, r->err, strlen(r->err)) == 0, "row %d: '%s' is not '%s...'", _i,
                      err, r->err);
        return;
    }
    ck_assert_msg(pv_ok(res), "row %d: %s", _i, err);
    ck_assert_uint_eq(c.port, r->port);
    ck_assert_uint_eq(c.workers, r->workers);
    ck_assert_uint_eq(c.max_concurrent, r->max_concurrent);
    ck_assert_uint_eq(c.timeout_ms, r->timeout_ms);
    ck_assert_uint_eq(c.max_timeout_ms, r->max_timeout_ms);
    ck_assert_uint_eq(c.body_limit, r->body_limit);
    ck_assert_str_eq(c.bind, r->bind);
}
END_TEST

/* The embedded defaults are what the service runs with and pass the check. */
START_TEST(test_config_defaults)
{
    struct server_config c;
    char err[128];

    server_config_defaults(&c);
    ck_assert_uint_eq(c.port, SERVER_DEFAULT_PORT);
    ck_assert_str_eq(c.bind, "127.0.0.1");
    ck_assert_uint_eq(c.body_limit, 1024u * 1024u);
    ck_assert_uint_eq(c.timeout_ms, 2000);
    ck_assert_uint_eq(c.workers, 0);
    ck_assert(pv_ok(server_config_check(&c, err, sizeof(err))));
    c.timeout_ms = c.max_timeout_ms + 1;
    ck_assert(!pv_ok(server_config_check(&c, err, sizeof(err))));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server_config");
    TCase *tc = tcase_create("load");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_config_table, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_config_defaults);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
