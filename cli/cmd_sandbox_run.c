/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_sandbox_run.c - `proviso sandbox run`: a command whose only way out
 * is the proxy (docs/sandbox.md).
 *
 *   proviso sandbox run --policy FILE [--credentials FILE] [OPTIONS] -- COMMAND [ARG...]
 *   proviso sandbox run NAME --sandbox-token FILE [OPTIONS] -- COMMAND [ARG...]
 *   proviso sandbox run NAME --policy FILE [--token-file ADMIN] [OPTIONS] -- COMMAND [ARG...]
 *
 * Standalone, the sandbox's proxy enforces FILE (and reloads it when it
 * changes). With NAME it follows the advisor's sandbox NAME: with
 * --sandbox-token, an existing sandbox whose token that file holds; with
 * --policy and the admin token, a sandbox made for this run with FILE as
 * its base, and deleted when the run ends, however it ends (a guardian
 * process deletes it once proviso's end closes its pipe, SIGKILL
 * included). The filesystem_policy, landlock and process sections come
 * from the policy the sandbox starts with (FILE, or the advisor's effective
 * policy). The exit status is the command's (sandbox.h).
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_file.h"
#include "common/pv_token.h"
#include "model/model.h"
#include "sandbox/sandbox.h"

static const struct pv_opt sbrun_opts[] = {
    {"policy", "FILE", "the policy (standalone), or the base of a sandbox made for this run", 0},
    {"credentials", "FILE", "the credentials store for placeholders (standalone)", 0},
    {"upstream-ca", "FILE", "the proxy trusts only this CA for upstreams (a private CA)", 0},
    {"sandbox-token", "FILE", "NAME's own token (an existing advisor sandbox)", 0},
    {"advisor", "URL", "the advisor (default $PROVISO_ADVISOR, else " DEFAULT_ADVISOR ")", 0},
    {"token-file", "FILE", "the admin token, to make NAME (default $PROVISO_TOKEN_FILE)", 0},
    {"env", "NAME[=VALUE]", "pass NAME (or set it) in the command's environment (repeat)",
     PV_OPT_REPEAT},
    {"log", "FILE", "the proxy's decision log (default: standard error)", 0},
    {"workdir", "DIR", "the command's working directory (default: the current one)", 0},
    {"test-allow-loopback", NULL, "tests only: let the proxy reach the host's loopback", 0},
    {"verbose", NULL, "say which processes serve the sandbox", 0},
    {"proxy-program", "PATH", "the proviso-proxy to run (default: beside proviso)", PV_OPT_HIDDEN},
};

static const struct pv_cmd sbrun_cmd = {
    .prog = "proviso sandbox run",
    .synopsis = "[NAME] (--policy FILE | --sandbox-token FILE) [--credentials FILE]\n"
                "                           [--env NAME[=VALUE] ...] [--log FILE] [--workdir DIR]\n"
                "                           [--test-allow-loopback] -- COMMAND [ARG...]",
    .summary = "Run COMMAND in a sandbox whose only way out is a proviso proxy: its own\n"
               "network namespace (loopback only, the proxy at 127.0.0.1:3128), PID namespace\n"
               "and root holding only the policy's filesystem paths, under Landlock, as the\n"
               "policy's process user with no_new_privs. Needs root. Exits with COMMAND's\n"
               "status; 125 when the sandbox could not be set up or its proxy failed.",
    .opts = sbrun_opts,
    .nopts = PV_ARRAY_LEN(sbrun_opts),
    .example =
        "proviso sandbox run --policy examples/policy.yaml -- curl -sI https://api.github.com/\n"
        "proviso sandbox run demo --sandbox-token demo.token -- claude",
    .epilog = "docs/sandbox.md: what the sandbox guarantees and what it does not.",
};

/* The guardian of a sandbox made for this run: it deletes it when proviso
 * ends, however it ends (its pipe closes then). */
