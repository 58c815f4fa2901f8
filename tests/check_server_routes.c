/* SPDX-License-Identifier: Apache-2.0 */
/* check_server_routes.c - the work routes answer what the CLI answers; metrics text
 *
 * Each row runs one request through server_route_run() in-process (the code
 * a worker runs) and the same inputs through `proviso prove|check --format
 * json` (the built CLI, found through PV_BUILDDIR). The two JSON objects must
 * be equal apart from elapsed_ms; for invalid input the status is 400 and the
 * error code and verdict match the CLI's. The metrics test checks counts and
 * the histogram's cumulative buckets in the rendered Prometheus text.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prover/prover.h"
#include "server/server.h"

static const char base_yaml[] = "version: 1\n"
                                "network_policies:\n"
                                "  docs:\n"
                                "    name: docs\n"
                                "    endpoints:\n"
                                "      - host: docs.python.org\n"
                                "        port: 443\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/curl\n";

static const char cand_yaml[] = "version: 1\n"
                                "network_policies:\n"
                                "  docs:\n"
                                "    name: docs\n"
                                "    endpoints:\n"
                                "      - host: docs.python.org\n"
                                "        port: 443\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/curl\n"
                                "  gh:\n"
                                "    name: gh\n"
                                "    endpoints:\n"
                                "      - host: \"*.github.com\"\n"
                                "        port: 443\n"
                                "        protocol: rest\n"
                                "        enforcement: enforce\n"
                                "        access: read-write\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/git\n";

static const char bad_yaml[] = "version: 1\n"
                               "network_policies:\n"
                               "  x:\n"
                               "    endpoints:\n"
                               "      - host: api.github.com\n"
                               "        port: 70000\n";

static const char proposal_json[] =
    "{\"operations\": [{\"addRule\": {\"ruleName\": \"gh\", \"rule\": {\"name\": \"gh\","
    " \"endpoints\": [{\"host\": \"api.github.com\", \"port\": 443}],"
    " \"binaries\": [{\"path\": \"/usr/bin/curl\"}]}}}]}";

static const char creds_yaml[] = "credentials:\n"
                                 "  - name: gh\n"
                                 "    type: github\n"
                                 "    target_hosts: [api.github.com]\n";

struct row {
    enum server_route_id route;
    const char *baseline, *candidate, *proposal, *policy, *boundary, *creds;
    unsigned status;
    const char *verdict;
};

static const struct row rows[] = {
    {SERVER_R_PROVE, base_yaml, cand_yaml, NULL, NULL, NULL, creds_yaml, 200, "findings"},
    {SERVER_R_PROVE, base_yaml, base_yaml, NULL, NULL, NULL, NULL, 200, "empty"},
    {SERVER_R_PROVE, NULL, cand_yaml, NULL, NULL, NULL, creds_yaml, 200, "findings"},
    {SERVER_R_PROVE, base_yaml, NULL, proposal_json, NULL, NULL, creds_yaml, 200, "findings"},
    {SERVER_R_PROVE, NULL, NULL, NULL, cand_yaml, NULL, creds_yaml, 200, NULL},
    {SERVER_R_CHECK, NULL, cand_yaml, NULL, NULL, base_yaml, NULL, 200, "exceeds"},
    {SERVER_R_CHECK, NULL, base_yaml, NULL, NULL, cand_yaml, NULL, 200, "within"},
    /* negative rows: invalid input, same code as the CLI */
    {SERVER_R_PROVE, base_yaml, bad_yaml, NULL, NULL, NULL, NULL, 400, "invalid"},
    {SERVER_R_PROVE, bad_yaml, base_yaml, NULL, NULL, NULL, NULL, 400, "invalid"},
    {SERVER_R_PROVE, base_yaml, NULL, "{\"operations\": 5}", NULL, NULL, NULL, 400, "invalid"},
    {SERVER_R_CHECK, NULL, base_yaml, NULL, NULL, bad_yaml, NULL, 400, "invalid"},
};

static char tmpdir[] = "/tmp/check-server-routes.XXXXXX";

