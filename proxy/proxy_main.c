/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_main.c - command line of proviso-proxy
 *
 *   proviso-proxy (--policy FILE | --advisor URL... --sandbox NAME --token-file F
 *                  [--skill-dir DIR]) [--port N] [--bind ADDR] [--admin-port N]
 *                 [--data-dir DIR] [--log FILE] [--upstream-ca FILE]
 *                 [--test-allow-loopback] [--test-hosts-file FILE]
 *                 [--port-file FILE] [--connect-timeout MS] [--idle-timeout MS]
 *                 [--reload-interval MS] [--header-timeout MS] [--max-client-conns N]
 *                 [--unprivileged-identity] [--identity-scan auto|bpf|proc]
 *                 [--sandbox-init PID]
 *
 * Exit status: 0 after SIGTERM/SIGINT (drained), 2 on a usage or startup
 * error (unreadable or invalid policy, CA, ports).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pv.h"
#include "common/pv_args.h"
#include "common/pv_file.h"
#include "common/pv_log.h"
#include "proxy/proxy.h"

static const struct pv_opt proxy_opts[] = {
    {"policy", "FILE", "the policy to enforce (reloaded when it changes)", 0},
    {"advisor", "URL",
     "take the policy from proviso-advisor instead (repeat for replicas of one gateway, "
     "at most 8: the proxy fails over between them)",
     PV_OPT_REPEAT},
    {"sandbox", "NAME", "the sandbox's name at the advisor", 0},
    {"token-file", "FILE", "the sandbox's token for the advisor", 0},
    {"skill-dir", "DIR", "where to write the agent skill (default DATA_DIR/skills)", 0},
    {"sandbox-address", "ADDR",
     "an address the sandbox is reachable at, registered with the advisor for peers' "
     "target_sandbox (repeat, at most 16)",
     PV_OPT_REPEAT},
    {"port", "N", "listen port (default 3128)", 0},
    {"bind", "ADDR", "listen address (default 127.0.0.1)", 0},
    {"admin-port", "N", "the admin listener, GET /healthz (default port + 1)", 0},
    {"data-dir", "DIR", "CA (ca.crt) and denials.jsonl (default ./proviso-proxy-data)", 0},
    {"log", "FILE", "the audit log (default stderr)", 0},
    {"upstream-ca", "FILE", "trust these CAs for upstream TLS instead of the system's", 0},
    {"credentials", "FILE",
     "the credentials store: placeholder values (owner-only file, reloaded with the policy)", 0},
    {"port-file", "FILE", "write the listen port there once listening", 0},
    {"sandbox-init", "PID", "serve the sandbox of init PID (proviso sandbox run)", 0},
    {"skill-shown", "PATH", "the skill's path as the agent sees it (default: where it is written)",
     0},
    {"connect-timeout", "MS", "upstream connect time limit, 1..600000 (default 10000)", 0},
    {"idle-timeout", "MS", "idle connection limit, 1..86400000 (default 60000)", 0},
    {"header-timeout", "MS", "request head limit, 0..86400000 (default 10000)", 0},
    {"max-client-conns", "N", "client connections at once, 1..1000000 (default 1024)", 0},
    {"reload-interval", "MS", "policy file check interval, 0..3600000 (default 1000)", 0},
    {"unprivileged-identity", NULL,
     "run without CAP_SYS_PTRACE: processes the proxy may not "
     "inspect are denied as unknown",
     0},
    {"identity-scan", "HOW",
     "how the holders of a client's socket are found: auto (default: the BPF task-file "
     "iterator where it works, else /proc), bpf, or proc",
     0},
    {"test-allow-loopback", NULL, "tests only: allow loopback destinations", 0},
    {"test-hosts-file", "FILE", "tests only: resolve names from this hosts file", 0},
};

