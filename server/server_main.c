/* SPDX-License-Identifier: Apache-2.0 */
/* server_main.c - the proviso-prover process: options, start-up, signals, drain
 *
 *   proviso-prover [--port N] [--bind ADDR] [--token-file FILE | --token-fd N]
 *                  [--config FILE]
 *
 * The process contract every proviso server follows: the token never comes
 * from argv or the environment; without a token option a per-run token is
 * generated into a 0600 file whose path is logged; the listener binds
 * 127.0.0.1 unless told otherwise; GET /healthz answers once the listener is
 * up; SIGTERM (or SIGINT) stops accepting, lets in-flight requests finish
 * within the grace period and exits 0. Signals are taken synchronously with
 * sigwait() on the main thread (blocked everywhere else), so no work happens
 * in a signal handler.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pv_args.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "prover/prover.h"
#include "server/server.h"

#define CONFIG_MAX_BYTES (64u * 1024u)

struct options {
    const char *config;
    const char *token_file;
    const char *bind;
    bool have_port;
    uint16_t port;
    bool have_fd;
    int token_fd;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: proviso-prover [--port N] [--bind ADDR] [--token-file FILE | --token-fd N]\n"
            "                      [--config FILE]\n"
            "\n"
            "  --port N          listen port (default %u; 0 picks a free port)\n"
            "  --bind ADDR       listen address (default 127.0.0.1)\n"
            "  --token-file FILE read the bearer token from FILE\n"
            "  --token-fd N      read the bearer token from inherited descriptor N\n"
            "  --config FILE     YAML or JSON settings (docs/operations.md)\n"
            "\n"
            "Without a token option a random token is written to a new 0600 file\n"
            "whose path is logged. SIGTERM drains in-flight requests and exits 0.\n",
            (unsigned)SERVER_DEFAULT_PORT);
}

/* "--name VALUE" or "--name=VALUE". */
static void parse_args(int argc, char **argv, struct options *o)
{
    enum opt_id { OPT_PORT, OPT_BIND, OPT_TOKEN_FILE, OPT_TOKEN_FD, OPT_CONFIG };
    static const struct {
        const char *name;
        enum opt_id id;
    } value_opts[] = {
        {"--port", OPT_PORT},         {"--bind", OPT_BIND},     {"--token-file", OPT_TOKEN_FILE},
        {"--token-fd", OPT_TOKEN_FD}, {"--config", OPT_CONFIG},
    };

    memset(o, 0, sizeof(*o));
    o->token_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        size_t k;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("proviso-prover %s\n", PACKAGE_VERSION);
            exit(0);
        }
        if (strncmp(argv[i], "--token", 7) == 0 && (argv[i][7] == '\0' || argv[i][7] == '=')) {
            pv_fatal("--token is not accepted: a token on the command line leaks through "
                     "/proc; use --token-file or --token-fd");
        }
        v = NULL;
        k = 0;
        while (v == NULL && k < PV_ARRAY_LEN(value_opts)) {
            v = pv_opt_value(argc, argv, &i, value_opts[k++].name);
        }
        if (v == NULL) {
            usage(stderr);
            pv_fatal("unknown argument '%s'", argv[i]);
        }
        switch (value_opts[k - 1].id) {
        case OPT_PORT:
            o->have_port = true;
            o->port = (uint16_t)pv_opt_number(v, 65535, "--port");
            break;
        case OPT_BIND:
            o->bind = v;
            break;
        case OPT_TOKEN_FILE:
            o->token_file = v;
            break;
        case OPT_TOKEN_FD:
            o->have_fd = true;
            o->token_fd = (int)pv_opt_number(v, 1u << 20, "--token-fd");
            break;
        case OPT_CONFIG:
            o->config = v;
            break;
        }
    }
    if (o->token_file != NULL && o->have_fd) {
        pv_fatal("use one of --token-file and --token-fd");
    }
}

/* Read 'path' (at most CONFIG_MAX_BYTES) into 'b'; a message on failure. */
static const char *read_config(const char *path, struct pv_dynbuf *b)
{
    char chunk[4096];
    size_t n;
    bool big = false;
    FILE *f = fopen(path, "rb");

    pv_dynbuf_init(b, CONFIG_MAX_BYTES);
    if (f == NULL) {
        return "cannot open";
    }
    n = fread(chunk, 1, sizeof(chunk), f);
    while (!big && n > 0) {
        big = !pv_ok(pv_dynbuf_add(b, chunk, n));
        n = fread(chunk, 1, sizeof(chunk), f);
    }
    fclose(f);
    return big ? "larger than 64 KiB" : NULL;
}

