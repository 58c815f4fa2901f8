/* SPDX-License-Identifier: Apache-2.0 */
/* bench_graphql.c - the cost of a GraphQL decision against a REST decision
 *
 * One GitHub-like policy: a REST endpoint (read-only under /repos/) and an
 * enforced GraphQL endpoint (queries on viewer, repository, search; one
 * mutation). Measured in the same run, in CPU time: a REST decision
 * (model_decide on GET /repos/o/r/issues), and GraphQL decisions as the
 * proxy makes them (model_gql_http_read on the POST body, then model_decide
 * per operation) for a small gh-style query, a gh-sized query with
 * fragments and variables (about 1.5 KiB), a refused mutation and a batch of
 * four; each printed as ns per request and as a ratio to REST. Built by
 * `make`, never run by `make check` (no timing assertions):
 *
 *   tests/bench/bench_graphql [SECONDS]   (default 1 CPU-second per measurement)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"

static const char policy[] =
    "version: 1\n"
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
    "        path: /graphql\n"
    "        protocol: graphql\n"
    "        enforcement: enforce\n"
    "        rules:\n"
    "          - allow: {operation_type: query, fields: [viewer, repository, search, node]}\n"
    "          - allow: {operation_type: mutation, operation_name: 'AddComment*',"
    " fields: [addComment]}\n"
    "        deny_rules:\n"
    "          - {operation_type: mutation, fields: [deleteRepository]}\n"
    "    binaries:\n"
    "      - path: /usr/bin/gh\n";

static const char small_body[] = "{\"query\":\"query { viewer { login } }\"}";

static const char big_body[] =
    "{\"query\":\"query RepositoryView($owner: String!, $name: String!, $first: Int = 30) "
    "{\\n  repository(owner: $owner, name: $name) {\\n    ...RepoFields\\n    issues(first: "
    "$first, states: [OPEN], orderBy: {field: UPDATED_AT, direction: DESC}) {\\n      totalCount\\n"
    "      nodes { ...IssueFields }\\n      pageInfo { hasNextPage endCursor }\\n    }\\n"
    "    pullRequests(first: $first, states: OPEN) { nodes { number title author { login } "
    "labels(first: 10) { nodes { name color } } } }\\n  }\\n  viewer { login "
    "... on User { name } }\\n}\\nfragment RepoFields on Repository {\\n  id name "
    "nameWithOwner description url isPrivate isArchived stargazerCount forkCount\\n  "
    "defaultBranchRef { name target { ... on Commit { oid committedDate "
    "message } } }\\n  owner { login ... on Organization { name } }\\n  primaryLanguage { name }"
    "\\n  repositoryTopics(first: 20) { nodes { topic { name } } }\\n}\\nfragment IssueFields on "
    "Issue {\\n  id number title state createdAt updatedAt url\\n  author { login }\\n  "
    "assignees(first: 5) { nodes { login } }\\n  labels(first: 10) { nodes { name color "
    "description } }\\n  comments { totalCount }\\n  # a comment, and a block string below\\n  "
    "body @include(if: true)\\n}\\n\",\"variables\":{\"owner\":\"o\",\"name\":\"r\"},"
    "\"operationName\":\"RepositoryView\"}";

static const char mutation_body[] =
    "{\"query\":\"mutation { viewer: deleteRepository(input: {repositoryId: \\\"R_1\\\"}) "
    "{ clientMutationId } }\"}";

static const char batch_body[] = "[{\"query\":\"{ viewer { login } }\"},"
                                 "{\"query\":\"{ repository(owner: \\\"o\\\", name: \\\"r\\\") "
                                 "{ id } }\"},"
                                 "{\"query\":\"query S { search(query: \\\"x\\\", type: "
                                 "REPOSITORY, first: 5) { repositoryCount } }\"},"
                                 "{\"query\":\"{ node(id: \\\"X\\\") { id } }\"}]";

static const char *const bins[] = {"/usr/bin/gh"};

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

/* ns per REST decision; '*allow' the last answer */
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

/* ns per GraphQL request: read the body, decide every operation (the first
 * refusal ends it, as in the proxy); '*allow' the last answer, '*nops'. */
static double bench_gql(const struct model_policy *p, const char *body, double secs, bool *allow,
                        size_t *nops)
{
    struct model_request r = base_req("POST", "/graphql");
    struct model_decision d;
    struct model_gql_http h = {"POST", "/graphql", 8, "application/json", body, strlen(body), 0};
    size_t n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 100; i++) {
            struct model_gql_ops ops;
            char err[256];
            if (!pv_ok(model_gql_http_read(&h, &ops, err, sizeof(err)))) {
                fprintf(stderr, "bench_graphql: body refused: %s\n", err);
                exit(1);
            }
            *allow = true;
            for (size_t k = 0; k < ops.nops; k++) {
                r.gql = &ops.ops[k];
                model_decide(p, &r, &d);
                if (!d.allow) {
                    *allow = false;
                    break;
                }
            }
            *nops = ops.nops;
            model_gql_ops_clear(&ops);
        }
        n += 100;
        t = now() - t0;
    } while (t < secs);
    return t * 1e9 / (double)n;
}

/* ns to read the body alone */
static double bench_read(const char *body, double secs)
{
    struct model_gql_http h = {"POST", "/graphql", 8, "application/json", body, strlen(body), 0};
    size_t n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 100; i++) {
            struct model_gql_ops ops;
            char err[256];
            if (pv_ok(model_gql_http_read(&h, &ops, err, sizeof(err)))) {
                model_gql_ops_clear(&ops);
            }
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
    static const struct {
        const char *name;
        const char *body;
    } cases[] = {
        {"small query (gh api graphql viewer)", small_body},
        {"gh-sized query, fragments, variables", big_body},
        {"aliased mutation (refused)", mutation_body},
        {"batch of four queries", batch_body},
    };

    if (secs <= 0) {
        secs = 1.0;
    }
    p = model_policy_load("bench.yaml", policy, strlen(policy), MODEL_FMT_YAML, diags);
    if (p == NULL) {
        for (size_t i = 0; i < model_diags_count(diags) && i < 5; i++) {
            fprintf(stderr, "%s\n", model_diags_line(diags, i));
        }
        model_diags_free(diags);
        return 1;
    }
    bool allow = false;
    double rest = bench_rest(p, secs, &allow);
    printf("REST decision (GET /repos/o/r/issues)        %8.0f ns  (%s)  1.0x\n", rest,
           allow ? "allowed" : "denied");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t nops = 0;
        double g = bench_gql(p, cases[i].body, secs, &allow, &nops);
        double rd = bench_read(cases[i].body, secs / 2);
        printf("GraphQL %-37s %8.0f ns  (%s, %zu op%s, %zu bytes; reading %.0f ns)  %.1fx\n",
               cases[i].name, g, allow ? "allowed" : "denied", nops, nops == 1 ? "" : "s",
               strlen(cases[i].body), rd, g / rest);
    }
    model_policy_free(p);
    model_diags_free(diags);
    return 0;
}
