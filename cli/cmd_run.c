/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_run.c - `proviso run`: host-side tool servers for a sandbox
 *
 *   proviso run --server NAME=CMD [--server NAME=CMD ...] [--host ADDR]
 *               [--host-name NAME] [--binary PATH ...] [--policy-out FILE]
 *               [--advisor URL --token-file FILE --sandbox NAME]
 *               [--health-timeout MS] [--grace MS] [-- COMMAND [ARG...]]
 *
 * The orchestrator of docs/advisor.md#tools. Every server is started under
 * one process contract, whatever its language: `CMD --port P --token-file
 * F` (CMD is parsed by /bin/sh, so it may carry its own arguments), in a process
 * group of its own, on a free port of --host; F holds this run's bearer
 * token (32 random bytes, hex, mode 0600, never on a command line). It is
 * ready when GET /healthz answers 200 within --health-timeout. Its OpenAPI
 * document is read from GET /openapi.json. Then:
 *   - the minimal L7 policy that reaches the servers is written to
 *     --policy-out: one rule per server (tool_NAME), the host and port,
 *     protocol rest, enforcement enforce, one allow per OpenAPI operation
 *     (method, path template with each {param} as `*`), scoped to the
 *     --binary paths (default /usr/bin/curl); a DNS --host-name gets the
 *     address as `allowed_ips` (/32 or /128);
 *   - with --sandbox, each server is registered with the advisor (PUT
 *     /v1/sandboxes/NAME/servers/SERVER), so the sandbox's proxy can list
 *     the operations its policy lets the caller reach (policy.local/v1/tools).
 * With a COMMAND after `--` it runs with PROVISO_TOOL_TOKEN_FILE and
 * PROVISO_TOOL_<NAME>_URL in its environment, and proviso run ends with it
 * (its exit status); without one, proviso run serves until SIGTERM or
 * SIGINT. Either way the servers are deregistered, sent SIGTERM, and killed
 * (SIGKILL) when they outlive --grace. A server that dies early ends the
 * run with status 1.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_dynbuf.h"
#include "hclient/hclient.h"
#include "model/model.h"

#define RUN_SERVERS_MAX 16
#define RUN_BINARIES_MAX 16
#define OPENAPI_MAX (4u * 1024u * 1024u)

static const struct pv_opt run_opts[] = {
    {"server", "NAME=CMD", "a tool server to start (repeat; NAME: a-z 0-9 - _)", PV_OPT_REPEAT},
    {"host", "ADDR", "the address the servers listen on and agents reach (default 127.0.0.1)", 0},
    {"host-name", "NAME", "the name agents use for it (default: the address)", 0},
    {"binary", "PATH", "a binary the policy lets call the tools (repeat; default /usr/bin/curl)",
     PV_OPT_REPEAT},
    {"policy-out", "FILE", "write the minimal policy that reaches the servers there", 0},
    {"advisor", "URL", "the advisor to register the servers with (default $PROVISO_ADVISOR)", 0},
    {"token-file", "FILE", "the admin token (default $PROVISO_TOKEN_FILE)", 0},
    {"sandbox", "NAME", "register the servers for this sandbox", 0},
    {"health-timeout", "MS", "how long a server may take to answer /healthz (default 10000)", 0},
    {"grace", "MS", "how long a server may take to exit after SIGTERM (default 5000)", 0},
};

static const struct pv_cmd run_cmd = {
    .prog = "proviso run",
    .synopsis = "--server NAME=CMD [--server NAME=CMD ...] [--host ADDR] [--host-name NAME]\n"
                "                   [--binary PATH ...] [--policy-out FILE]\n"
                "                   [--advisor URL --token-file FILE --sandbox NAME]\n"
                "                   [--health-timeout MS] [--grace MS] [-- COMMAND [ARG...]]",
    .summary = "Start host-side tool servers under one contract (CMD --port P --token-file F,\n"
               "GET /healthz, SIGTERM), write the minimal L7 policy that reaches their\n"
               "OpenAPI operations, register them with the advisor for a sandbox, then run\n"
               "COMMAND (or serve until SIGTERM) and stop them.",
    .opts = run_opts,
    .nopts = PV_ARRAY_LEN(run_opts),
    .example = "proviso run --server builder=./builder --server repos='python3 repos.py' \\\n"
               "    --policy-out tools.yaml --sandbox agent --token-file admin.token",
    .epilog = "exit: COMMAND's status, else 0 after SIGTERM/SIGINT; 1 a server failed to\n"
              "start or died; 2 usage or unreadable input; 3 the advisor failed",
};

