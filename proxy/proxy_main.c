/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_main.c - command line of proviso-proxy
 *
 *   proviso-proxy (--policy FILE | --advisor URL --sandbox NAME --token-file F
 *                  [--skill-dir DIR]) [--port N] [--bind ADDR] [--admin-port N]
 *                 [--data-dir DIR] [--log FILE] [--upstream-ca FILE]
 *                 [--test-allow-loopback] [--test-hosts-file FILE]
 *                 [--port-file FILE] [--connect-timeout MS] [--idle-timeout MS]
 *                 [--reload-interval MS] [--header-timeout MS] [--max-client-conns N]
 *                 [--unprivileged-identity]
 *
 * Exit status: 0 after SIGTERM/SIGINT (drained), 2 on a usage or startup
 * error (unreadable or invalid policy, CA, ports).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv.h"
#include "common/pv_log.h"
#include "proxy/proxy.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: proviso-proxy (--policy FILE | --advisor URL --sandbox NAME --token-file FILE\n"
            "                      [--skill-dir DIR]) [--port N] [--bind ADDR] [--admin-port N]\n"
            "                     [--data-dir DIR] [--log FILE] [--upstream-ca FILE]\n"
            "                     [--test-allow-loopback] [--test-hosts-file FILE]\n"
            "                     [--port-file FILE] [--connect-timeout MS]\n"
            "                     [--idle-timeout MS] [--reload-interval MS]\n"
            "                     [--header-timeout MS] [--max-client-conns N]\n"
            "                     [--unprivileged-identity]\n"
            "\n"
            "Enforcing egress proxy: HTTP_PROXY/HTTPS_PROXY=http://ADDR:PORT.\n"
            "Defaults: --bind 127.0.0.1 --port 3128, admin port = port + 1 (GET /healthz),\n"
            "--data-dir ./proviso-proxy-data (CA: ca.crt, denials.jsonl), log on stderr.\n"
            "SIGHUP or a change of the policy file reloads; SIGTERM drains and exits 0.\n"
            "With --advisor the policy comes from proviso-advisor (long-poll) and agents\n"
            "reach it at http://policy.local; the skill is DATA_DIR/skills/policy_advisor.md.\n"
            "Identifying client binaries needs root or CAP_SYS_PTRACE: without it the proxy\n"
            "refuses to start unless --unprivileged-identity (only processes it may inspect\n"
            "are identified; the others are denied as unknown).\n");
}

static int number(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
    if (!pv_ok(pv_parse_u64(s, strlen(s), max, out))) {
        fprintf(stderr, "proviso-proxy: %s: invalid number '%s'\n", opt, s);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"policy", required_argument, NULL, 'p'},
        {"port", required_argument, NULL, 'P'},
        {"bind", required_argument, NULL, 'b'},
        {"admin-port", required_argument, NULL, 'a'},
        {"data-dir", required_argument, NULL, 'd'},
        {"log", required_argument, NULL, 'l'},
        {"upstream-ca", required_argument, NULL, 'u'},
        {"test-allow-loopback", no_argument, NULL, 'L'},
        {"test-hosts-file", required_argument, NULL, 'H'},
        {"port-file", required_argument, NULL, 'f'},
        {"connect-timeout", required_argument, NULL, 'c'},
        {"idle-timeout", required_argument, NULL, 'i'},
        {"header-timeout", required_argument, NULL, 'T'},
        {"max-client-conns", required_argument, NULL, 'M'},
        {"reload-interval", required_argument, NULL, 'r'},
        {"advisor", required_argument, NULL, 'A'},
        {"sandbox", required_argument, NULL, 'S'},
        {"token-file", required_argument, NULL, 'k'},
        {"skill-dir", required_argument, NULL, 'K'},
        {"unprivileged-identity", no_argument, NULL, 'U'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct proxy_config cfg;
    char advisor_policy[4200];
    uint64_t v;
    int ch;

    memset(&cfg, 0, sizeof(cfg));
    cfg.bind_addr = "127.0.0.1";
    cfg.port = 3128;
    cfg.data_dir = "proviso-proxy-data";
    cfg.connect_timeout_ms = 10000;
    cfg.idle_timeout_ms = 60000;
    cfg.header_timeout_ms = 10000;
    cfg.max_client_conns = 1024;
    cfg.reload_check_ms = 1000;
    pv_log_set_prefix("proviso-proxy");
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            cfg.policy_path = optarg;
            break;
        case 'P':
            if (number("--port", optarg, 65535, &v) != 0) {
                return 2;
            }
            cfg.port = (uint16_t)v;
            break;
        case 'b':
            cfg.bind_addr = optarg;
            break;
        case 'a':
            if (number("--admin-port", optarg, 65535, &v) != 0) {
                return 2;
            }
            cfg.admin_port = (uint16_t)v;
            cfg.admin_given = true;
            break;
        case 'd':
            cfg.data_dir = optarg;
            break;
        case 'l':
            cfg.log_path = optarg;
            break;
        case 'u':
            cfg.upstream_ca = optarg;
            break;
        case 'L':
            cfg.test_allow_loopback = true;
            break;
        case 'H':
            cfg.hosts_file = optarg;
            break;
        case 'f':
            cfg.port_file = optarg;
            break;
        case 'c':
            if (number("--connect-timeout", optarg, 600000, &v) != 0 || v == 0) {
                return 2;
            }
            cfg.connect_timeout_ms = (unsigned)v;
            break;
        case 'i':
            if (number("--idle-timeout", optarg, 86400000, &v) != 0 || v == 0) {
                return 2;
            }
            cfg.idle_timeout_ms = (unsigned)v;
            break;
        case 'T':
            if (number("--header-timeout", optarg, 86400000, &v) != 0) {
                return 2;
            }
            cfg.header_timeout_ms = (unsigned)v;
            break;
        case 'M':
            if (number("--max-client-conns", optarg, 1000000, &v) != 0 || v == 0) {
                return 2;
            }
            cfg.max_client_conns = (unsigned)v;
            break;
        case 'r':
            if (number("--reload-interval", optarg, 3600000, &v) != 0) {
                return 2;
            }
            cfg.reload_check_ms = (unsigned)v;
            break;
        case 'A':
            cfg.advisor_url = optarg;
            break;
        case 'S':
            cfg.sandbox = optarg;
            break;
        case 'k': /* 'T' is --header-timeout */
            cfg.token_file = optarg;
            break;
        case 'K':
            cfg.skill_dir = optarg;
            break;
        case 'U':
            cfg.unprivileged_identity = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("proviso-proxy %s\n", PACKAGE_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (proxy_advisor_args(&cfg, advisor_policy, sizeof(advisor_policy)) != 0) {
        usage(stderr);
        return 2;
    }
    return proxy_server_run(&cfg);
}
