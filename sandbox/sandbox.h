/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox.h - `proviso sandbox run`: a command whose only way out is the
 * proxy (docs/sandbox.md).
 *
 * The command runs in namespaces of its own (network: loopback only; PID;
 * mount: a new root holding only the policy's filesystem paths; IPC; UTS),
 * under Landlock (filesystem_policy), as the policy's process user with
 * no_new_privs and a seccomp filter. Its proxy is a proviso-proxy process in
 * the host's network namespace whose listening socket lives in the
 * sandbox's: the agent reaches 127.0.0.1:3128 and nothing else exists.
 */
#ifndef PV_SANDBOX_H
#define PV_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

struct model_policy;

#define SANDBOX_ENV_MAX 64

/* What `proviso sandbox run` was asked for. Every string is borrowed. */
struct sandbox_opts {
    /* standalone: the policy file; with an advisor: the sandbox's NAME */
    const char *policy_path;
    const char *credentials;
    const char *upstream_ca;          /* the proxy trusts only this CA upstream (a private one) */
    const char *name;                 /* advisor sandbox, NULL: standalone */
    const char *advisor_url;          /* with name */
    const char *token_file;           /* the sandbox token's file (advisor mode) */
    const char *token;                /* or the token itself (a sandbox made for this run) */
    const char *proxy_log;            /* the proxy's decision log, NULL: stderr */
    const char *proxy_program;        /* proviso-proxy, NULL: beside this program */
    const char *workdir;              /* NULL: the current directory */
    const char *env[SANDBOX_ENV_MAX]; /* --env NAME or NAME=VALUE */
    size_t nenv;
    bool test_allow_loopback;
    bool verbose;
    char **argv; /* the command, NULL-terminated */
};

/* Run the command in a sandbox under policy 'p' (its filesystem_policy,
 * landlock and process sections; the proxy enforces the network part, from
 * o->policy_path or the advisor) and wait for it. Returns the command's exit
 * status (128 + N when a signal N ended it), 125 when the sandbox could not
 * be set up or its proxy failed, 126/127 when the command could not be run;
 * the reason is on stderr. */
int sandbox_run(const struct sandbox_opts *o, const struct model_policy *p);

#endif