static void load_config(const struct options *o, struct server_config *cfg)
{
    char err[512];

    server_config_defaults(cfg);
    if (o->config != NULL) {
        struct pv_dynbuf b;
        const char *why = read_config(o->config, &b);
        pv_result r;
        if (why != NULL) {
            pv_fatal("%s: %s", o->config, why);
        }
        r = server_config_load(cfg, o->config, b.buf != NULL ? b.buf : "", b.len, err,
                               sizeof(err));
        pv_dynbuf_free(&b);
        if (!pv_ok(r)) {
            pv_fatal("%s", err);
        }
    }
    if (o->have_port) {
        cfg->port = o->port;
    }
    if (o->bind != NULL) {
        if (strlen(o->bind) >= sizeof(cfg->bind)) {
            pv_fatal("--bind: address too long");
        }
        snprintf(cfg->bind, sizeof(cfg->bind), "%s", o->bind);
    }
    if (!pv_ok(server_config_check(cfg, err, sizeof(err)))) {
        pv_fatal("%s", err);
    }
}

static void load_token(const struct options *o, struct httpd_token *tok)
{
    char err[512];
    pv_result r;

    if (o->token_file != NULL) {
        r = httpd_token_from_file(tok, o->token_file, err, sizeof(err));
    } else if (o->have_fd) {
        r = httpd_token_from_fd(tok, o->token_fd, err, sizeof(err));
    } else {
        r = httpd_token_generate(tok, NULL, err, sizeof(err));
    }
    if (!pv_ok(r)) {
        pv_fatal("token: %s", err);
    }
}

int main(int argc, char **argv)
{
    struct options o;
    struct server_config cfg;
    struct httpd_token tok;
    struct server_ctx *ctx = NULL;
    struct server_http *http;
    sigset_t sigs;
    int sig = 0;
    char err[512];
    char host[80];
    bool clean;

    pv_log_set_prefix("proviso-prover");
    parse_args(argc, argv, &o);
    load_config(&o, &cfg);

    /* Before any thread exists: every thread inherits the mask. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    load_token(&o, &tok);
    if (!pv_ok(server_ctx_new(&cfg, &ctx))) {
        httpd_token_free(&tok);
        pv_fatal("cannot load the binary registry or build the API description");
    }
    http = server_http_start(ctx, &tok, err, sizeof(err));
    if (http == NULL) {
        server_ctx_free(ctx);
        httpd_token_free(&tok);
        pv_fatal("%s", err);
    }
    snprintf(host, sizeof(host), strchr(cfg.bind, ':') != NULL ? "[%s]" : "%s", cfg.bind);
    if (tok.generated_path != NULL) {
        pv_log_info("token file: %s (mode 0600, removed on exit)", tok.generated_path);
    }
    /* Scripts wait for this line: what they need is logged before it. */
    pv_log_info("listening on http://%s:%u (workers %u, body limit %zu bytes, timeout %u ms, "
                "max %u ms)",
                host, (unsigned)server_http_port(http), server_http_workers(http), cfg.body_limit,
                cfg.timeout_ms, cfg.max_timeout_ms);
    if (tok.generated_path != NULL || o.token_file != NULL) {
        pv_log_info("try: curl -s -H \"Authorization: Bearer $(cat %s)\" "
                    "http://%s:%u/openapi.json",
                    tok.generated_path != NULL ? tok.generated_path : o.token_file, host,
                    (unsigned)server_http_port(http));
    }
    while (sig != SIGTERM && sig != SIGINT) {
        if (sigwait(&sigs, &sig) != 0) {
            sig = 0;
        }
    }
    pv_log_info("signal %d: draining (grace %u ms)", sig, cfg.grace_ms);
    clean = server_http_drain(http, cfg.grace_ms);
    if (!server_http_free(http)) {
        /* A worker is stuck past every bound: its state cannot be freed. */
        pv_log_errorx("stopped without cleanup: a worker is still busy");
        _exit(0);
    }
    server_ctx_free(ctx);
    httpd_token_free(&tok);
    prover_finalize();
    pv_log_info("stopped%s", clean ? "" : " (some requests did not finish in the grace period)");
    return 0;
}
