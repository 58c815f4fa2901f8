/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_main.c - the proviso-advisor process: options, start-up, signals
 *
 *   proviso-advisor --data-dir DIR [--port N] [--bind ADDR]
 *                   [--token-file F | --token-fd N] [--config F]
 *                   [--prover URL]... [--prover-token-file F]... [--prover-exe PATH]
 *                   [--test-allow-loopback]
 *
 * The process contract of every proviso server (docs/operations.md): the
 * admin token never comes from argv or the environment (without a token
 * option one is generated per run into a 0600 file in the data directory,
 * whose path is logged); /healthz answers once the listener is up; SIGTERM
 * drains and exits 0. Without --prover the advisor runs proviso-prover as
 * its child (advisor_child.c), so one command runs the whole gateway; with
 * one or more --prover URLs it proves with that pool of running provers
 * instead (advisor_pool.c, docs/scale-out.md#pool).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "advisor/proc/proc.h"
#include "advisor/store/store.h"
#include "audit/audit.h"
#include "common/pv_args.h"
#include "common/pv_dynbuf.h"
#include "common/pv_file.h"
#include "common/pv_log.h"
#include "common/pv_notify.h"
#include "model/model.h"

#define CONFIG_MAX_BYTES (64u * 1024u)

struct options {
    const char *data_dir;
    const char *store; /* --store, else data_dir (its advisor.db) */
    const char *config;
    const char *token_file;
    const char *bind;
    struct pv_args args; /* for the repeated --prover and --prover-token-file */
    unsigned nprovers;
    unsigned nprover_tokens;
    const char *prover_exe;
    const char *audit_key_file;
    struct pv_server_opts srv; /* --port, --token-fd */
    bool allow_loopback;
    bool export_audit;
    bool no_chain;
    uint64_t since;
};

static const struct pv_opt advisor_opts[] = {
    {"data-dir", "DIR", "keys, tokens and (by default) the store advisor.db; created if missing",
     0},
    {"store", "URL",
     "sqlite:FILE (default DIR/advisor.db) or postgresql://... (docs/operations.md#postgresql)", 0},
    {"port", "N", "listen port (default " PV_STR(ADVISOR_DEFAULT_PORT) "; 0 picks a free port)", 0},
    {"bind", "ADDR", "listen address (default 127.0.0.1)", 0},
    {"token-file", "FILE", "read the admin bearer token from FILE", 0},
    {"token-fd", "N", "read the admin bearer token from descriptor N", 0},
    {"config", "FILE", "YAML or JSON settings (docs/operations.md#advisor)", 0},
    {"prover", "URL",
     "use a running proviso-prover instead of a child; repeat for a pool (docs/scale-out.md#pool)",
     PV_OPT_REPEAT},
    {"prover-token-file", "FILE",
     "the running provers' bearer token: once for all, or once per --prover in order",
     PV_OPT_REPEAT},
    {"prover-exe", "PATH", "the prover binary to run as the child (default: beside this one)", 0},
    {"test-allow-loopback", NULL, "tests only: proposals may name 127.0.0.1 literally", 0},
    {"audit-key-file", "FILE",
     "the audit signing key (PEM Ed25519, mode 0600; default DIR/audit.key); replicas on one "
     "database share one (docs/scale-out.md#replicas)",
     0},
    {"export-audit", NULL, "write the audit export (docs/audit.md) to stdout and exit", 0},
    {"since", "SEQ", "with --export-audit: only the records after SEQ", 0},
    {"test-no-audit-chain", NULL, "benchmarks only: write events unsealed", PV_OPT_HIDDEN},
    {"token", "TOKEN",
     "a token on the command line leaks through /proc; use a token file or "
     "--token-fd",
     PV_OPT_REFUSE},
    {"prover-token", "TOKEN",
     "a token on the command line leaks through /proc; use "
     "--prover-token-file",
     PV_OPT_REFUSE},
};

static const struct pv_cmd advisor_cmd = {
    .prog = "proviso-advisor",
    .synopsis = "--data-dir DIR [--store URL] [--port N] [--bind ADDR]\n"
                "                       [--token-file FILE | --token-fd N] [--config FILE]\n"
                "                       [--prover URL --prover-token-file FILE]... "
                "[--prover-exe PATH]\n"
                "                       [--audit-key-file FILE] [--test-allow-loopback]\n"
                "       proviso-advisor --data-dir DIR --export-audit [--since SEQ]",
    .summary = "The policy advisor gateway: sandboxes, proposals, review (docs/advisor.md).\n"
               "Without --prover it runs proviso-prover as its child. Without a token\n"
               "option a random admin token is written to a 0600 file in the data\n"
               "directory, whose path is logged. SIGTERM drains and exits 0.",
    .opts = advisor_opts,
    .nopts = PV_ARRAY_LEN(advisor_opts),
    .example = "proviso-advisor --data-dir /var/lib/proviso --token-file /etc/proviso/admin.token",
    .epilog = "exit: 0 after SIGTERM, 2 on a usage or start-up error",
    .version = "proviso-advisor " PACKAGE_VERSION,
    .last_wins = true,
};

/* --prover URL (repeatable) with one --prover-token-file for all or one
 * each, in order. */
static void check_provers(const struct options *o)
{
    if ((o->nprovers > 0) != (o->nprover_tokens > 0) ||
        (o->nprover_tokens > 1 && o->nprover_tokens != o->nprovers)) {
        exit(pv_args_usage(&advisor_cmd, "--prover goes with one --prover-token-file, or one per "
                                         "--prover"));
    }
    if (o->nprovers > ADVISOR_POOL_MAX) {
        exit(pv_args_usage(&advisor_cmd, "at most %d --prover", ADVISOR_POOL_MAX));
    }
    for (unsigned i = 0; i < o->nprovers; i++) {
        const char *url = pv_args_nth(&o->args, "prover", i);
        if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
            exit(pv_args_usage(&advisor_cmd, "--prover: not an http(s) URL: '%s'", url));
        }
        if (strlen(url) >= ADVISOR_POOL_URL_MAX || strpbrk(url, " \t\r\n\"\\") != NULL) {
            exit(pv_args_usage(&advisor_cmd, "--prover: too long or not one URL: '%s'", url));
        }
        for (unsigned j = 0; j < i; j++) {
            if (strcmp(url, pv_args_nth(&o->args, "prover", j)) == 0) {
                exit(pv_args_usage(&advisor_cmd, "--prover %s is given twice", url));
            }
        }
    }
}