struct server {
    char name[64];
    const char *cmd;
    uint16_t port;
    pid_t pid; /* 0 once reaped */
    int status;
    json_t *openapi;
};

struct run {
    struct server sv[RUN_SERVERS_MAX];
    size_t n;
    const char *host;
    const char *host_name;
    const char *bins[RUN_BINARIES_MAX];
    size_t nbins;
    unsigned health_ms;
    unsigned grace_ms;
    char dir[256];        /* the run's private directory */
    char token_file[300]; /* dir/token */
    char token[65];
    struct cli_http *adv; /* NULL without --sandbox */
    const char *sandbox;
    const char *policy_out;
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ===========================================================================
 * Options
 * ========================================================================= */

static bool name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
            return false;
        }
    }
    return true;
}

static int parse(int argc, char **argv, struct run *r, char ***cmd)
{
    struct pv_args pa;
    uint64_t health = 10000;
    uint64_t grace = 5000;
    struct model_ip ip;

    switch (pv_args_parse(&run_cmd, argc, argv, &pa)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return -1;
    case PV_ARGS_USAGE:
        return 2;
    }
    *cmd = pa.npos > 0 ? pa.pos : NULL;
    if (pa.npos > 0) {
        pa.pos[pa.npos] = NULL; /* argv is NULL-terminated past its operands */
    }
    if (pv_args_count(&pa, "server") == 0) {
        return pv_args_usage(&run_cmd, "at least one --server NAME=CMD is needed");
    }
    if (pv_args_count(&pa, "server") > RUN_SERVERS_MAX ||
        pv_args_count(&pa, "binary") > RUN_BINARIES_MAX) {
        return pv_args_usage(&run_cmd, "at most %d --server and %d --binary options",
                             RUN_SERVERS_MAX, RUN_BINARIES_MAX);
    }
    for (unsigned i = 0; i < pv_args_count(&pa, "server"); i++) {
        const char *v = pv_args_nth(&pa, "server", i);
        const char *eq = strchr(v, '=');
        if (eq == NULL || !name_ok(v, (size_t)(eq - v)) || eq[1] == '\0') {
            return pv_args_usage(&run_cmd, "--server '%s': expected NAME=CMD (NAME: a-z 0-9 - _)",
                                 v);
        }
        memcpy(r->sv[r->n].name, v, (size_t)(eq - v));
        r->sv[r->n].name[eq - v] = '\0';
        for (size_t k = 0; k < r->n; k++) {
            if (strcmp(r->sv[k].name, r->sv[r->n].name) == 0) {
                return pv_args_usage(&run_cmd, "--server %s given twice", r->sv[k].name);
            }
        }
        r->sv[r->n++].cmd = eq + 1;
    }
    for (unsigned i = 0; i < pv_args_count(&pa, "binary"); i++) {
        r->bins[r->nbins++] = pv_args_nth(&pa, "binary", i);
        if (r->bins[r->nbins - 1][0] != '/') {
            return pv_args_usage(&run_cmd, "--binary wants an absolute path");
        }
    }
    if (r->nbins == 0) {
        r->bins[r->nbins++] = "/usr/bin/curl";
    }
    r->host = pv_args_has(&pa, "host") ? pv_args_get(&pa, "host") : "127.0.0.1";
    if (!model_ip_parse(r->host, strlen(r->host), &ip) || !model_ip_is_v4(&ip)) {
        return pv_args_usage(&run_cmd, "--host wants an IPv4 address");
    }
    r->host_name = pv_args_has(&pa, "host-name") ? pv_args_get(&pa, "host-name") : r->host;
    if (strcmp(r->host_name, r->host) != 0 && model_ip_is_always_blocked(&ip)) {
        return pv_args_usage(&run_cmd, "--host-name needs a --host that allowed_ips may name "
                                       "(not loopback or link-local)");
    }
    if (!pv_args_number(&pa, "health-timeout", 1, 600000, &health) ||
        !pv_args_number(&pa, "grace", 0, 600000, &grace)) {
        return 2;
    }
    r->health_ms = (unsigned)health;
    r->grace_ms = (unsigned)grace;
    r->policy_out = pv_args_get(&pa, "policy-out");
    r->sandbox = pv_args_get(&pa, "sandbox");
    if (r->sandbox != NULL) {
        struct cli_adv a;
        int rc;
        memset(&a, 0, sizeof(a));
        a.opt[CLI_O_ADVISOR] = pv_args_get(&pa, "advisor");
        a.opt[CLI_O_TOKEN_FILE] = pv_args_get(&pa, "token-file");
        rc = cli_adv_connect(&a);
        if (rc != 0) {
            return rc;
        }
        r->adv = a.http;
    }
    return 0;
}

