/* SPDX-License-Identifier: Apache-2.0 */
/* server_config.c - proviso-prover configuration: embedded defaults, YAML/JSON file
 *
 * The configuration is one flat mapping of scalars, read by the one YAML
 * reader of policies (model_yaml_tree, docs/architecture.md#yaml): it reads
 * both YAML and the JSON subset ({"port": 8080} is a YAML flow mapping) and
 * gives FILE:LINE:COL errors for both, refusing duplicate keys, anchors and
 * aliases, tags and several documents in its own words. Every key is in the
 * table below; unknown keys, non-scalar values and out-of-range numbers are
 * errors at the key or the value. The service runs with no file at all:
 * server_config_defaults() is the embedded configuration.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "model/model.h"
#include "server/server.h"

void server_config_defaults(struct server_config *c)
{
    memset(c, 0, sizeof(*c));
    c->port = SERVER_DEFAULT_PORT;
    snprintf(c->bind, sizeof(c->bind), "%s", "127.0.0.1");
    c->body_limit = SERVER_DEFAULT_BODY_LIMIT;
    c->workers = 0;
    c->io_threads = 1;
    c->max_concurrent = 64;
    c->timeout_ms = SERVER_DEFAULT_TIMEOUT_MS;
    c->max_timeout_ms = SERVER_DEFAULT_MAX_TIMEOUT_MS;
    c->grace_ms = 10000;
    c->conn_timeout_s = 10;
    c->max_connections = SERVER_DEFAULT_MAX_CONNECTIONS;
    c->per_ip_limit = 0;
}

/* ---------------------------------------------------------------------------
 * Key table
 * ------------------------------------------------------------------------- */

enum key_type { KEY_UINT, KEY_ADDR };

static const struct {
    const char *name;
    enum key_type type;
    uint64_t min, max;
    size_t off;
    size_t size;
} keys[] = {
#define U(name, min, max, field)                                         \
    {                                                                    \
        name, KEY_UINT, min, max, offsetof(struct server_config, field), \
            sizeof(((struct server_config *)0)->field)                   \
    }
    U("port", 0, 65535, port),
    {"bind", KEY_ADDR, 0, 0, offsetof(struct server_config, bind), 0},
    U("body_limit", 1024, SERVER_MAX_BODY_LIMIT, body_limit),
    U("workers", 0, SERVER_MAX_WORKERS, workers),
    U("io_threads", 1, 64, io_threads),
    U("max_concurrent", 1, 100000, max_concurrent),
    U("timeout_ms", 1, 3600000, timeout_ms),
    U("max_timeout_ms", 1, 3600000, max_timeout_ms),
    U("grace_ms", 0, 3600000, grace_ms),
    U("connection_timeout_s", 1, 3600, conn_timeout_s),
    U("max_connections", 1, 100000, max_connections),
    U("per_ip_connection_limit", 0, 100000, per_ip_limit),
#undef U
};

static void store_uint(struct server_config *c, size_t off, size_t size, uint64_t v)
{
    unsigned char *p = (unsigned char *)c + off;
    if (size == sizeof(uint16_t)) {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, sizeof(x));
    } else if (size == sizeof(unsigned)) {
        unsigned x = (unsigned)v;
        memcpy(p, &x, sizeof(x));
    } else {
        size_t x = (size_t)v;
        memcpy(p, &x, sizeof(x));
    }
}

static bool addr_valid(const char *s)
{
    unsigned char tmp[16];
    return inet_pton(AF_INET, s, tmp) == 1 || inet_pton(AF_INET6, s, tmp) == 1;
}

/* Set key 'k' from scalar 'v'. On error writes the message into 'why' and
 * sets '*at_key' when the key (not the value) is at fault. */
static bool set_key(struct server_config *c, const char *k, const char *v, size_t vlen, char *why,
                    size_t whylen, bool *at_key, bool *seen)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        uint64_t n = 0;
        if (strcmp(keys[i].name, k) != 0) {
            continue;
        }
        if (seen[i]) {
            snprintf(why, whylen, "duplicate key");
            *at_key = true;
            return false;
        }
        seen[i] = true;
        if (keys[i].type == KEY_ADDR) {
            if (vlen >= sizeof(c->bind) || memchr(v, '\0', vlen) != NULL || !addr_valid(v)) {
                snprintf(why, whylen, "must be an IPv4 or IPv6 address literal");
                return false;
            }
            memcpy(c->bind, v, vlen);
            c->bind[vlen] = '\0';
            return true;
        }
        if (!pv_ok(pv_parse_u64(v, vlen, keys[i].max, &n)) || n < keys[i].min) {
            snprintf(why, whylen, "must be an integer between %llu and %llu",
                     (unsigned long long)keys[i].min, (unsigned long long)keys[i].max);
            return false;
        }
        store_uint(c, keys[i].off, keys[i].size, n);
        return true;
    }
    snprintf(why, whylen, "unknown key");
    *at_key = true;
    return false;
}

