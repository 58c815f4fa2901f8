/* SPDX-License-Identifier: Apache-2.0 */
/* bench_rpc.c - the cost of a JSON-RPC / MCP decision against a REST decision
 *
 * One policy: a REST endpoint (read-only under /repos/) and an enforced MCP
 * endpoint (the method profile on, tools narrowed to five rules, a deny
 * rule). Measured in the same run, in CPU time: a REST decision
 * (model_decide on GET /repos/o/r/issues), and MCP decisions as the proxy
 * makes them (model_rpc_read on the POST body, then model_decide_calls:
 * the request read once, each call decided)
 * for one tools/call, a refused tools/call, and a batch of 20 calls; each
 * printed as ns per request and as a ratio to REST, next to the issue's
 * goals (one call <= 1.5x REST, 20 calls <= 20x). Built by `make`, never
 * run by `make check` (no timing assertions):
 *
 *   tests/bench/bench_rpc [SECONDS]   (default 1 CPU-second per measurement)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"

static const char policy[] = "version: 1\n"
                             "network_policies:\n"
                             "  github:\n"
                             "    endpoints:\n"
                             "      - host: api.github.com\n"
                             "        port: 443\n"
                             "        path: /repos/**\n"
                             "        protocol: rest\n"
                             "        enforcement: enforce\n"
                             "        access: read-only\n"
                             "      - host: api.github.com\n"
                             "        port: 443\n"
                             "        path: /mcp\n"
                             "        protocol: mcp\n"
                             "        enforcement: enforce\n"
                             "        mcp: {allow_all_known_mcp_methods: true}\n"
                             "        rules:\n"
                             "          - allow: {tool: create_issue}\n"
                             "          - allow: {tool: 'search_*'}\n"
                             "          - allow: {tool: get_file_contents}\n"
                             "          - allow: {tool: list_issues}\n"
                             "          - allow: {tool: 'get_*'}\n"
                             "        deny_rules:\n"
                             "          - {tool: 'delete_*'}\n"
                             "    binaries:\n"
                             "      - path: /usr/bin/node\n";

static const char one_call[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                               "{\"name\":\"create_issue\",\"arguments\":{\"owner\":\"o\",\"repo\":"
                               "\"r\",\"title\":\"t\",\"body\":\"b\"}}}";
static const char refused_call[] = "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                                   "\"params\":{\"name\":\"delete_repository\",\"arguments\":{}}}";

static const char *const bins[] = {"/usr/bin/node"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct model_request base_req(const char *method, const char *target)
{
    struct model_request r;
    memset(&r, 0, sizeof(r));
    r.binaries = bins;
    r.nbinaries = 1;
    r.host = "api.github.com";
    r.host_len = strlen(r.host);
    r.port = 443;
    r.method = method;
    r.target = target;
    r.target_len = strlen(target);
    return r;
}

static double bench_rest(const struct model_policy *p, double secs, bool *allow)
{
    struct model_request r = base_req("GET", "/repos/o/r/issues?state=open");
    struct model_decision d;
    size_t n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 1000; i++) {
            model_decide(p, &r, &d);
        }
        n += 1000;
        t = now() - t0;
    } while (t < secs);
    *allow = d.allow;
    return t * 1e9 / (double)n;
}

static void each_call(void *arg, size_t i, const struct model_decision *d)
{
    bool *allow = arg;

    (void)i;
    *allow = *allow && d->allow;
}

/* ns per MCP request: read the body, decide every call (the proxy decides
 * them all, for the per-call lines); '*allow' the last answer, '*ncalls'. */
static double bench_mcp(const struct model_policy *p, const char *body, double secs, bool *allow,
                        size_t *ncalls)
{
    struct model_request r = base_req("POST", "/mcp");
    size_t len = strlen(body);
    size_t n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 100; i++) {
            struct model_rpc_calls calls;
            char err[256];
            if (!pv_ok(model_rpc_read_body(body, len, true, true, &calls, err, sizeof(err)))) {
                fprintf(stderr, "bench_rpc: body refused: %s\n", err);
                exit(1);
            }
            *allow = true;
            model_decide_calls(p, &r, calls.calls, calls.ncalls, each_call, allow);
            *ncalls = calls.ncalls;
            model_rpc_calls_clear(&calls);
        }
        n += 100;
        t = now() - t0;
    } while (t < secs);
    return t * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    struct model_diags *diags = model_diags_new();
    struct model_policy *p;
    char batch[8192];
    size_t bl = 0;
    bool allow;
    size_t ncalls = 0;
    double rest;
    static const char *const tools[] = {"create_issue", "search_code", "get_file_contents",
                                        "list_issues", "get_me"};

    if (secs <= 0) {
        secs = 1.0;
    }
    p = model_policy_load("bench.yaml", policy, strlen(policy), MODEL_FMT_YAML, diags);
    if (p == NULL) {
        for (size_t i = 0; i < model_diags_count(diags) && i < 5; i++) {
            fprintf(stderr, "%s\n", model_diags_line(diags, i));
        }
        return 1;
    }
    batch[bl++] = '[';
    for (int i = 0; i < 20; i++) {
        bl += (size_t)snprintf(batch + bl, sizeof(batch) - bl,
                               "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"%s\",\"arguments\":{\"q\":\"x\"}}}",
                               i > 0 ? "," : "", i, tools[i % 5]);
    }
    batch[bl++] = ']';
    batch[bl] = '\0';

    rest = bench_rest(p, secs, &allow);
    printf("%-40s %9.0f ns  1.00x  (baseline, %s)\n", "REST decision", rest,
           allow ? "allowed" : "denied");
    {
        static const struct {
            const char *name;
            const char *body;
            double goal;
        } cases[] = {
            {"MCP tools/call (allowed)", one_call, 1.5},
            {"MCP tools/call (deny rule)", refused_call, 1.5},
            {"MCP batch of 20 tools/call", NULL, 20.0},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            const char *body = cases[i].body != NULL ? cases[i].body : batch;
            double ns = bench_mcp(p, body, secs, &allow, &ncalls);
            printf("%-40s %9.0f ns %5.2fx  (%zu call%s, %s; goal <= %.1fx)\n", cases[i].name, ns,
                   ns / rest, ncalls, ncalls == 1 ? "" : "s", allow ? "allowed" : "denied",
                   cases[i].goal);
        }
    }
    model_policy_free(p);
    model_diags_free(diags);
    return 0;
}