static const char *put(const char *name, const char *text)
{
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    FILE *f;

    snprintf(p, 512, "%s/%s", tmpdir, name);
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static json_t *run_cli(const struct row *r, int *status)
{
    const char *bdir = getenv("PV_BUILDDIR");
    char cmd[4096];
    size_t n;
    FILE *p;
    json_t *out;
    json_error_t e;

    /* A long solver budget on both sides: a loaded machine (or valgrind) must
     * not turn one of the two answers into "unknown (timeout)". */
    n = (size_t)snprintf(cmd, sizeof(cmd), "'%s/proviso' %s --format json --timeout-ms 60000",
                         bdir != NULL ? bdir : ".", r->route == SERVER_R_CHECK ? "check" : "prove");
#define ARG(flag, field, file)                                                                  \
    if (r->field != NULL) {                                                                     \
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s '%s'", flag, put(file, r->field)); \
    }
    ARG("--baseline", baseline, "baseline.yaml")
    ARG("--candidate", candidate, "candidate.yaml")
    ARG("--proposal", proposal, "proposal.json")
    ARG("--policy", policy, "policy.yaml")
    ARG("--boundary", boundary, "boundary.yaml")
    ARG("--credentials", creds, "creds.yaml")
#undef ARG
    snprintf(cmd + n, sizeof(cmd) - n, " 2>/dev/null");
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    out = json_loadf(p, 0, &e);
    *status = pclose(p);
    ck_assert_msg(out != NULL, "CLI output is not JSON (%s): %s", e.text, cmd);
    return out;
}

static json_t *request_body(const struct row *r)
{
    json_t *b = json_object();

    ck_assert_ptr_nonnull(b);
#define FIELD(name, field)                                   \
    if (r->field != NULL) {                                  \
        json_object_set_new(b, name, json_string(r->field)); \
    }
    FIELD("baseline", baseline)
    FIELD("candidate", candidate)
    FIELD("policy", policy)
    FIELD("boundary", boundary)
    FIELD("credentials", creds)
#undef FIELD
    if (r->proposal != NULL) {
        json_object_set_new(b, "proposal", json_loads(r->proposal, 0, NULL));
    }
    json_object_set_new(b, "options", json_pack("{s:i}", "timeout_ms", 60000));
    return b;
}

/* Warnings are located in the document the way diagnostics are: the
 * service names the field ("candidate:13:15"), the CLI the file
 * (".../candidate.yaml:13:15"). Keep LINE:COL only, so the rest must match.
 * Only the CLI looks binaries up on this machine: drop binary-missing. */
static void unlocate_warnings(json_t *answer)
{
    json_t *list = json_object_get(answer, "warnings");
    size_t i;
    json_t *w;

    for (i = json_array_size(list); i > 0; i--) {
        const char *code = json_string_value(json_object_get(json_array_get(list, i - 1), "code"));
        if (code != NULL && strcmp(code, "binary-missing") == 0) {
            json_array_remove(list, i - 1);
        }
    }
    json_array_foreach(list, i, w)
    {
        const char *loc = json_string_value(json_object_get(w, "location"));
        const char *colon = loc != NULL ? strrchr(loc, ':') : NULL;
        const char *at = loc;

        if (colon != NULL) {
            for (at = colon; at > loc && at[-1] != ':'; at--) {
            }
        }
        if (at != NULL) {
            json_object_set_new(w, "location", json_string(at));
        }
    }
}

START_TEST(test_routes_match_cli)
{
    const struct row *r = &rows[_i];
    struct server_config cfg;
    struct server_ctx *ctx = NULL;
    struct server_worker *w;
    struct server_reply rep;
    json_t *body = request_body(r);
    char *text = json_dumps(body, JSON_COMPACT);
    json_t *cli;
    int cli_status;

    ck_assert_ptr_nonnull(text);
    server_config_defaults(&cfg);
    cfg.max_timeout_ms = 60000;
    ck_assert(pv_ok(server_ctx_new(&cfg, &ctx)));
    w = server_worker_new(ctx);
    ck_assert_ptr_nonnull(w);
    server_route_run(w, r->route, text, strlen(text), &rep);
    ck_assert_msg(rep.status == r->status, "row %d: status %u", _i, rep.status);
    ck_assert_ptr_nonnull(rep.body);
    cli = run_cli(r, &cli_status);
    if (r->status == 200) {
        json_object_del(rep.body, "elapsed_ms");
        json_object_del(cli, "elapsed_ms");
        unlocate_warnings(rep.body);
        unlocate_warnings(cli);
        if (!json_equal(rep.body, cli)) {
            char *a = json_dumps(rep.body, JSON_COMPACT);
            char *b = json_dumps(cli, JSON_COMPACT);
            ck_abort_msg("row %d differs:\nserver %s\ncli    %s", _i, a, b);
        }
        if (r->verdict != NULL) {
            ck_assert_str_eq(json_string_value(json_object_get(rep.body, "verdict")), r->verdict);
        }
    } else {
        ck_assert_str_eq(json_string_value(json_object_get(rep.body, "verdict")), "invalid");
        ck_assert_str_eq(json_string_value(json_object_get(rep.body, "verdict")),
                         json_string_value(json_object_get(cli, "verdict")));
        ck_assert_str_eq(json_string_value(json_object_get(rep.body, "error")),
                         json_string_value(json_object_get(cli, "error")));
        ck_assert_int_eq(rep.verdict, SERVER_V_INVALID);
    }
    json_decref(cli);
    json_decref(rep.body);
    json_decref(body);
    free(text);
    server_worker_free(w);
    server_ctx_free(ctx);
}
END_TEST

/* A worker without a prover session answers 500, never crashes. */
START_TEST(test_routes_no_worker)
{
    struct server_reply rep;

    server_route_run(NULL, SERVER_R_PROVE, "{}", 2, &rep);
    ck_assert_uint_eq(rep.status, 500);
    ck_assert_str_eq(json_string_value(json_object_get(rep.body, "error")), "internal");
    json_decref(rep.body);
}
END_TEST

START_TEST(test_metrics_render)
{
    size_t len = 0;
    char *text;

    server_metrics_request(SERVER_R_PROVE, 200, 300000);  /* 0.3 ms */
    server_metrics_request(SERVER_R_PROVE, 200, 4000000); /* 4 ms */
    server_metrics_request(SERVER_R_PROVE, 418, 1000);    /* other status */
    server_metrics_request(SERVER_R_HEALTHZ, 200, 100000);
    server_metrics_verdict(SERVER_V_FINDINGS);
    server_metrics_verdict(SERVER_V_NONE);
    server_metrics_solver_timeout();
    text = server_metrics_render(3, 2, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(strlen(text), len);
#define HAS(s) ck_assert_msg(strstr(text, s) != NULL, "missing: %s\n%s", s, text)
    HAS("proviso_prover_requests_total{route=\"/v1/prove\",status=\"200\"} 2\n");
    HAS("proviso_prover_requests_total{route=\"/v1/prove\",status=\"other\"} 1\n");
    HAS("proviso_prover_requests_total{route=\"/healthz\",status=\"200\"} 1\n");
    HAS("proviso_prover_request_duration_seconds_bucket{route=\"/v1/prove\",le=\"0.000250\"} 1\n");
    HAS("proviso_prover_request_duration_seconds_bucket{route=\"/v1/prove\",le=\"0.000500\"} 2\n");
    HAS("proviso_prover_request_duration_seconds_bucket{route=\"/v1/prove\",le=\"0.002500\"} 2\n");
    HAS("proviso_prover_request_duration_seconds_bucket{route=\"/v1/prove\",le=\"0.005000\"} 3\n");
    HAS("proviso_prover_request_duration_seconds_bucket{route=\"/v1/prove\",le=\"+Inf\"} 3\n");
    HAS("proviso_prover_request_duration_seconds_count{route=\"/v1/prove\"} 3\n");
    HAS("proviso_prover_request_duration_seconds_sum{route=\"/v1/prove\"} 0.004301000\n");
    HAS("proviso_prover_verdicts_total{verdict=\"findings\"} 1\n");
    HAS("proviso_prover_verdicts_total{verdict=\"empty\"} 0\n");
    HAS("proviso_prover_solver_timeouts_total 1\n");
    HAS("proviso_prover_inflight 3\n");
    HAS("proviso_prover_workers 2\n");
#undef HAS
    ck_assert(strstr(text, "verdict=\"none\"") == NULL);
    ck_assert(strstr(text, "route=\"/v1/check\",status=") == NULL);
    free(text);
}
END_TEST

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6);
}

int main(void)
{
    Suite *s = suite_create("server_routes");
    TCase *tc = tcase_create("routes");
    SRunner *sr;
    int failed;

    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_routes_match_cli, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_routes_no_worker);
    tcase_add_test(tc, test_metrics_render);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    prover_finalize();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