/* ---------------------------------------------------------------------------
 * Loader: the one YAML reader's tree (model_yaml_tree), then the table
 * ------------------------------------------------------------------------- */

static pv_result fail_at(char *err, size_t errlen, const char *file, const struct model_node *n,
                         const char *what, const char *key)
{
    uint32_t line, col;

    model_node_where(n, &line, &col);
    if (key != NULL) {
        snprintf(err, errlen, "%s:%u:%u: %s: %s", file, (unsigned)line, (unsigned)col, key, what);
    } else {
        snprintf(err, errlen, "%s:%u:%u: %s", file, (unsigned)line, (unsigned)col, what);
    }
    return pv_fail(PV_ERR_PARSE, __FILE__);
}

/* Apply the mapping 'root' to 'c', key by key. */
static pv_result apply(struct server_config *c, const char *file, const struct model_node *root,
                       char *err, size_t errlen)
{
    bool seen[PV_ARRAY_LEN(keys)] = {false};

    if (model_node_kind_of(root) == MODEL_NODE_NULL) {
        return PV_RESULT_OK; /* empty, or comments only: the defaults */
    }
    if (model_node_kind_of(root) != MODEL_NODE_MAP) {
        return fail_at(err, errlen, file, root, "configuration must be a mapping", NULL);
    }
    for (size_t i = 0; i < model_node_npairs(root); i++) {
        const struct model_node *v;
        const struct model_node *k = model_node_pair(root, i, &v);
        size_t klen, vlen;
        const char *ktext = model_node_text(k, &klen);
        const char *vtext = model_node_text(v, &vlen);
        char key[64];
        char why[96];
        bool at_key = false;

        if (ktext == NULL || klen >= sizeof(key) || memchr(ktext, '\0', klen) != NULL) {
            return fail_at(err, errlen, file, k, "unknown key", NULL);
        }
        memcpy(key, ktext, klen + 1);
        if (model_node_kind_of(v) == MODEL_NODE_NULL) {
            vtext = ""; /* "port:" reads as an empty value */
        } else if (vtext == NULL) {
            return fail_at(err, errlen, file, v, "value must be a scalar", key);
        }
        if (!set_key(c, key, vtext, vlen, why, sizeof(why), &at_key, seen)) {
            return fail_at(err, errlen, file, at_key ? k : v, why, key);
        }
    }
    return PV_RESULT_OK;
}

pv_result server_config_load(struct server_config *c, const char *file, const char *buf, size_t len,
                             char *err, size_t errlen)
{
    struct model_diags *diags = model_diags_new();
    struct model_node *root;
    pv_result r;

    if (diags == NULL) {
        snprintf(err, errlen, "%s: out of memory", file);
        PV_BAIL(PV_ERR_NOMEM);
    }
    root = model_yaml_tree(file, buf, len, diags);
    if (root == NULL) {
        const char *line = model_diags_line(diags, 0);
        int code =
            model_diags_nomem(diags) || pv_errno == PV_ERR_NOMEM ? PV_ERR_NOMEM : PV_ERR_PARSE;

        snprintf(err, errlen, "%s", line != NULL ? line : "out of memory");
        model_diags_free(diags);
        PV_BAIL(code);
    }
    r = apply(c, file, root, err, errlen);
    model_node_free(root);
    model_diags_free(diags);
    PV_GUARD(r);
    return server_config_check(c, err, errlen);
}

pv_result server_config_check(const struct server_config *c, char *err, size_t errlen)
{
    if (c->timeout_ms > c->max_timeout_ms) {
        snprintf(err, errlen, "timeout_ms (%u) exceeds max_timeout_ms (%u)", c->timeout_ms,
                 c->max_timeout_ms);
        PV_BAIL(PV_ERR_USAGE);
    }
    if (!addr_valid(c->bind)) {
        snprintf(err, errlen, "bind: not an address literal");
        PV_BAIL(PV_ERR_USAGE);
    }
    if (c->body_limit < 1024 || c->body_limit > SERVER_MAX_BODY_LIMIT) {
        snprintf(err, errlen, "body_limit out of range");
        PV_BAIL(PV_ERR_USAGE);
    }
    return PV_RESULT_OK;
}