static const struct pv_cmd proxy_cmd = {
    .prog = "proviso-proxy",
    .synopsis = "(--policy FILE | --advisor URL --sandbox NAME --token-file FILE\n"
                "                      [--skill-dir DIR]) [--port N] [--bind ADDR] "
                "[--admin-port N]\n"
                "                     [--data-dir DIR] [--log FILE] [--upstream-ca FILE] ...",
    .summary = "The enforcing egress proxy. Point the sandbox at it with http_proxy and\n"
               "https_proxy (and HTTP_PROXY/HTTPS_PROXY) = http://ADDR:PORT, and make it\n"
               "trust DATA_DIR/ca.crt. SIGHUP or a change of the policy file reloads;\n"
               "SIGTERM drains and exits 0. With --advisor the policy comes from\n"
               "proviso-advisor (long-poll) and agents reach it at http://policy.local;\n"
               "the skill is DATA_DIR/skills/policy_advisor.md. Identifying client binaries\n"
               "needs root or CAP_SYS_PTRACE: without it the proxy refuses to start unless\n"
               "--unprivileged-identity.",
    .opts = proxy_opts,
    .nopts = PV_ARRAY_LEN(proxy_opts),
    .example = "proviso-proxy --policy /etc/proviso/policy.yaml --data-dir /var/lib/proviso/proxy",
    .epilog = "exit: 0 after SIGTERM/SIGINT (drained), 2 on a usage or start-up error\n"
              "(unreadable or invalid policy, CA, ports)",
    .version = "proviso-proxy " PACKAGE_VERSION,
    .last_wins = true,
};

/* The number option 'name' in min..max into '*out' (left alone when
 * absent); false after a usage error. */
static bool number(const struct pv_args *a, const char *name, uint64_t min, uint64_t max,
                   unsigned *out)
{
    uint64_t v = *out;

    if (!pv_args_number(a, name, min, max, &v)) {
        return false;
    }
    *out = (unsigned)v;
    return true;
}

/* Start-up file errors name the file, in the common words (pv_file.h):
 * the files OpenSSL, libevent and the advisor client open later would
 * otherwise fail with their own, vaguer messages. */
static bool files_ok(const struct proxy_config *cfg)
{
    const char *const readable[] = {cfg->upstream_ca, cfg->hosts_file, cfg->token_file};
    char err[PATH_MAX + 64];

    for (size_t i = 0; i < PV_ARRAY_LEN(readable); i++) {
        if (readable[i] != NULL && !pv_ok(pv_file_readable(readable[i], err, sizeof(err)))) {
            pv_log_errorx("%s", err);
            return false;
        }
    }
    if (cfg->log_path != NULL) {
        int fd = open(cfg->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
            pv_log_errorx("%s: %s", cfg->log_path, strerror(errno));
            return false;
        }
        close(fd);
    }
    return true;
}

/* How identities are found: --unprivileged-identity, --identity-scan and
 * --sandbox-init (which reads the sandbox's /proc, so never the iterator). */
static bool identity_opts(const struct pv_args *a, struct proxy_config *cfg)
{
    cfg->unprivileged_identity = pv_args_has(a, "unprivileged-identity");
    if (pv_args_has(a, "identity-scan")) {
        const char *how = pv_args_get(a, "identity-scan");
        if (strcmp(how, "auto") == 0) {
            cfg->identity_scan = PROXY_IDENT_AUTO;
        } else if (strcmp(how, "bpf") == 0) {
            cfg->identity_scan = PROXY_IDENT_BPF;
        } else if (strcmp(how, "proc") == 0) {
            cfg->identity_scan = PROXY_IDENT_PROC;
        } else {
            (void)pv_args_usage(&proxy_cmd, "--identity-scan must be auto, bpf or proc, not '%s'",
                                how);
            return false;
        }
    }
    if (pv_args_has(a, "sandbox-init")) {
        unsigned init = 0;
        if (!number(a, "sandbox-init", 2, 0x3FFFFFFF, &init)) {
            return false;
        }
        if (cfg->identity_scan == PROXY_IDENT_BPF) {
            (void)pv_args_usage(&proxy_cmd, "--sandbox-init reads the sandbox's /proc: "
                                            "--identity-scan bpf does not go with it");
            return false;
        }
        cfg->sandbox_init = (int)init;
        cfg->identity_scan = PROXY_IDENT_PROC; /* the iterator sees the whole machine */
    }
    return true;
}

