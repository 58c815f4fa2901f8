/* SPDX-License-Identifier: Apache-2.0 */
/* bench_ws.c - the proxy's cost per WebSocket text message against one REST
 * request decision, in the same run
 *
 * A policy with a rest endpoint and a websocket endpoint (20 rules each, a
 * deny rule on both) is loaded as the proxy loads it. Measured, each for
 * SECONDS of CPU time:
 *   rest      proxy_decide_dest() of a GET with a query (what every
 *             inspected REST request costs in the decision);
 *   ws decision  proxy_decide_dest() of WEBSOCKET_TEXT alone;
 *   ws N B    what proxy_wsconn.c does per client text message of N bytes:
 *             parse and unmask the masked frame, check its UTF-8, decide it
 *             as WEBSOCKET_TEXT on the upgrade's path and query, re-frame it
 *             with a fresh random mask.
 * Prints ns per operation and the ratio to the REST decision. Built by
 * `make`, never run by `make check`:
 *
 *   tests/bench/bench_ws [SECONDS]     (default 1 CPU-second per measurement)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proxy/proxy_int.h"
#include "proxy/proxy_ws.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *write_policy(char *path, size_t len)
{
    FILE *f;
    int fd;

    snprintf(path, len, "/tmp/bench_ws.XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) {
        return NULL;
    }
    f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        return NULL;
    }
    fprintf(f, "version: 1\nnetwork_policies:\n");
    fprintf(f, "  api:\n    endpoints:\n"
               "      - host: api.example.com\n        port: 443\n        protocol: rest\n"
               "        enforcement: enforce\n        rules:\n");
    for (int i = 0; i < 20; i++) {
        fprintf(f, "          - allow: {method: GET, path: /v1/r%d/**}\n", i);
    }
    fprintf(f, "          - allow: {method: GET, path: /v1/items}\n"
               "        deny_rules:\n          - {method: GET, path: /v1/items/admin}\n");
    fprintf(f, "      - host: rt.example.com\n        port: 443\n        protocol: websocket\n"
               "        enforcement: enforce\n        rules:\n");
    for (int i = 0; i < 20; i++) {
        fprintf(f, "          - allow: {method: GET, path: /v1/s%d/**}\n", i);
    }
    fprintf(f, "          - allow: {method: GET, path: /v1/realtime}\n"
               "          - allow: {method: WEBSOCKET_TEXT, path: /v1/realtime}\n"
               "        deny_rules:\n          - {method: WEBSOCKET_TEXT, path: /v1/admin/**}\n");
    fprintf(f, "    binaries:\n      - path: /usr/bin/python3*\n");
    fclose(f);
    return path;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    char ppath[64];
    char err[512];
    struct proxy_policy *pol;
    struct proxy_identity id;
    struct proxy_decide_opts o = {false, false, NULL, NULL, NULL, NULL};
    struct model_ip ip;
    static const char rest_t[] = "/v1/items?page=2&per_page=50";
    static const char ws_t[] = "/v1/realtime?model=m1";
    static const size_t sizes[] = {64, 1024, 16384};
    static char exe[] = "/usr/bin/python3.11";
    double rest_ns;
    struct proxy_verdict v;

    if (secs <= 0) {
        secs = 1.0;
    }
    if (write_policy(ppath, sizeof(ppath)) == NULL) {
        fprintf(stderr, "bench_ws: cannot write the policy\n");
        return 1;
    }
    pol = proxy_policy_load(ppath, 1, err, sizeof(err));
    unlink(ppath);
    if (pol == NULL) {
        fprintf(stderr, "bench_ws: %s\n", err);
        return 1;
    }
    memset(&id, 0, sizeof(id));
    id.refs = 1;
    id.n = 1;
    id.path[0] = exe;
    id.known = true;
    memset(&ip, 0, sizeof(ip));
    ip.b[10] = 0xff;
    ip.b[11] = 0xff;
    ip.b[12] = 93;
    ip.b[13] = 184;
    ip.b[14] = 216;
    ip.b[15] = 34;

    /* sanity: both decisions allow, or the figures mean nothing */
    proxy_decide_dest(pol, &id, "api.example.com", 15, 443, "GET", rest_t, sizeof(rest_t) - 1, &ip,
                      &o, &v);
    if (!v.allow) {
        fprintf(stderr, "bench_ws: the REST request is not allowed: %s\n", v.detail);
        return 1;
    }
    proxy_decide_dest(pol, &id, "rt.example.com", 14, 443, "WEBSOCKET_TEXT", ws_t, sizeof(ws_t) - 1,
                      &ip, &o, &v);
    if (!v.allow) {
        fprintf(stderr, "bench_ws: the WebSocket message is not allowed: %s\n", v.detail);
        return 1;
    }

    {
        unsigned long n = 0;
        unsigned ok = 0;
        double t0 = cpu_now();
        double t;
        do {
            for (int k = 0; k < 1000; k++) {
                proxy_decide_dest(pol, &id, "api.example.com", 15, 443, "GET", rest_t,
                                  sizeof(rest_t) - 1, &ip, &o, &v);
                ok += v.allow;
            }
            n += 1000;
            t = cpu_now() - t0;
        } while (t < secs);
        rest_ns = t * 1e9 / (double)n;
        printf("rest decision (GET with query)          %9.0f ns   1.00x   (%u allowed)\n", rest_ns,
               ok);
    }

    {
        unsigned long n = 0;
        double t0 = cpu_now();
        double t;
        do {
            for (int k = 0; k < 1000; k++) {
                proxy_decide_dest(pol, &id, "rt.example.com", 14, 443, "WEBSOCKET_TEXT", ws_t,
                                  sizeof(ws_t) - 1, &ip, &o, &v);
            }
            n += 1000;
            t = cpu_now() - t0;
        } while (t < secs);
        printf("ws message decision only                %9.0f ns  %5.2fx\n", t * 1e9 / (double)n,
               t * 1e9 / (double)n / rest_ns);
    }
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t len = sizes[s];
        unsigned char key[4] = {9, 8, 7, 6};
        unsigned char *frame = malloc(PROXY_WS_MAX_HEAD + len);
        unsigned char *out = malloc(PROXY_WS_MAX_HEAD + len);
        size_t hl;
        unsigned long n = 0;
        double t0;
        double t;
        struct proxy_ws_parser p;
        struct proxy_ws_keys keys;

        memset(&keys, 0, sizeof(keys));
        if (frame == NULL || out == NULL) {
            return 1;
        }
        /* a JSON-looking ASCII message with some two-byte UTF-8 */
        hl = proxy_ws_frame_head(frame, PROXY_WS_OP_TEXT, len, key);
        for (size_t i = 0; i < len; i++) {
            frame[hl + i] =
                (unsigned char)("{\"type\":\"input\",\"text\":\"hello world\"}"[i % 38]);
        }
        memcpy(frame + hl + len / 2, "\xc3\xa9", 2);
        proxy_ws_mask(frame + hl, len, key, 0);
        proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
        t0 = cpu_now();
        do {
            for (int k = 0; k < 100; k++) {
                struct proxy_ws_event ev;
                unsigned char mk[4];
                size_t oh;
                if (proxy_ws_parse(&p, frame, hl + len, &ev) != PROXY_WS_TEXT) {
                    fprintf(stderr, "bench_ws: the frame does not parse: %s\n",
                            ev.why != NULL ? ev.why : "more");
                    return 1;
                }
                proxy_decide_dest(pol, &id, "rt.example.com", 14, 443, "WEBSOCKET_TEXT", ws_t,
                                  sizeof(ws_t) - 1, &ip, &o, &v);
                if (!v.allow || !proxy_ws_mask_key(&keys, mk)) {
                    return 1;
                }
                oh = proxy_ws_frame_head(out, PROXY_WS_OP_TEXT, ev.payload_len, mk);
                memcpy(out + oh, ev.payload, ev.payload_len);
                proxy_ws_mask(out + oh, ev.payload_len, mk, 0);
            }
            n += 100;
            t = cpu_now() - t0;
        } while (t < secs);
        printf("ws text message %6zu B (parse+decide+reframe) %7.0f ns  %5.2fx\n", len,
               t * 1e9 / (double)n, t * 1e9 / (double)n / rest_ns);
        proxy_ws_parser_clear(&p);
        free(frame);
        free(out);
    }
    proxy_policy_unref(pol);
    return 0;
}