static void parse_args(int argc, char **argv, struct options *o)
{
    struct pv_args a;
    uint64_t v = 0;

    memset(o, 0, sizeof(*o));
    pv_args_server(&advisor_cmd, argc, argv, &a, &o->srv);
    o->args = a;
    o->data_dir = pv_args_get(&a, "data-dir");
    o->store = pv_args_get(&a, "store");
    o->bind = pv_args_get(&a, "bind");
    o->token_file = pv_args_get(&a, "token-file");
    o->config = pv_args_get(&a, "config");
    o->nprovers = pv_args_count(&a, "prover");
    o->nprover_tokens = pv_args_count(&a, "prover-token-file");
    o->prover_exe = pv_args_get(&a, "prover-exe");
    o->audit_key_file = pv_args_get(&a, "audit-key-file");
    o->allow_loopback = pv_args_has(&a, "test-allow-loopback");
    o->export_audit = pv_args_has(&a, "export-audit");
    o->no_chain = pv_args_has(&a, "test-no-audit-chain");
    v = 0;
    if (!pv_args_number(&a, "since", 0, INT64_MAX, &v)) {
        exit(2);
    }
    o->since = v;
    if (pv_args_has(&a, "since") && !o->export_audit) {
        exit(pv_args_usage(&advisor_cmd, "--since goes with --export-audit"));
    }
    if (o->data_dir == NULL) {
        exit(pv_args_usage(&advisor_cmd, "--data-dir is required"));
    }
    if (o->store == NULL) {
        o->store = o->data_dir;
    } else if (strncmp(o->store, "sqlite:", 7) != 0 &&
               strncmp(o->store, "postgresql://", 13) != 0 &&
               strncmp(o->store, "postgres://", 11) != 0) {
        exit(pv_args_usage(&advisor_cmd, "--store takes sqlite:FILE, postgresql://... or "
                                         "postgres://..."));
    } else if (strcmp(o->store, "sqlite:") == 0) {
        exit(pv_args_usage(&advisor_cmd, "--store sqlite: needs a file name"));
    }
    if (o->since > 0 && !o->export_audit) {
        pv_fatal("--since goes with --export-audit");
    }
    if (o->token_file != NULL && o->srv.have_fd) {
        exit(pv_args_usage(&advisor_cmd, "use one of --token-file and --token-fd"));
    }
    check_provers(o);
}