int main(int argc, char **argv)
{
    struct proxy_config cfg;
    char advisor_policy[4200];
    struct pv_args a;
    unsigned port = 3128;
    unsigned admin_port = 0;

    memset(&cfg, 0, sizeof(cfg));
    cfg.bind_addr = "127.0.0.1";
    cfg.data_dir = "proviso-proxy-data";
    cfg.connect_timeout_ms = 10000;
    cfg.idle_timeout_ms = 60000;
    cfg.header_timeout_ms = 10000;
    cfg.max_client_conns = 1024;
    cfg.reload_check_ms = 1000;
    pv_log_set_prefix("proviso-proxy");
    switch (pv_args_parse(&proxy_cmd, argc, argv, &a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    if (a.npos > 0) {
        return pv_args_usage(&proxy_cmd, "unexpected operand '%s'", a.pos[0]);
    }
    if (!number(&a, "port", 0, 65535, &port) || !number(&a, "admin-port", 0, 65535, &admin_port) ||
        !number(&a, "connect-timeout", 1, 600000, &cfg.connect_timeout_ms) ||
        !number(&a, "idle-timeout", 1, 86400000, &cfg.idle_timeout_ms) ||
        !number(&a, "header-timeout", 0, 86400000, &cfg.header_timeout_ms) ||
        !number(&a, "max-client-conns", 1, 1000000, &cfg.max_client_conns) ||
        !number(&a, "reload-interval", 0, 3600000, &cfg.reload_check_ms)) {
        return 2;
    }
    cfg.port = (uint16_t)port;
    cfg.admin_port = (uint16_t)admin_port;
    cfg.admin_given = pv_args_has(&a, "admin-port");
    cfg.policy_path = pv_args_get(&a, "policy");
    if (pv_args_has(&a, "bind")) {
        cfg.bind_addr = pv_args_get(&a, "bind");
    }
    if (pv_args_has(&a, "data-dir")) {
        cfg.data_dir = pv_args_get(&a, "data-dir");
    }
    cfg.log_path = pv_args_get(&a, "log");
    cfg.upstream_ca = pv_args_get(&a, "upstream-ca");
    cfg.credentials = pv_args_get(&a, "credentials");
    cfg.test_allow_loopback = pv_args_has(&a, "test-allow-loopback");
    if (!identity_opts(&a, &cfg)) {
        return 2;
    }
    cfg.hosts_file = pv_args_get(&a, "test-hosts-file");
    cfg.port_file = pv_args_get(&a, "port-file");
    cfg.nadvisor_urls = pv_args_count(&a, "advisor");
    if (cfg.nadvisor_urls > PROXY_ADVISORS_MAX) {
        fprintf(stderr, "proviso-proxy: --advisor: at most %d URLs\n", PROXY_ADVISORS_MAX);
        return 2;
    }
    for (size_t i = 0; i < cfg.nadvisor_urls; i++) {
        cfg.advisor_urls[i] = pv_args_nth(&a, "advisor", (unsigned)i);
    }
    cfg.advisor_url = cfg.advisor_urls[0];
    cfg.sandbox = pv_args_get(&a, "sandbox");
    cfg.token_file = pv_args_get(&a, "token-file");
    cfg.skill_dir = pv_args_get(&a, "skill-dir");
    cfg.skill_shown = pv_args_get(&a, "skill-shown");
    cfg.nsandbox_addrs = pv_args_count(&a, "sandbox-address");
    if (cfg.nsandbox_addrs > PROXY_SANDBOX_ADDRS_MAX) {
        fprintf(stderr, "proviso-proxy: --sandbox-address: at most %d addresses\n",
                PROXY_SANDBOX_ADDRS_MAX);
        return 2;
    }
    for (size_t i = 0; i < cfg.nsandbox_addrs; i++) {
        cfg.sandbox_addrs[i] = pv_args_nth(&a, "sandbox-address", (unsigned)i);
    }
    if (!files_ok(&cfg) || proxy_advisor_args(&cfg, advisor_policy, sizeof(advisor_policy)) != 0) {
        return 2;
    }
    return proxy_server_run(&cfg);
}