/* ===========================================================================
 * The process contract
 * ========================================================================= */

static bool make_dir_and_token(struct run *r)
{
    const char *tmp = getenv("TMPDIR");
    unsigned char rnd[32];
    int fd;

    snprintf(r->dir, sizeof(r->dir), "%s/proviso-run.XXXXXX",
             tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
    if (mkdtemp(r->dir) == NULL || RAND_bytes(rnd, (int)sizeof(rnd)) != 1) {
        fprintf(stderr, "proviso run: cannot prepare the run directory: %s\n", strerror(errno));
        return false;
    }
    for (size_t i = 0; i < sizeof(rnd); i++) {
        snprintf(r->token + 2 * i, 3, "%02x", rnd[i]);
    }
    snprintf(r->token_file, sizeof(r->token_file), "%s/token", r->dir);
    fd = open(r->token_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, r->token, 64) != 64 || close(fd) != 0) {
        fprintf(stderr, "proviso run: %s: %s\n", r->token_file, strerror(errno));
        return false;
    }
    return true;
}

/* A free TCP port on the host address (bound, read, released). */
static uint16_t free_port(const char *host)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uint16_t port = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    if (fd >= 0 && inet_pton(AF_INET, host, &sa.sin_addr) == 1 &&
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0) {
        port = ntohs(sa.sin_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

static pid_t start(struct run *r, struct server *s)
{
    char port[8];
    pid_t pid;

    snprintf(port, sizeof(port), "%u", (unsigned)s->port);
    pid = fork();
    if (pid == 0) {
        (void)setpgid(0, 0);
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        /* the shell parses CMD (quotes, arguments); the contract's
         * arguments follow it */
        char script[4200];
        snprintf(script, sizeof(script), "exec %s \"$@\"", s->cmd);
        execl("/bin/sh", "sh", "-c", script, "sh", "--port", port, "--token-file", r->token_file,
              (char *)NULL);
        _exit(127);
    }
    if (pid > 0) {
        (void)setpgid(pid, pid); /* either side may win the race */
    }
    return pid;
}

/* Reap 's' if it exited; true when it is gone. */
static bool reaped(struct server *s)
{
    if (s->pid > 0 && waitpid(s->pid, &s->status, WNOHANG) == s->pid) {
        s->pid = 0;
        return true;
    }
    return s->pid == 0;
}

/* GET http://host:port/path with the run's token; the status, the body into
 * 'b' (may be NULL: the answer is discarded). */
static long get(const struct run *r, const struct server *s, const char *path, long timeout_ms,
                struct pv_dynbuf *b)
{
    struct hclient *c = hclient_new();
    struct hclient_res res;
    char url[512];
    long status = 0;
    /* a GET either way (the contract's /healthz need not know HEAD) */
    struct hclient_req req = {
        .url = url,
        .bearer = r->token,
        .protocols = "http",
        .max_answer = b != NULL ? b->toobig : 0,
        .timeout_ms = timeout_ms,
        .no_proxy = true, /* never through a proxy */
    };

    if (c == NULL) {
        return 0;
    }
    snprintf(url, sizeof(url), "http://%s:%u%s", r->host, (unsigned)s->port, path);
    if (hclient_perform(c, &req, &res)) {
        status = res.status;
        if (b != NULL && !pv_ok(pv_dynbuf_add(b, res.body, res.len))) {
            status = 0;
        }
    }
    hclient_res_clear(&res);
    hclient_free(c);
    return status;
}

/* Poll /healthz until 200, the server's exit, or the timeout. */
static bool healthy(struct run *r, struct server *s)
{
    int64_t deadline = now_ms() + r->health_ms;

    while (now_ms() < deadline) {
        if (reaped(s)) {
            fprintf(stderr, "proviso run: server %s exited before it was ready (status %d)\n",
                    s->name, WIFEXITED(s->status) ? WEXITSTATUS(s->status) : 128);
            return false;
        }
        if (get(r, s, "/healthz", 1000, NULL) == 200) {
            return true;
        }
        nap_ms(50);
    }
    fprintf(stderr, "proviso run: server %s did not answer GET /healthz with 200 within %u ms\n",
            s->name, r->health_ms);
    return false;
}

static bool fetch_openapi(struct run *r, struct server *s)
{
    struct pv_dynbuf b;
    json_error_t je;
    long st;
    const char *v;

    pv_dynbuf_init(&b, OPENAPI_MAX);
    st = get(r, s, "/openapi.json", 10000, &b);
    s->openapi = st == 200 && b.buf != NULL ? json_loadb(b.buf, b.len, 0, &je) : NULL;
    pv_dynbuf_free(&b);
    v = json_string_value(json_object_get(s->openapi, "openapi"));
    if (v == NULL || strncmp(v, "3.", 2) != 0 ||
        !json_is_object(json_object_get(s->openapi, "paths"))) {
        fprintf(stderr,
                "proviso run: server %s: GET /openapi.json gave no OpenAPI 3 document "
                "(status %ld)\n",
                s->name, st);
        return false;
    }
    return true;
}

/* SIGTERM every live server's group, wait up to the grace, SIGKILL the rest. */
static void stop_all(struct run *r)
{
    int64_t deadline = now_ms() + r->grace_ms;
    bool left = false;

    for (size_t i = 0; i < r->n; i++) {
        if (!reaped(&r->sv[i])) {
            (void)kill(-r->sv[i].pid, SIGTERM);
            left = true;
        }
    }
    while (left && now_ms() < deadline) {
        left = false;
        for (size_t i = 0; i < r->n; i++) {
            left |= !reaped(&r->sv[i]);
        }
        if (left) {
            nap_ms(20);
        }
    }
    for (size_t i = 0; i < r->n; i++) {
        struct server *s = &r->sv[i];
        if (!reaped(s)) {
            (void)kill(-s->pid, SIGKILL);
            (void)waitpid(s->pid, &s->status, 0);
            s->pid = 0;
            fprintf(stderr, "proviso run: server %s killed (SIGKILL) after %u ms\n", s->name,
                    r->grace_ms);
        }
    }
}

/* ===========================================================================
 * The policy and the registration
 * ========================================================================= */

/* A path template as a rule glob: each {param} becomes a "*" segment. */
static void path_glob(const char *tmpl, char *out, size_t outlen)
{
    size_t o = 0;

    for (const char *p = tmpl; *p != '\0' && o + 2 < outlen; p++) {
        if (*p == '{') {
            const char *e = strchr(p, '}');
            if (e != NULL) {
                /* adjacent parameters ("{a}{b}") are one segment glob, never "**" */
                if (o == 0 || out[o - 1] != '*') {
                    out[o++] = '*';
                }
                p = e;
                continue;
            }
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

static json_t *server_rule(const struct run *r, const struct server *s)
{
    static const char *const methods[] = {"get",   "put",  "post",    "delete",
                                          "patch", "head", "options", NULL};
    json_t *rules = json_array();
    json_t *bins = json_array();
    json_t *ep;
    const char *path;
    json_t *item;

    json_object_foreach(json_object_get(s->openapi, "paths"), path, item)
    {
        char glob[1024];
        path_glob(path, glob, sizeof(glob));
        for (size_t m = 0; methods[m] != NULL; m++) {
            char up[16];
            size_t k = 0;
            if (!json_is_object(json_object_get(item, methods[m]))) {
                continue;
            }
            for (; methods[m][k] != '\0'; k++) {
                up[k] = (char)(methods[m][k] - 'a' + 'A');
            }
            up[k] = '\0';
            json_array_append_new(rules,
                                  json_pack("{s:{s:s,s:s}}", "allow", "method", up, "path", glob));
        }
    }
    for (size_t i = 0; i < r->nbins; i++) {
        json_array_append_new(bins, json_pack("{s:s}", "path", r->bins[i]));
    }
    ep = json_pack("{s:s,s:i,s:s,s:s,s:o}", "host", r->host_name, "port", (int)s->port, "protocol",
                   "rest", "enforcement", "enforce", "rules", rules);
    if (ep != NULL && strcmp(r->host_name, r->host) != 0) {
        char cidr[64];
        snprintf(cidr, sizeof(cidr), "%s/32", r->host);
        json_object_set_new(ep, "allowed_ips", json_pack("[s]", cidr));
    }
    return json_pack("{s:s,s:[o],s:o}", "name", "", "endpoints", ep, "binaries", bins);
}

/* The minimal policy, validated by the model and written canonically. */
static bool write_policy(const struct run *r, const char *out)
{
    json_t *pols = json_object();
    json_t *doc;
    char *text;
    struct model_diags *d = model_diags_new();
    struct model_policy *p = NULL;
    char *yaml = NULL;
    FILE *f;
    bool ok = false;

    for (size_t i = 0; i < r->n; i++) {
        char key[80];
        json_t *rule = server_rule(r, &r->sv[i]);
        snprintf(key, sizeof(key), "tool_%s", r->sv[i].name);
        json_object_set_new(rule, "name", json_string(key));
        json_object_set_new(pols, key, rule);
    }
    doc = json_pack("{s:i,s:o}", "version", 1, "network_policies", pols);
    text = doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text != NULL && d != NULL) {
        p = model_policy_load("generated policy", text, strlen(text), MODEL_FMT_JSON, d);
    }
    if (p == NULL) {
        fprintf(stderr, "proviso run: the generated policy is not valid: %s\n",
                d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0) : "out of memory");
        goto out;
    }
    yaml = model_policy_to_yaml(p, NULL);
    f = yaml != NULL ? fopen(out, "we") : NULL;
    if (f == NULL || fputs(yaml, f) == EOF || fclose(f) != 0) {
        fprintf(stderr, "proviso run: %s: %s\n", out, strerror(errno));
        goto out;
    }
    ok = true;
out:
    free(yaml);
    free(text);
    model_policy_free(p);
    model_diags_free(d);
    return ok;
}

static int advisor_put(struct run *r, const struct server *s, bool remove)
{
    char url[512];
    const char *segs[] = {"v1", "sandboxes", r->sandbox, "servers", s->name, NULL};
    char *path = cli_http_path(segs, NULL, NULL);
    json_t *body;
    struct cli_answer a;
    int rc;

    snprintf(url, sizeof(url), "http://%s:%u", r->host_name, (unsigned)s->port);
    body = remove ? NULL : json_pack("{s:s,s:O}", "base_url", url, "openapi", s->openapi);
    rc = path != NULL ? cli_http_call(r->adv, remove ? "DELETE" : "PUT", path, body, &a) : 3;
    if (rc != 0) {
        const char *d = json_string_value(json_object_get(a.body, "detail"));
        fprintf(stderr, "proviso run: the advisor %s server %s: %s\n",
                remove ? "did not remove" : "refused", s->name,
                d != NULL            ? d
                : a.error[0] != '\0' ? a.error
                                     : "failed");
    }
    cli_answer_clear(&a);
    json_decref(body);
    free(path);
    return rc;
}

/* ===========================================================================
 * The run
 * ========================================================================= */

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
    stop_sig = sig;
}

/* COMMAND's environment: the token file and each server's URL. */
static void set_env(const struct run *r)
{
    (void)setenv("PROVISO_TOOL_TOKEN_FILE", r->token_file, 1);
    for (size_t i = 0; i < r->n; i++) {
        char key[96];
        char url[512];
        size_t k = 0;
        snprintf(key, sizeof(key), "PROVISO_TOOL_");
        k = strlen(key);
        for (const char *p = r->sv[i].name; *p != '\0' && k + 5 < sizeof(key); p++) {
            key[k++] = *p == '-' ? '_' : (*p >= 'a' && *p <= 'z') ? (char)(*p - 32) : *p;
        }
        memcpy(key + k, "_URL", 5);
        snprintf(url, sizeof(url), "http://%s:%u", r->host_name, (unsigned)r->sv[i].port);
        (void)setenv(key, url, 1);
    }
}

/* Serve until a signal, a server's death, or COMMAND's end: its status. */
static int serve(struct run *r, char **cmd)
{
    pid_t child = 0;
    int status = 0;

    if (cmd != NULL) {
        child = fork();
        if (child == 0) {
            signal(SIGTERM, SIG_DFL);
            signal(SIGINT, SIG_DFL);
            (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
            execvp(cmd[0], cmd);
            fprintf(stderr, "proviso run: %s: %s\n", cmd[0], strerror(errno));
            _exit(127);
        }
        if (child < 0) {
            fprintf(stderr, "proviso run: fork: %s\n", strerror(errno));
            return 1;
        }
    }
    for (;;) {
        if (stop_sig != 0) {
            if (child > 0) {
                (void)kill(child, SIGTERM);
                (void)waitpid(child, &status, 0);
            }
            return 0;
        }
        if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        for (size_t i = 0; i < r->n; i++) {
            if (reaped(&r->sv[i])) {
                fprintf(stderr, "proviso run: server %s died (status %d): stopping\n",
                        r->sv[i].name,
                        WIFEXITED(r->sv[i].status) ? WEXITSTATUS(r->sv[i].status) : 128);
                if (child > 0) {
                    (void)kill(child, SIGTERM);
                    (void)waitpid(child, &status, 0);
                }
                return 1;
            }
        }
        nap_ms(50);
    }
}

int cli_run(int argc, char **argv)
{
    struct run *r = pv_calloc(1, sizeof(*r));
    char **cmd = NULL;
    const char *policy_out;
    struct sigaction sa;
    size_t registered = 0;
    int rc;

    if (r == NULL) {
        fprintf(stderr, "proviso run: out of memory\n");
        return 2;
    }
    rc = parse(argc, argv, r, &cmd);
    if (rc != 0) {
        cli_http_free(r->adv);
        free(r);
        return rc < 0 ? 0 : rc;
    }
    policy_out = r->policy_out;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    rc = make_dir_and_token(r) ? 0 : 1;
    for (size_t i = 0; rc == 0 && i < r->n; i++) {
        struct server *s = &r->sv[i];
        s->port = free_port(r->host);
        s->pid = s->port != 0 ? start(r, s) : -1;
        if (s->pid <= 0) {
            fprintf(stderr, "proviso run: cannot start server %s\n", s->name);
            s->pid = 0;
            rc = 1;
        } else if (!healthy(r, s) || !fetch_openapi(r, s)) {
            rc = 1;
        } else {
            fprintf(stderr, "proviso run: server %s ready at http://%s:%u (pid %ld)\n", s->name,
                    r->host_name, (unsigned)s->port, (long)s->pid);
        }
    }
    if (rc == 0 && policy_out != NULL && !write_policy(r, policy_out)) {
        rc = 2;
    }
    for (size_t i = 0; rc == 0 && r->adv != NULL && i < r->n; i++) {
        rc = advisor_put(r, &r->sv[i], false) == 0 ? 0 : 3;
        registered += rc == 0;
    }
    if (rc == 0) {
        set_env(r);
        fprintf(stderr, "proviso run: %zu server%s ready; token file %s%s%s\n", r->n,
                r->n == 1 ? "" : "s", r->token_file, policy_out != NULL ? "; policy " : "",
                policy_out != NULL ? policy_out : "");
        rc = serve(r, cmd);
    }
    for (size_t i = 0; i < registered; i++) {
        (void)advisor_put(r, &r->sv[i], true);
    }
    stop_all(r);
    for (size_t i = 0; i < r->n; i++) {
        json_decref(r->sv[i].openapi);
    }
    (void)unlink(r->token_file);
    (void)rmdir(r->dir);
    cli_http_free(r->adv);
    OPENSSL_cleanse(r->token, sizeof(r->token));
    free(r);
    return rc;
}