/* ===========================================================================
 * Configuration: a flat mapping, "key: value" lines (YAML) or a JSON object
 * ========================================================================= */

static void config_defaults(struct advisor_config *c)
{
    memset(c, 0, sizeof(*c));
    c->http.port = ADVISOR_DEFAULT_PORT;
    snprintf(c->http.bind, sizeof(c->http.bind), "127.0.0.1");
    c->http.body_limit = 1024u * 1024u;
    c->http.workers = 64;
    c->http.io_threads = 1;
    c->http.max_concurrent = 1024;
    c->http.conn_timeout_s = 330; /* a long-poll may take 300 s */
    c->http.max_connections = 16384;
    c->prover_timeout_ms = 30000;
    c->grace_ms = 10000;
    c->mapper_flush_ms = ADVISOR_MAPPER_FLUSH_MS;
    c->store_connections = STORE_PG_POOL_MAX;
}

static const struct {
    const char *key;
    uint64_t min, max;
    int which;
} config_keys[] = {
    {"port", 0, 65535, 0},
    {"body_limit", 1024, 64u * 1024u * 1024u, 1},
    {"workers", 2, 512, 2},
    {"max_concurrent", 1, 100000, 3},
    {"connection_timeout_s", 1, 3600, 4},
    {"max_connections", 16, 100000, 5},
    {"per_ip_connection_limit", 0, 100000, 6},
    {"prover_timeout_ms", 100, 600000, 7},
    {"grace_ms", 0, 3600000, 8},
    {"mapper_flush_interval_ms", 10, 3600000, 9},
    {"policy_longpolls", 1, 512, 10},
    {"store_connections", 1, 1000, 11},
};

static void config_set(struct advisor_config *c, const char *file, int line, const char *key,
                       const char *val)
{
    uint64_t v = 0;

    if (strcmp(key, "bind") == 0) {
        if (strlen(val) >= sizeof(c->http.bind)) {
            pv_fatal("%s:%d:1: bind: address too long", file, line);
        }
        snprintf(c->http.bind, sizeof(c->http.bind), "%s", val);
        return;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(config_keys); i++) {
        if (strcmp(config_keys[i].key, key) != 0) {
            continue;
        }
        if (!pv_ok(pv_parse_u64(val, strlen(val), config_keys[i].max, &v)) ||
            v < config_keys[i].min) {
            pv_fatal("%s:%d:1: %s: expected a number in %llu..%llu, got '%s'", file, line, key,
                     (unsigned long long)config_keys[i].min, (unsigned long long)config_keys[i].max,
                     val);
        }
        switch (config_keys[i].which) {
        case 0:
            c->http.port = (uint16_t)v;
            break;
        case 1:
            c->http.body_limit = (size_t)v;
            break;
        case 2:
            c->http.workers = (unsigned)v;
            break;
        case 3:
            c->http.max_concurrent = (unsigned)v;
            break;
        case 4:
            c->http.conn_timeout_s = (unsigned)v;
            break;
        case 5:
            c->http.max_connections = (unsigned)v;
            break;
        case 6:
            c->http.per_ip_limit = (unsigned)v;
            break;
        case 7:
            c->prover_timeout_ms = (unsigned)v;
            break;
        case 9:
            c->mapper_flush_ms = (unsigned)v;
            break;
        case 10:
            c->policy_longpolls = (unsigned)v;
            break;
        case 11:
            c->store_connections = (unsigned)v;
            break;
        default:
            c->grace_ms = (unsigned)v;
            break;
        }
        return;
    }
    pv_fatal("%s:%d:1: unknown key '%s' (known: bind, port, body_limit, workers, max_concurrent, "
             "connection_timeout_s, max_connections, per_ip_connection_limit, "
             "prover_timeout_ms, grace_ms, mapper_flush_interval_ms, policy_longpolls, "
             "store_connections)",
             file, line, key);
}

