/* SPDX-License-Identifier: Apache-2.0 */
/* server_config.c - proviso-prover configuration: embedded defaults, YAML/JSON file
 *
 * The configuration is one flat mapping of scalars. libyaml reads both YAML and
 * the JSON subset ({"port": 8080} is a YAML flow mapping), so one parser gives
 * FILE:LINE:COL errors for both. Every key is in the table below; unknown keys,
 * duplicate keys, non-scalar values and out-of-range numbers are errors. The
 * service runs with no file at all: server_config_defaults() is the embedded
 * configuration.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <yaml.h>

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
 * Loader
 * ------------------------------------------------------------------------- */

static pv_result fail_at(char *err, size_t errlen, const char *file, const yaml_mark_t *m,
                         const char *what, const char *key, int code)
{
    if (key != NULL) {
        snprintf(err, errlen, "%s:%zu:%zu: %s: %s", file, m->line + 1, m->column + 1, key, what);
    } else {
        snprintf(err, errlen, "%s:%zu:%zu: %s", file, m->line + 1, m->column + 1, what);
    }
    return pv_fail(code, __FILE__);
}

pv_result server_config_load(struct server_config *c, const char *file, const char *buf, size_t len,
                             char *err, size_t errlen)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    pv_result r = PV_RESULT_OK;
    bool seen[PV_ARRAY_LEN(keys)] = {false};
    char key[64] = "";
    yaml_mark_t key_mark = {0, 0, 0};
    bool have_key = false;
    int depth = 0;
    bool done = false;

    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "%s: out of memory", file);
        PV_BAIL(PV_ERR_NOMEM);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    while (!done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            r = fail_at(err, errlen, file, &parser.problem_mark,
                        parser.problem != NULL ? parser.problem : "syntax error", NULL,
                        PV_ERR_PARSE);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_MAPPING_START_EVENT:
            if (depth != 0) {
                r = fail_at(err, errlen, file, &ev.start_mark, "value must be a scalar",
                            have_key ? key : NULL, PV_ERR_PARSE);
                break;
            }
            depth++;
            break;
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT: {
            const char *v = (const char *)ev.data.scalar.value;
            size_t vlen = ev.data.scalar.length;
            char why[96];
            bool at_key = false;
            if (depth != 1) {
                r = fail_at(err, errlen, file, &ev.start_mark, "configuration must be a mapping",
                            NULL, PV_ERR_PARSE);
                break;
            }
            if (!have_key) {
                if (vlen >= sizeof(key) || memchr(v, '\0', vlen) != NULL) {
                    r = fail_at(err, errlen, file, &ev.start_mark, "unknown key", NULL,
                                PV_ERR_PARSE);
                    break;
                }
                memcpy(key, v, vlen);
                key[vlen] = '\0';
                key_mark = ev.start_mark;
                have_key = true;
                break;
            }
            have_key = false;
            if (!set_key(c, key, v, vlen, why, sizeof(why), &at_key, seen)) {
                r = fail_at(err, errlen, file, at_key ? &key_mark : &ev.start_mark, why, key,
                            PV_ERR_PARSE);
            }
            break;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_SEQUENCE_END_EVENT:
        case YAML_ALIAS_EVENT:
        case YAML_NO_EVENT:
        default:
            r = fail_at(err, errlen, file, &ev.start_mark,
                        depth == 0 ? "configuration must be a mapping" : "value must be a scalar",
                        have_key ? key : NULL, PV_ERR_PARSE);
            break;
        }
        yaml_event_delete(&ev);
        if (!pv_ok(r)) {
            break;
        }
    }
    yaml_parser_delete(&parser);
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
