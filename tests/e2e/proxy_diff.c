/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_diff.c - random policies and requests for the differential test
 *
 *   proxy_diff gen SEED NREQ POLICY_OUT PORT1 PORT2 PORT3
 *
 * Writes a random, valid policy to POLICY_OUT and prints NREQ random
 * requests, one per line: "fwd|tun METHOD URL". Hosts are 127.0.0.1 (in
 * several spellings) and names the test hosts file maps to loopback, private
 * and link-local addresses; ports are the two upstream ports and a closed
 * one. tests/e2e/proxy_diff.sh sends each request through proviso-proxy with
 * curl and compares the outcome with `proviso eval`.
 *
 *   proxy_diff check POLICY
 *
 * Loads POLICY with libmodel and exits 0 when it is valid (so a generator
 * bug shows up as a failed round, not as a silent skip).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

#define PICK(a) (a)[rnd((uint32_t)(sizeof(a) / sizeof((a)[0])))]

static const char *const bins[] = {"/usr/bin/curl", "/usr/bin/curl", "/usr/bin/*",
                                   "/usr/**",       "/usr/bin/wget", "/opt/none/*"};
static const char *const hosts[] = {
    "127.0.0.1", "127.0.0.1", "a.svc.test", "*.svc.test", "**.svc.test", "api.test", ""};
static const char *const methods[] = {"GET", "POST", "DELETE", "*", "PUT"};
static const char *const paths[] = {"/a/**", "/a/*", "/b", "**", "/c/*/d", "/a/x"};
static const char *const scopes[] = {"/a/**", "/b", "/c/**"};
static const char *const presets[] = {"read-only", "read-write", "full"};

static void endpoint(FILE *f, const unsigned ports[3])
{
    const char *h = PICK(hosts);
    bool l7 = rnd(3) != 0;

    if (h[0] != '\0') {
        fprintf(f, "      - host: \"%s\"\n", h);
    } else {
        fprintf(f, "      - allowed_ips: [\"10.1.0.0/16\", \"192.168.7.0/24\"]\n");
    }
    if (rnd(2) == 0) {
        fprintf(f, "        port: %u\n", ports[rnd(2)]);
    } else {
        fprintf(f, "        ports: [%u, %u]\n", ports[0], ports[1]);
    }
    if (!l7) {
        return;
    }
    fprintf(f, "        protocol: rest\n");
    if (rnd(4) != 0) {
        fprintf(f, "        enforcement: enforce\n");
    }
    if (rnd(4) == 0) {
        fprintf(f, "        path: \"%s\"\n", PICK(scopes));
    }
    if (rnd(5) == 0) {
        fprintf(f, "        allow_encoded_slash: true\n");
    }
    if (rnd(4) == 0) {
        fprintf(f, "        access: %s\n", PICK(presets));
    } else {
        unsigned n = 1 + rnd(3);
        fprintf(f, "        rules:\n");
        for (unsigned i = 0; i < n; i++) {
            fprintf(
                f, "          - allow:\n              method: \"%s\"\n              path: \"%s\"\n",
                PICK(methods), PICK(paths));
            if (rnd(4) == 0) {
                fprintf(f, "              query:\n                k: \"v*\"\n");
            }
        }
    }
    if (rnd(3) == 0) {
        fprintf(f, "        deny_rules:\n          - method: \"%s\"\n            path: \"%s\"\n",
                PICK(methods), PICK(paths));
        if (rnd(2) == 0) {
            fprintf(f, "            query:\n              k: \"zz\"\n");
        }
    }
}

static int gen(uint64_t seed, unsigned nreq, const char *out, const unsigned ports[3])
{
    static const char *const rhosts[] = {"127.0.0.1",  "127.0.0.1",    "127.0.0.1", "2130706433",
                                         "a.svc.test", "x.y.svc.test", "api.test",  "loop.test"};
    static const char *const rmethods[] = {"GET", "GET", "POST", "DELETE", "PUT", "HEAD"};
    static const char *const rpaths[] = {
        "/a/x",     "/a/x/y",    "/a/",     "/a",          "/b",
        "/b/",      "/c/1/d",    "/a/../b", "/a/%2e%2e/b", "/a/x%2Fy",
        "/%61/x",   "/a/x;p=1",  "/b?k=v1", "/b?k=zz",     "/b?k=v1&k=zz",
        "/b?k=%zz", "/a/x?k=v2", "/../x",   "/c/1/d?k=v",  "/a/x?k=zz&j=1"};
    FILE *f = fopen(out, "w");
    unsigned nrules;

    if (f == NULL) {
        perror(out);
        return 2;
    }
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    nrules = 1 + rnd(4);
    fprintf(f, "version: 1\nnetwork_policies:\n");
    for (unsigned r = 0; r < nrules; r++) {
        unsigned ne = 1 + rnd(3);
        unsigned nb = 1 + rnd(2);
        fprintf(f, "  r%u:\n    endpoints:\n", r);
        for (unsigned e = 0; e < ne; e++) {
            endpoint(f, ports);
        }
        fprintf(f, "    binaries:\n");
        for (unsigned b = 0; b < nb; b++) {
            fprintf(f, "      - path: \"%s\"\n", PICK(bins));
        }
    }
    fclose(f);
    for (unsigned i = 0; i < nreq; i++) {
        unsigned port = ports[rnd(8) == 0 ? 2 : rnd(2)];
        printf("%s %s http://%s:%u%s\n", rnd(3) == 0 ? "tun" : "fwd", PICK(rmethods), PICK(rhosts),
               port, PICK(rpaths));
    }
    return 0;
}

static int check(const char *path)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load_file(path, MODEL_FMT_AUTO, d);
    int rc = p != NULL ? 0 : 1;

    for (size_t i = 0; d != NULL && i < model_diags_count(d); i++) {
        fprintf(stderr, "%s\n", model_diags_line(d, i));
    }
    model_policy_free(p);
    model_diags_free(d);
    return rc;
}

int main(int argc, char **argv)
{
    uint64_t seed;
    uint64_t n;
    uint64_t p[3];
    unsigned ports[3];

    if (argc == 3 && strcmp(argv[1], "check") == 0) {
        return check(argv[2]);
    }
    if (argc != 8 || strcmp(argv[1], "gen") != 0 ||
        !pv_ok(pv_parse_u64(argv[2], strlen(argv[2]), UINT64_MAX, &seed)) ||
        !pv_ok(pv_parse_u64(argv[3], strlen(argv[3]), 100000, &n))) {
        fprintf(stderr, "usage: proxy_diff gen SEED NREQ POLICY PORT1 PORT2 PORT3\n"
                        "       proxy_diff check POLICY\n");
        return 2;
    }
    for (int i = 0; i < 3; i++) {
        if (!pv_ok(pv_parse_u64(argv[5 + i], strlen(argv[5 + i]), 65535, &p[i]))) {
            return 2;
        }
        ports[i] = (unsigned)p[i];
    }
    return gen(seed, (unsigned)n, argv[4], ports);
}