static void config_load(struct advisor_config *c, const char *file)
{
    PV_DEFER(char *buf, pv_free_p) = NULL;
    char err[PATH_MAX + 64];
    size_t n = 0;
    json_t *j;
    int line = 0;
    char *save = NULL;

    if (!pv_ok(pv_file_read(file, CONFIG_MAX_BYTES, false, &buf, &n, err, sizeof(err)))) {
        pv_fatal("%s", err);
    }
    j = json_loadb(buf, n, JSON_REJECT_DUPLICATES, NULL);
    if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach(j, key, v)
        {
            char text[128];
            if (json_is_integer(v)) {
                snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
            } else if (json_is_string(v)) {
                snprintf(text, sizeof(text), "%s", json_string_value(v));
            } else {
                pv_fatal("%s:1:1: %s: expected a number or a string", file, key);
            }
            config_set(c, file, 1, key, text);
        }
        json_decref(j);
        return;
    }
    json_decref(j);
    for (char *l = strtok_r(buf, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        char *colon;
        char *val;
        char *end;
        line++;
        while (*l == ' ' || *l == '\t') {
            l++;
        }
        if (*l == '#' || *l == '\0' || strcmp(l, "---") == 0) {
            continue;
        }
        colon = strchr(l, ':');
        if (colon == NULL) {
            pv_fatal("%s:%d:1: expected 'key: value'", file, line);
        }
        /* cppcheck-suppress nullPointerRedundantCheck ; pv_fatal does not return */
        *colon = '\0';
        /* cppcheck-suppress nullPointerArithmeticRedundantCheck ; as above */
        val = colon + 1;
        while (*val == ' ' || *val == '\t') {
            val++;
        }
        end = val + strlen(val);
        while (end > val && (isspace((unsigned char)end[-1]))) {
            *--end = '\0';
        }
        if (end - val >= 2 && (val[0] == '"' || val[0] == '\'') && end[-1] == val[0]) {
            end[-1] = '\0';
            val++;
        }
        for (char *k = colon; k > l && isspace((unsigned char)k[-1]); k--) {
            k[-1] = '\0';
        }
        config_set(c, file, line, l, val);
    }
}

/* ===========================================================================
 * Start-up
 * ========================================================================= */

static void load_sandbox_token(void *arg, const struct store_sandbox *sb)
{
    struct advisor *a = arg;

    if (!pv_ok(advisor_tokens_put(a->tokens, sb->token_sha256, sb->id))) {
        pv_log_warnx("sandbox %s: unreadable token digest; its token will not work", sb->name);
    }
}

static void *worker_new(void *ctx)
{
    return advisor_worker_new(ctx);
}

static void worker_free(void *w)
{
    advisor_worker_free(w);
}

static void completed(void *ctx, int route_id, unsigned status, uint64_t ns)
{
    const struct advisor *a = ctx;

    httpd_metrics_request(a->metrics, route_id, status, ns);
}

static void rejected(void *ctx)
{
    const struct advisor *a = ctx;

    httpd_metrics_rejected(a->metrics);
}

static int authorize(void *ctx, const struct httpd_route *route, const char *authorization)
{
    struct advisor *a = ctx;
    size_t len = 0;
    const char *bearer;
    int64_t id;

    (void)route;
    if (httpd_token_check(&a->admin, authorization)) {
        return 0;
    }
    bearer = httpd_bearer(authorization, &len);
    if (bearer == NULL) {
        return -1;
    }
    id = advisor_tokens_find(a->tokens, bearer, len);
    return id > 0 && id <= INT_MAX ? (int)id : -1;
}

static void prover_exe(const struct options *o, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n;

    if (o->prover_exe != NULL) {
        snprintf(out, len, "%s", o->prover_exe);
        return;
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        char *slash;
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL && (size_t)(slash - self) + sizeof("/proviso-prover") <= len) {
            memcpy(out, self, (size_t)(slash - self));
            memcpy(out + (slash - self), "/proviso-prover", sizeof("/proviso-prover"));
            if (access(out, X_OK) == 0) {
                return;
            }
        }
    }
    /* Installed side by side is the normal case; else the usual place. */
    snprintf(out, len, "%s/proviso-prover", BINDIR);
}

