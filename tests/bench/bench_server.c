/* SPDX-License-Identifier: Apache-2.0 */
/* bench_server.c - in-process baseline for bench_server.sh
 *
 *   ./tests/bench/bench_server ROUTE BODY-FILE [ITERATIONS]
 *
 * Runs exactly what a proviso-prover worker runs for one request (decode the
 * body, load the policies, merge, prove, build the JSON answer and serialise
 * it) in a loop on one thread, without HTTP, and prints p50/p99/mean latency
 * and the single-thread rate. bench_server.sh compares the HTTP figures with
 * these to isolate the cost of the service layer.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "prover/prover.h"
#include "server/server.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static char *slurp(const char *path, size_t *len)
{
    struct pv_dynbuf b;
    char chunk[65536];
    size_t n;
    FILE *f = fopen(path, "rb");

    if (f == NULL) {
        return NULL;
    }
    pv_dynbuf_init(&b, 64u * 1024u * 1024u);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (!pv_ok(pv_dynbuf_add(&b, chunk, n))) {
            fclose(f);
            pv_dynbuf_free(&b);
            return NULL;
        }
    }
    fclose(f);
    return pv_dynbuf_take(&b, len);
}

int main(int argc, char **argv)
{
    struct server_config cfg;
    struct server_ctx *ctx = NULL;
    struct server_worker *w;
    enum server_route_id route;
    uint64_t *ns;
    uint64_t total = 0;
    unsigned long iters = 2000;
    size_t len = 0;
    char *body;

    if (argc < 3) {
        fprintf(stderr, "usage: bench_server prove|check|discover BODY-FILE [ITERATIONS]\n");
        return 2;
    }
    route = strcmp(argv[1], "check") == 0      ? SERVER_R_CHECK
            : strcmp(argv[1], "discover") == 0 ? SERVER_R_DISCOVER
                                               : SERVER_R_PROVE;
    if (argc > 3) {
        uint64_t v;
        if (!pv_ok(pv_parse_u64(argv[3], strlen(argv[3]), 100000000, &v)) || v == 0) {
            fprintf(stderr, "bench_server: bad iteration count\n");
            return 2;
        }
        iters = (unsigned long)v;
    }
    body = slurp(argv[2], &len);
    if (body == NULL) {
        fprintf(stderr, "bench_server: cannot read %s\n", argv[2]);
        return 2;
    }
    server_config_defaults(&cfg);
    if (!pv_ok(server_ctx_new(&cfg, &ctx)) || (w = server_worker_new(ctx)) == NULL) {
        fprintf(stderr, "bench_server: cannot start\n");
        return 1;
    }
    ns = calloc(iters, sizeof(*ns));
    if (ns == NULL) {
        return 1;
    }
    for (unsigned long i = 0; i < iters + iters / 10; i++) {
        struct server_reply r;
        uint64_t t0 = httpd_now_ns();
        char *text;
        server_route_run(w, route, body, len, &r);
        text = json_dumps(r.body, JSON_COMPACT);
        if (i >= iters / 10) {
            ns[i - iters / 10] = httpd_now_ns() - t0;
        }
        if (r.status != 200 || text == NULL) {
            fprintf(stderr, "bench_server: status %u: %s\n", r.status, text ? text : "?");
            return 1;
        }
        free(text);
        json_decref(r.body);
    }
    for (unsigned long i = 0; i < iters; i++) {
        total += ns[i];
    }
    qsort(ns, iters, sizeof(*ns), cmp_u64);
    printf("inproc %s: n=%lu p50=%.3f ms p99=%.3f ms mean=%.3f ms rate=%.0f/s (one thread)\n",
           argv[1], iters, (double)ns[iters / 2] / 1e6, (double)ns[iters * 99 / 100] / 1e6,
           (double)total / (double)iters / 1e6, 1e9 * (double)iters / (double)total);
    free(ns);
    free(body);
    server_worker_free(w);
    server_ctx_free(ctx);
    prover_finalize();
    return 0;
}