static pid_t guard(struct cli_http *admin, const char *name, int *pipe_w)
{
    int p[2];
    pid_t pid;

    if (pipe(p) != 0) {
        return -1;
    }
    pid = fork();
    if (pid != 0) {
        close(p[0]);
        *pipe_w = p[1];
        return pid;
    }
    close(p[1]);
    (void)setsid(); /* the terminal's Ctrl-C is for the command */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    {
        char c;
        while (read(p[0], &c, 1) > 0) {
        }
    }
    {
        const char *segs[] = {"v1", "sandboxes", name, NULL};
        char *path = cli_http_path(segs, NULL, NULL);
        struct cli_answer ans;
        int rc = path != NULL ? cli_http_call(admin, "DELETE", path, NULL, &ans) : 3;
        if (rc != 0) {
            fprintf(stderr, "proviso: sandbox run: could not delete sandbox %s at the end: %s\n",
                    name, ans.error[0] != '\0' ? ans.error : "the advisor refused");
        }
        cli_answer_clear(&ans);
        free(path);
        _exit(rc == 0 ? 0 : 1);
    }
}

static char *read_file_text(const char *path)
{
    size_t len = 0;
    char *buf = NULL;

    char err[PATH_MAX + 128];

    if (!pv_ok(pv_file_read(path, MODEL_MAX_POLICY_BYTES, false, &buf, &len, err, sizeof(err)))) {
        fprintf(stderr, "proviso: %s\n", err);
        return NULL;
    }
    return buf;
}

static struct model_policy *load_text(const char *file, const char *text)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    if (d == NULL) {
        return NULL;
    }
    p = model_policy_load(file, text, strlen(text), MODEL_FMT_AUTO, d);
    for (size_t i = 0; i < model_diags_count(d); i++) {
        fprintf(stderr, "%s\n", model_diags_line(d, i));
    }
    model_diags_free(d);
    return p;
}

/* Make NAME with FILE as its base: its token comes back (new string). */
static char *create(struct cli_http *admin, const char *name, const char *policy_path,
                    struct model_policy **out)
{
    static const char *const segs[] = {"v1", "sandboxes", NULL};
    char *text = read_file_text(policy_path);
    char *path = cli_http_path(segs, NULL, NULL);
    json_t *body = text != NULL ? json_pack("{s:s,s:s}", "name", name, "policy", text) : NULL;
    struct cli_answer ans;
    char *tok = NULL;
    int rc;

    *out = text != NULL ? load_text(policy_path, text) : NULL;
    if (*out == NULL || body == NULL || path == NULL) {
        goto out;
    }
    rc = cli_http_call(admin, "POST", path, body, &ans);
    if (rc != 0) {
        fprintf(stderr, "proviso: sandbox run: cannot make sandbox %s: %s%s\n", name, ans.error,
                ans.body != NULL ? cli_str(ans.body, "detail") : "");
    } else {
        const char *t = cli_str(ans.body, "token");
        tok = t[0] != '\0' ? pv_strdup(t) : NULL;
    }
    cli_answer_clear(&ans);
out:
    json_decref(body);
    free(path);
    free(text);
    return tok;
}

/* The effective policy of an existing NAME, read with its own token. */
static struct model_policy *fetch(const char *url, const char *name, const char *token_file)
{
    const char *segs[] = {"v1", "sandboxes", name, "policy", NULL};
    char err[PV_TOKEN_ERR_MAX];
    char *tok = NULL;
    size_t tlen = 0;
    unsigned mode = 0;
    struct cli_http *h;
    struct cli_answer ans;
    struct model_policy *p = NULL;
    char *path;

    if (!pv_ok(pv_token_read(token_file, -1, &tok, &tlen, &mode, err, sizeof(err)))) {
        fprintf(stderr, "proviso: %s\n", err);
        return NULL;
    }
    h = cli_http_new(url, tok);
    pv_token_wipe_free(tok, tlen);
    path = cli_http_path(segs, NULL, NULL);
    if (h != NULL && path != NULL && cli_http_call(h, "GET", path, NULL, &ans) == 0) {
        p = load_text(name, cli_str(ans.body, "policy_yaml"));
    } else if (h != NULL && path != NULL) {
        fprintf(stderr, "proviso: sandbox run: cannot read sandbox %s's policy: %s%s\n", name,
                ans.error, ans.body != NULL ? cli_str(ans.body, "detail") : "");
    }
    if (h != NULL && path != NULL) {
        cli_answer_clear(&ans);
    }
    free(path);
    cli_http_free(h);
    return p;
}