/* The --prover pool: each URL with its token (or the one token of all). */
static void add_provers(const struct options *o, struct advisor_pool *pool)
{
    char err[1024];

    for (unsigned i = 0; i < o->nprovers; i++) {
        const char *url = pv_args_nth(&o->args, "prover", i);
        const char *file =
            pv_args_nth(&o->args, "prover-token-file", o->nprover_tokens > 1 ? i : 0);
        struct httpd_token pt;
        char token[HTTPD_TOKEN_MAX + 1];
        pv_result r;

        if (!pv_ok(httpd_token_from_file(&pt, file, err, sizeof(err)))) {
            pv_fatal("prover token: %s", err);
        }
        memcpy(token, pt.buf, pt.len);
        token[pt.len] = '\0';
        httpd_token_free(&pt);
        r = advisor_pool_add(pool, NULL, url, token);
        OPENSSL_cleanse(token, sizeof(token));
        if (!pv_ok(r)) {
            pv_fatal("--prover %s: cannot add it to the pool", url);
        }
    }
    /* Those that do not answer yet start out of the pool (logged). */
    advisor_pool_check_now(pool);
    pv_log_info("prover pool: %u prover%s", o->nprovers, o->nprovers == 1 ? "" : "s");
}

/* docs/audit.md#state: the store must hold the state its chain implies -
 * a revision or a chunk status written around the advisor (sqlite3 on
 * advisor.db, a restored table) is refused before anything is served. */
