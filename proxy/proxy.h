/* SPDX-License-Identifier: Apache-2.0 */
/* proxy.h - proviso-proxy: the enforcing egress proxy (public header of proxy/)
 *
 * proviso-proxy applies a compiled policy to real traffic: forward-proxied
 * http:// requests and CONNECT tunnels, opaque or inspected (TLS terminated
 * with a local CA, every HTTP/1.1 request decided). Every decision is a call
 * to model_decide(); this folder never re-implements matching. The modules:
 *
 * This header is what proxy_main.c needs (the configuration and the run
 * function); the modules' interfaces are in proxy_int.h:
 *
 *   proxy_http.c    strict request-head parser and validator (pure, fuzzed)
 *   proxy_chunk.c   strict chunked-body decoder, canonical re-chunking (pure)
 *   proxy_cred.c    credentials store, placeholder rewriter (pure, fuzzed)
 *   proxy_credgate.c placeholders on a connection's requests: redact, gate, bodies
 *   proxy_outcome.c the (phase, reason) -> {status, error, stage} table
 *   proxy_policy.c  refcounted policy versions, the decision wrappers
 *                   (connection, request, destination)
 *   proxy_reply.c   every reply the proxy writes itself: deny bodies, errors
 *   proxy_ident.c   requesting-binary identity from /proc, SHA-256 TOFU pins
 *   proxy_idq.c     identity lookups off the event loop (worker, batches)
 *   proxy_tls.c     local CA, leaf certificates, upstream verification
 *   proxy_splice.c  zero-copy relay of opaque tunnels (splice(2))
 *   proxy_log.c     shorthand decision log and JSON-lines denial stream
 *   proxy_conn.c    connection lifecycle, callbacks, the one exit of outcomes
 *   proxy_relay.c   forward requests: decision, resolution, connect, relay
 *   proxy_tunnel.c  CONNECT tunnels, opaque (spliced) and inspected
 *   proxy_server.c  listeners, admin port, DNS, signals, reload
 *   advisor/        advisor mode, on the core's hooks (proxy_int.h struct
 *                   proxy_hooks); the core never includes its header:
 *     proxy_advisor.c  policy sync from proviso-advisor (failover), workers
 *     proxy_advisor_args.c  its command-line options
 *     proxy_local.c    http://policy.local, recent denials
 *     proxy_denials.c  the denial stream to the advisor's mapper
 *     proxy_skill.c    the agent skill file
 *   proxy_main.c    command line
 *
 * Invariants: the proxy connects only to addresses that model_decide admitted
 * for the request being served; a request is evaluated against exactly one
 * policy version (the one its connection pinned); any error denies.
 */
#ifndef PROXY_H
#define PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ===========================================================================
 * The server (proxy_server.c)
 * ========================================================================= */

#define PROXY_SANDBOX_ADDRS_MAX 16
/* --advisor URLs at most (replicas of one gateway) */
#define PROXY_ADVISORS_MAX 8

/* How the proxy finds the processes holding a client's socket
 * (--identity-scan; docs/proxy.md "Identity"). */
enum proxy_ident_scan {
    PROXY_IDENT_AUTO, /* the BPF task-file iterator when it works here, else /proc */
    PROXY_IDENT_BPF,  /* the iterator, or refuse to start */
    PROXY_IDENT_PROC, /* read every process's /proc/PID/fd */
};

struct proxy_server;

struct proxy_config {
    const char *policy_path;
    const char *bind_addr; /* default 127.0.0.1 */
    uint16_t port;         /* default 3128; 0 = any free port */
    uint16_t admin_port;   /* default 0 = port + 1 when port != 0 */
    bool admin_given;
    const char *data_dir; /* default ./proviso-proxy-data */
    const char *log_path; /* NULL = stderr */
    const char *upstream_ca;
    const char *credentials; /* the credentials store (proxy_cred.c), NULL: none */
    const char *hosts_file;  /* extra hosts entries (tests) */
    const char *port_file;   /* write "PORT ADMIN_PORT\n" here when ready */
    bool test_allow_loopback;
    bool unprivileged_identity; /* run without CAP_SYS_PTRACE (start-up self-check) */
    enum proxy_ident_scan identity_scan;
    int sandbox_init; /* --sandbox-init PID (proviso sandbox run), 0: none */
    unsigned connect_timeout_ms;
    unsigned idle_timeout_ms;
    unsigned header_timeout_ms; /* a complete request head within this (0 = off) */
    unsigned max_client_conns;  /* per client address; above it the oldest idle one goes */
    unsigned reload_check_ms;   /* policy file stat period */
    /* advisor mode (proxy/advisor/): the policy comes from proviso-advisor */
    const char *advisor_url; /* the first --advisor; NULL: --policy file mode */
    /* every --advisor, in the order given: replicas of one gateway (or one
     * URL behind a load balancer); the sync fails over between them */
    const char *advisor_urls[PROXY_ADVISORS_MAX];
    size_t nadvisor_urls;
    const char *sandbox;
    const char *token_file;  /* the sandbox's bearer token */
    const char *skill_dir;   /* NULL: DATA_DIR/skills */
    const char *skill_shown; /* the skill's path as the agent sees it, NULL: as written */
    /* the sandbox's own addresses, registered with the advisor on connect so
     * that peers' target_sandbox endpoints resolve to them */
    const char *sandbox_addrs[PROXY_SANDBOX_ADDRS_MAX];
    size_t nsandbox_addrs;
    /* A mode the core starts once its event loop exists (advisor mode sets
     * it in proxy_advisor_args): it registers its hooks (proxy_int.h).
     * Returns 0, or -1 after a logged message (exit 2). NULL: none. */
    int (*mode_start)(struct proxy_server *srv);
    /* Start in fail-closed quarantine with this reason instead of loading
     * policy_path (the mode loads the first policy). NULL: load it. */
    const char *start_quarantine;
};

/* Check the advisor options of 'cfg' (--advisor with --sandbox and
 * --token-file, exclusive with --policy). In advisor mode point
 * cfg->policy_path at 'buf' (DATA_DIR/advisor-policy.yaml, the file each
 * revision is written to before it is loaded; a stale one is removed),
 * turn the periodic file check off, start in quarantine and set
 * cfg->mode_start to advisor mode's start. Returns 0, or -1 after a message.
 * (proxy/advisor/proxy_advisor.c) */
int proxy_advisor_args(struct proxy_config *cfg, char *buf, size_t len);

/* Run the proxy until SIGTERM/SIGINT; returns the process exit status. */
int proxy_server_run(const struct proxy_config *cfg);

#endif