static int split(int argc, char **argv, char ***cmd)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = NULL;
            *cmd = argv[i + 1] != NULL ? &argv[i + 1] : NULL;
            return i;
        }
    }
    *cmd = NULL;
    return argc;
}

static int with_advisor(struct sandbox_opts *o, const struct pv_args *pa)
{
    struct cli_adv a;
    struct model_policy *p = NULL;
    char *tok = NULL;
    int pipe_w = -1;
    pid_t g = -1;
    int rc = 125;

    memset(&a, 0, sizeof(a));
    a.opt[CLI_O_ADVISOR] = pv_args_get(pa, "advisor");
    a.opt[CLI_O_TOKEN_FILE] = pv_args_get(pa, "token-file");
    o->advisor_url = cli_adv_url(a.opt[CLI_O_ADVISOR]);
    if (o->advisor_url == NULL) {
        return 2;
    }
    if (o->token_file != NULL) {
        p = fetch(o->advisor_url, o->name, o->token_file);
        rc = p != NULL ? sandbox_run(o, p) : 125;
        model_policy_free(p);
        return rc;
    }
    if (o->policy_path == NULL) {
        return pv_args_usage(&sbrun_cmd, "NAME needs --sandbox-token FILE (an existing sandbox) "
                                         "or --policy FILE (a sandbox made for this run)");
    }
    if (cli_adv_connect(&a) != 0) {
        return 2;
    }
    tok = create(a.http, o->name, o->policy_path, &p);
    if (tok != NULL) {
        g = guard(a.http, o->name, &pipe_w);
        o->token = tok;
        o->policy_path = NULL;
        rc = g > 0 ? sandbox_run(o, p) : 125;
    }
    if (pipe_w >= 0) {
        close(pipe_w); /* the guardian deletes NAME now */
        (void)waitpid(g, NULL, 0);
    }
    if (tok != NULL) {
        pv_token_wipe_free(tok, strlen(tok));
    }
    model_policy_free(p);
    cli_http_free(a.http);
    return rc;
}

int cli_sandbox_run(int argc, char **argv)
{
    struct sandbox_opts o;
    struct pv_args pa;
    char **cmd;
    int nopt = split(argc, argv, &cmd);
    struct model_policy *p;
    int rc;

    switch (pv_args_parse(&sbrun_cmd, nopt, argv, &pa)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    if (cmd == NULL) {
        return pv_args_usage(&sbrun_cmd, "no command: put it after --");
    }
    if (pa.npos > 1 || pv_args_count(&pa, "env") > SANDBOX_ENV_MAX) {
        return pv_args_usage(&sbrun_cmd, "one NAME at most, and %d --env at most", SANDBOX_ENV_MAX);
    }
    memset(&o, 0, sizeof(o));
    o.name = pa.npos == 1 ? pa.pos[0] : NULL;
    o.policy_path = pv_args_get(&pa, "policy");
    o.credentials = pv_args_get(&pa, "credentials");
    o.upstream_ca = pv_args_get(&pa, "upstream-ca");
    o.token_file = pv_args_get(&pa, "sandbox-token");
    o.proxy_log = pv_args_get(&pa, "log");
    o.workdir = pv_args_get(&pa, "workdir");
    o.proxy_program = pv_args_get(&pa, "proxy-program");
    o.test_allow_loopback = pv_args_has(&pa, "test-allow-loopback");
    o.verbose = pv_args_has(&pa, "verbose");
    o.argv = cmd;
    for (unsigned i = 0; i < pv_args_count(&pa, "env"); i++) {
        o.env[o.nenv++] = pv_args_nth(&pa, "env", i);
    }
    if (o.name != NULL) {
        return with_advisor(&o, &pa);
    }
    if (o.policy_path == NULL) {
        return pv_args_usage(&sbrun_cmd, "--policy FILE is needed (or an advisor sandbox NAME)");
    }
    if (o.token_file != NULL) {
        return pv_args_usage(&sbrun_cmd, "--sandbox-token goes with an advisor sandbox NAME");
    }
    {
        char *text = read_file_text(o.policy_path);
        p = text != NULL ? load_text(o.policy_path, text) : NULL;
        free(text);
    }
    if (p == NULL) {
        return 2;
    }
    rc = sandbox_run(&o, p);
    model_policy_free(p);
    return rc;
}