static void check_state(struct store *st)
{
    struct timespec t0;
    struct timespec t1;
    size_t records = 0;
    size_t n = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!pv_ok(advisor_audit_check_state(st, &records, &n))) {
        pv_fatal("audit: cannot compare the store with its chain: %s", store_errmsg(st));
    }
    if (n > 0) {
        pv_fatal("audit: the store disagrees with its audit chain in %zu place%s (logged "
                 "above): it was changed without the advisor; refusing to start. Keep this "
                 "advisor.db for investigation (proviso audit export --data-dir), and restore the "
                 "data directory from a backup (docs/audit.md#state)",
                 n, n == 1 ? "" : "s");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pv_log_info("audit: the store agrees with its chain (%zu records read in %.1f ms)", records,
                (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* One chain, one signer: the key this advisor signs with must be the one
 * that signed the chain's newest record. Replicas on one database are
 * each given the same key (--audit-key-file); one that was not would fork
 * the chain's signatures, so it does not start. On SQLite without
 * --audit-key-file a replaced key is allowed, as before (docs/audit.md#key:
 * new records are signed by the new key), with a warning. */
static void check_signer(const struct options *o, struct store *st)
{
    char pub[AUDIT_PUB_B64_LEN];
    bool mismatch = false;
    int64_t seq = 0;

    if (!pv_ok(advisor_audit_check_signer(st, strncmp(o->store, "postgres", 8) == 0, &mismatch,
                                          &seq))) {
        pv_fatal("audit: cannot read the chain's head: %s", store_errmsg(st));
    }
    if (!mismatch) {
        return;
    }
    if (!pv_ok(audit_key_pub_b64(advisor_audit_key(), pub))) {
        snprintf(pub, sizeof(pub), "?");
    }
    if (o->audit_key_file != NULL || strncmp(o->store, "postgres", 8) == 0) {
        pv_fatal("audit: the chain's newest record (seq %lld) was signed by another key than "
                 "%s (public key %s); every replica on one store must be given the same key "
                 "(--audit-key-file); refusing to start",
                 (long long)seq, o->audit_key_file != NULL ? o->audit_key_file : "DIR/audit.key",
                 pub);
    }
    pv_log_warnx("audit: the chain's newest record (seq %lld) was signed by another key; new "
                 "records are signed by this one (public key %s)",
                 (long long)seq, pub);
}

/* The data directory remembers a store kept elsewhere (DIR/store.location,
 * what store_describe says of it: no password), so that an advisor started
 * on DIR without --store does not quietly begin on a new, empty SQLite
 * store beside the real one. */
#define STORE_MARK "store.location"

static void store_mark_check(const struct options *o)
{
    char path[4096];
    char db[4096];
    char *mark = NULL;
    size_t len = 0;
    char err[256];

    snprintf(path, sizeof(path), "%s/" STORE_MARK, o->data_dir);
    snprintf(db, sizeof(db), "%s/advisor.db", o->data_dir);
    if (o->store != o->data_dir || access(db, F_OK) == 0 ||
        !pv_ok(pv_file_read(path, 4096, false, &mark, &len, err, sizeof(err)))) {
        return;
    }
    mark[strcspn(mark, "\n")] = '\0';
    pv_fatal("%s: this data directory's store is %s; pass --store (or remove %s to start a "
             "new SQLite store here)",
             o->data_dir, mark, path);
}

static void store_mark_write(const struct options *o)
{
    char path[4096];
    char shown[512];
    FILE *f;

    if (o->store == o->data_dir || strncmp(o->store, "sqlite:", 7) == 0) {
        return;
    }
    snprintf(path, sizeof(path), "%s/" STORE_MARK, o->data_dir);
    store_describe(o->store, shown, sizeof(shown));
    f = fopen(path, "w");
    if (f == NULL || fprintf(f, "%s\n", shown) < 0 || fclose(f) != 0) {
        pv_log_warnx("%s: %s", path, strerror(errno));
    }
}

/* --export-audit: the records after 'since' and their blobs to stdout,
 * straight from the data directory (the advisor may be running). */
static int export_audit(const struct options *o)
{
    struct store *st = NULL;
    struct pv_dynbuf b;
    char err[1024];
    pv_result r;

    if (!pv_ok(advisor_audit_open(o->data_dir, o->audit_key_file, err, sizeof(err)))) {
        pv_fatal("audit key: %s", err);
    }
    store_mark_check(o);
    if (o->store == o->data_dir) {
        /* An export never creates a store: an empty new advisor.db would
         * export an empty chain (an advisor on PostgreSQL keeps none here). */
        char path[4096];
        snprintf(path, sizeof(path), "%s/advisor.db", o->data_dir);
        if (access(path, F_OK) != 0) {
            pv_fatal("%s: no store here (an advisor on PostgreSQL: add --store URL)", path);
        }
    }
    if (!pv_ok(store_open(o->store, &st, err, sizeof(err)))) {
        pv_fatal("store: %s", err);
    }
    {
        size_t n = 0;
        if (!pv_ok(advisor_audit_seal_legacy(st, &n))) {
            pv_fatal("audit: cannot seal the events written before the chain: %s",
                     store_errmsg(st));
        }
    }
    pv_dynbuf_init(&b, AUDIT_FILE_MAX);
    r = advisor_audit_export(st, (int64_t)o->since, &b, err, sizeof(err));
    store_close(st);
    advisor_audit_close();
    if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        pv_log_warnx("export: %s", err);
        return r.err == PV_ERR_NOTFOUND ? 2 : 1;
    }
    if (fwrite(b.buf, 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
        pv_dynbuf_free(&b);
        pv_log_warnx("export: cannot write to stdout");
        return 1;
    }
    pv_dynbuf_free(&b);
    return 0;
}

/* long: the process's start and stop sequence, each step a
 * guarded call in the order it must happen; nothing in it is reused. */
int main(int argc, char **argv)
{
    struct options o;
    struct advisor a;
    struct store *st = NULL;
    struct advisor_child *child = NULL;
    struct httpd_service svc;
    struct httpd *http;
    sigset_t sigs;
    int sig;
    char err[1024];
    pv_result res;
    bool clean;

    pv_log_set_prefix("proviso-advisor");
    /* the prover child must not report ready in the advisor's name */
    pv_notify_claim();
    parse_args(argc, argv, &o);
    if (o.export_audit) {
        return export_audit(&o);
    }
    memset(&a, 0, sizeof(a));
    config_defaults(&a.cfg);
    if (o.config != NULL) {
        config_load(&a.cfg, o.config);
    }
    if (a.cfg.policy_longpolls > advisor_policy_longpolls_max(a.cfg.http.workers)) {
        /* docs/advisor.md#wait: the rest keep their budgets and one worker */
        pv_fatal("%s: policy_longpolls %u is more than %u workers allow (at most %u: W - W/4 - "
                 "W/8 - 1); raise workers",
                 o.config, a.cfg.policy_longpolls, a.cfg.http.workers,
                 advisor_policy_longpolls_max(a.cfg.http.workers));
    }
    if (o.srv.have_port) {
        a.cfg.http.port = o.srv.port;
    }
    if (o.bind != NULL) {
        if (strlen(o.bind) >= sizeof(a.cfg.http.bind)) {
            pv_fatal("--bind: address too long");
        }
        snprintf(a.cfg.http.bind, sizeof(a.cfg.http.bind), "%s", o.bind);
    }
    a.cfg.test_allow_loopback = o.allow_loopback;
    if (strlen(o.data_dir) >= sizeof(a.cfg.data_dir)) {
        pv_fatal("--data-dir: path too long");
    }
    snprintf(a.cfg.data_dir, sizeof(a.cfg.data_dir), "%s", o.data_dir);
    if (mkdir(o.data_dir, 0700) != 0 && errno != EEXIST) {
        pv_fatal("%s: %s", o.data_dir, strerror(errno));
    }
    store_mark_check(&o);
    if (o.allow_loopback) {
        pv_log_warnx("--test-allow-loopback: proposals may name 127.0.0.1; never use this in "
                     "production");
    }

    httpd_signals_block(&sigs);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        pv_fatal("cannot initialise libcurl");
    }

    /* Open once on the main thread: migrations run here, before any worker. */
    if (strlen(o.store) >= sizeof(a.cfg.store)) {
        pv_fatal("--store: too long");
    }
    snprintf(a.cfg.store, sizeof(a.cfg.store), "%s", o.store);
    store_set_connections(a.cfg.store_connections, STORE_PG_POOL_WAIT_MS);
    if (!pv_ok(store_open(o.store, &st, err, sizeof(err)))) {
        pv_fatal("store: %s", err);
    }
    store_mark_write(&o);
    err[0] = '\0';
    res = advisor_audit_open(o.data_dir, o.audit_key_file, err, sizeof(err));
    if (!pv_ok(res)) {
        pv_fatal("audit key: %s", err[0] != '\0' ? err : pv_strerror(res.err));
    }
    check_signer(&o, st);
    if (o.no_chain) {
        pv_log_warnx("--test-no-audit-chain: events are not sealed and cannot be exported; "
                     "for measurements only, never in production");
        advisor_audit_test_unsealed();
    } else {
        size_t n = 0;
        if (!pv_ok(advisor_audit_seal_legacy(st, &n))) {
            pv_fatal("audit: cannot seal the events written before the chain: %s",
                     store_errmsg(st));
        }
        if (n > 0) {
            pv_log_info("audit: sealed %zu events written before the chain (marked legacy)", n);
        }
        check_state(st);
    }
    a.tokens = advisor_tokens_new();
    a.pool = advisor_pool_new();
    if (a.pool == NULL) {
        pv_fatal("prover pool: %s", pv_strerror(PV_ERR_NOMEM));
    }
    pthread_mutex_init(&a.change_mu, NULL);
    pthread_cond_init(&a.change_cv, NULL);
    for (size_t i = 0; i < ADVISOR_LOCK_STRIPES; i++) {
        pthread_mutex_init(&a.stripes[i], NULL);
    }
    if (a.tokens == NULL) {
        pv_fatal("tokens: %s", pv_strerror(PV_ERR_NOMEM));
    }
    res = store_sandbox_each(st, load_sandbox_token, &a);
    if (!pv_ok(res)) {
        pv_fatal("store: cannot read the sandboxes: %s",
                 res.err == PV_ERR_NOMEM ? pv_strerror(res.err) : store_errmsg(st));
    }
    store_close(st);
    a.group = store_group_open(o.store, err, sizeof(err));
    if (a.group == NULL) {
        pv_fatal("store: %s", err);
    }
    a.listen = advisor_listen_start(&a, err, sizeof(err));
    if (a.listen == NULL && err[0] != '\0') {
        pv_fatal("store: the change notes' listener: %s", err);
    }

    if (!pv_ok(httpd_token_load(&a.admin, o.token_file, o.srv.have_fd ? o.srv.token_fd : -1,
                                o.data_dir, err, sizeof(err)))) {
        pv_fatal("token: %s", err);
    }

    if (o.nprovers > 0) {
        add_provers(&o, a.pool);
    } else {
        char exe[PATH_MAX];
        prover_exe(&o, exe, sizeof(exe));
        child = advisor_child_start(&a, exe, err, sizeof(err));
        if (child == NULL) {
            pv_fatal("prover: %s", err);
        }
    }
    res = advisor_pool_start(a.pool);
    if (!pv_ok(res)) {
        advisor_child_stop(child, a.cfg.grace_ms);
        pv_fatal("prover pool: cannot start its health checks: %s", pv_strerror(res.err));
    }

    pv_errno = PV_OK;
    a.recent = advisor_recent_new();
    a.mapper = a.recent != NULL ? advisor_mapper_new(&a, a.cfg.mapper_flush_ms, true) : NULL;
    if (a.mapper == NULL) {
        advisor_child_stop(child, a.cfg.grace_ms);
        pv_fatal("cannot start the mapper: %s",
                 pv_strerror(pv_errno != PV_OK ? pv_errno : PV_ERR_INTERNAL));
    }
    memset(&svc, 0, sizeof(svc));
    svc.name = "advisor";
    svc.routes = advisor_routes(&svc.nroutes);
    svc.ctx = &a;
    svc.worker_new = worker_new;
    svc.worker_free = worker_free;
    svc.handle = advisor_handle;
    svc.authorize = authorize;
    svc.completed = completed;
    svc.rejected = rejected;
    a.metrics = httpd_metrics_new("proviso_advisor", svc.routes, svc.nroutes);
    if (a.metrics == NULL) {
        advisor_child_stop(child, a.cfg.grace_ms);
        pv_fatal("metrics: %s", pv_strerror(PV_ERR_NOMEM));
    }
    http = httpd_start(&svc, &a.cfg.http, &a.admin, err, sizeof(err));
    if (http == NULL) {
        advisor_child_stop(child, a.cfg.grace_ms);
        pv_fatal("%s", err);
    }
    if (a.admin.generated_path != NULL) {
        pv_log_info("admin token file: %s (mode 0600, removed on exit)", a.admin.generated_path);
    }
    if (o.store == o.data_dir) {
        pv_log_info("store: %s/advisor.db", o.data_dir);
    } else {
        char shown[512];
        store_describe(o.store, shown, sizeof(shown));
        pv_log_info("store: %s", shown);
    }
    /* Scripts wait for this line. */
    pv_log_info("listening on %s port %u", a.cfg.http.bind, (unsigned)httpd_port(http));
    if (!pv_ok(pv_notify_ready())) {
        pv_log_warnx("cannot tell systemd we are ready ($NOTIFY_SOCKET): %s", strerror(errno));
    }

    sig = httpd_signals_wait(&sigs);
    pv_log_info("signal %d: draining", sig);
    pthread_mutex_lock(&a.change_mu);
    a.stopping = true;
    pthread_cond_broadcast(&a.change_cv);
    pthread_mutex_unlock(&a.change_mu);
    clean = httpd_drain(http, a.cfg.grace_ms, a.cfg.prover_timeout_ms + 2000u);
    if (!httpd_free(http)) {
        pv_log_warnx("a request is still running; exiting without cleanup");
        advisor_child_stop(child, 2000);
        _exit(0);
    }
    advisor_mapper_free(a.mapper);
    advisor_recent_free(a.recent);
    advisor_listen_stop(a.listen);
    httpd_metrics_free(a.metrics);
    advisor_child_stop(child, a.cfg.grace_ms);
    store_group_close(a.group);
    advisor_audit_close();
    httpd_token_free(&a.admin);
    advisor_tokens_free(a.tokens);
    advisor_pool_free(a.pool);
    curl_global_cleanup();
    pv_log_info("stopped%s", clean ? "" : " (some requests were cut short)");
    return 0;
}
