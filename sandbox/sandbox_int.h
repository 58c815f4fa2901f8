/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_int.h - the sandbox's internals: the plan made from the policy
 * (sandbox_plan.c), the root built from it (sandbox_root.c), the command's
 * confinement (sandbox_exec.c, sandbox_landlock.c) and the run
 * (sandbox_run.c, sandbox_proxy.c). */
#ifndef PV_SANDBOX_INT_H
#define PV_SANDBOX_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/model.h"
#include "sandbox/sandbox.h"

/* Inside the sandbox: proviso's own files (the proxy's CA, the bundle with
 * the system CAs, the agent's skill), readable by the command; and the
 * proxy's data directory (its CA key), root's alone. */
#define SANDBOX_DIR "/.proviso"
#define SANDBOX_PROXY_DIR "/.proviso-proxy"
#define SANDBOX_PROXY_PORT 3128
#define SANDBOX_PATHS_MAX 300

struct sandbox_path {
    char path[PATH_MAX]; /* absolute, as the policy writes it */
    char real[PATH_MAX]; /* what it names on this host (realpath) */
    bool write;          /* read_write (or the working directory) */
    bool dir;            /* what the path names on this host */
    bool dev;            /* a device node (its mount keeps device access) */
    bool proc;           /* /proc or under it: the sandbox's own procfs, never the host's */
    bool tmp;            /* /tmp: a tmpfs of the sandbox's own, never the host's */
    bool nested;         /* under another read_write path: opened without following links */
};

struct sandbox_plan {
    struct sandbox_path paths[SANDBOX_PATHS_MAX]; /* parents before children */
    size_t npaths;
    uid_t uid;
    gid_t gid;
    char user[64];       /* as the policy names it, for messages */
    char home[PATH_MAX]; /* HOME for the command */
    char cwd[PATH_MAX];  /* the command's working directory inside */
    bool landlock_hard;  /* landlock.compatibility: hard_requirement */
    int landlock_abi;    /* the kernel's, 0: none */
    char hostname[64];
};

/* Make the plan: resolve the process user, the filesystem paths (the
 * schema's restrictive default when filesystem_policy is absent), check the
 * kernel can do what the policy asks, and refuse binaries the command could
 * write. Warnings go to stderr; on failure 'err' says what and why. */
bool sandbox_plan_make(const struct model_policy *p, const struct sandbox_opts *o,
                       struct sandbox_plan *plan, char *err, size_t errlen);

/* The Landlock ABI this kernel offers, 0 when none. */
int sandbox_landlock_abi(void);

/* In the sandbox's init, still root, in its new namespaces: bring up
 * loopback, build the new root from the plan and pivot into it. */
bool sandbox_root_build(const struct sandbox_plan *plan, char *err, size_t errlen);

/* In the command's process (init's child): drop to the plan's user, set
 * no_new_privs, the seccomp filter and Landlock, then exec argv with envp.
 * Returns only on failure, with the exit status to use (126 or 127). */
int sandbox_exec(const struct sandbox_plan *plan, char **argv, char **envp);

/* Landlock the calling process to the plan's paths (sandbox_landlock.c).
 * False with 'err' set when it must not go on (hard_requirement or a
 * failure after the ruleset was made); a best_effort kernel without
 * Landlock warns and returns true. */
bool sandbox_landlock(const struct sandbox_plan *plan, char *err, size_t errlen);

/* The command's environment: what the opts pass through plus the proxy and
 * CA variables. A NULL-terminated array; caller frees with
 * sandbox_env_free. */
char **sandbox_env(const struct sandbox_opts *o, const struct sandbox_plan *plan, bool skill);
void sandbox_env_free(char **envp);

/* The proxy (sandbox_proxy.c): start proviso-proxy for init 'pid' and wait
 * until it listens; then copy its CA into the sandbox. */
struct sandbox_proxy {
    pid_t pid;
    unsigned admin_port;
    char token_path[PATH_MAX];  /* advisor mode: the sandbox token inside init's root */
    char policy_path[PATH_MAX]; /* standalone: the proxy's private copy of the policy */
    char cred_path[PATH_MAX];   /* its private copy of the credentials store */
    int logfd;                  /* the decision log, opened by proviso; -1: none */
};
bool sandbox_proxy_start(const struct sandbox_opts *o, const struct model_policy *p, pid_t init,
                         struct sandbox_proxy *px, char *err, size_t errlen);
void sandbox_proxy_stop(struct sandbox_proxy *px);

#endif
