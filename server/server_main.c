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

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pv_args.h"
#include "common/pv_file.h"
#include "common/pv_log.h"
#include "common/pv_notify.h"
#include "prover/prover.h"
#include "server/server.h"

#define CONFIG_MAX_BYTES (64u * 1024u)

struct options {
    const char *config;
    const char *token_file;
    const char *bind;
    struct pv_server_opts srv; /* --port, --token-fd */
};

static const struct pv_opt prover_opts[] = {
    {"port", "N", "listen port (default " PV_STR(SERVER_DEFAULT_PORT) "; 0 picks a free port)", 0},
    {"bind", "ADDR", "listen address (default 127.0.0.1)", 0},
    {"token-file", "FILE", "read the bearer token from FILE", 0},
    {"token-fd", "N", "read the bearer token from inherited descriptor N", 0},
    {"config", "FILE", "YAML or JSON settings (docs/operations.md)", 0},
    {"token", "TOKEN",
     "a token on the command line leaks through /proc; use --token-file or --token-fd",
     PV_OPT_REFUSE},
};

static const struct pv_cmd prover_cmd = {
    .prog = "proviso-prover",
    .synopsis = "[--port N] [--bind ADDR] [--token-file FILE | --token-fd N]\n"
                "                      [--config FILE]",
    .summary = "The prover HTTP service: proves what a policy change grants (docs/api.md).\n"
               "Without a token option a random token is written to a new 0600 file\n"
               "whose path is logged. SIGTERM drains in-flight requests and exits 0.",
    .opts = prover_opts,
    .nopts = PV_ARRAY_LEN(prover_opts),
    .example = "proviso-prover --port 8787 --token-file /etc/proviso/prover.token",
    .epilog = "exit: 0 after SIGTERM, 2 on a usage or start-up error",
    .version = "proviso-prover " PACKAGE_VERSION,
    .last_wins = true,
};

static void parse_args(int argc, char **argv, struct options *o)
{
    struct pv_args a;

    memset(o, 0, sizeof(*o));
    pv_args_server(&prover_cmd, argc, argv, &a, &o->srv);
    o->bind = pv_args_get(&a, "bind");
    o->token_file = pv_args_get(&a, "token-file");
    o->config = pv_args_get(&a, "config");
    if (o->token_file != NULL && o->srv.have_fd) {
        exit(pv_args_usage(&prover_cmd, "use one of --token-file and --token-fd"));
    }
}

static void load_config(const struct options *o, struct server_config *cfg)
{
    char err[512];

    server_config_defaults(cfg);
    if (o->config != NULL) {
        char *buf = NULL;
        size_t len = 0;
        pv_result r;
        if (!pv_ok(
                pv_file_read(o->config, CONFIG_MAX_BYTES, false, &buf, &len, err, sizeof(err)))) {
            pv_fatal("%s", err);
        }
        r = server_config_load(cfg, o->config, buf, len, err, sizeof(err));
        free(buf);
        if (!pv_ok(r)) {
            pv_fatal("%s", err);
        }
    }
    if (o->srv.have_port) {
        cfg->port = o->srv.port;
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

    if (!pv_ok(httpd_token_load(tok, o->token_file, o->srv.have_fd ? o->srv.token_fd : -1, NULL,
                                err, sizeof(err)))) {
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
    int sig;
    char err[512];
    char host[80];
    bool clean;
    pv_result res;

    pv_log_set_prefix("proviso-prover");
    parse_args(argc, argv, &o);
    load_config(&o, &cfg);

    /* Before any thread exists: every thread inherits the mask. */
    httpd_signals_block(&sigs);

    load_token(&o, &tok);
    res = server_ctx_new(&cfg, &ctx);
    if (!pv_ok(res)) {
        httpd_token_free(&tok);
        pv_fatal("cannot load the binary registry or build the API description: %s",
                 pv_strerror(res.err));
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
    if (!pv_ok(pv_notify_ready())) {
        pv_log_warnx("cannot tell systemd we are ready ($NOTIFY_SOCKET): %s", strerror(errno));
    }
    if (tok.generated_path != NULL || o.token_file != NULL) {
        pv_log_info("try: curl -s -H \"Authorization: Bearer $(cat %s)\" "
                    "http://%s:%u/openapi.json",
                    tok.generated_path != NULL ? tok.generated_path : o.token_file, host,
                    (unsigned)server_http_port(http));
    }
    sig = httpd_signals_wait(&sigs);
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
