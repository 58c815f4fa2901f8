/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_exec.c - the command's own confinement, in init's child, just
 * before exec (docs/sandbox.md#process).
 *
 * In this order: a session of its own (the terminal it inherits is not its
 * controlling one, so TIOCSTI cannot type into the user's shell), every
 * descriptor above 2 closed, the policy's user and group (no supplementary groups; every
 * capability goes with uid 0), no_new_privs (no setuid program regains
 * any), Landlock, then the seccomp filter (libseccomp): no new user
 * namespace (the one way an unprivileged process could hold CAP_NET_ADMIN
 * or CAP_SYS_ADMIN over anything), clone3 answers ENOSYS so that libc
 * falls back to clone, whose flags the filter can read, no TIOCSTI or
 * TIOCLINUX, no kernel keyring, no io_uring, no ptrace or access to another
 * process's memory or descriptors, and sockets of the namespaced families
 * only (seccomp_deny, seccomp_families).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

static void reset_signals(void)
{
    sigset_t all;

    for (int s = 1; s < NSIG; s++) {
        signal(s, SIG_DFL); /* EINVAL for SIGKILL/SIGSTOP and gaps: harmless */
    }
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
}

/* Socket families: the network namespace isolates AF_INET, AF_INET6, AF_UNIX's
 * abstract names and AF_NETLINK; others (AF_VSOCK above all: its port space
 * is the host's and leads out of a virtual machine) are not namespaced. */
static bool seccomp_families(scmp_filter_ctx ctx)
{
    bool ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                               SCMP_A0(SCMP_CMP_GT, AF_NETLINK, 0)) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
                               SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0)) == 0;

    for (int f = 0; ok && f < AF_NETLINK; f++) {
        if (f != AF_UNIX && f != AF_INET && f != AF_INET6) {
            ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                  SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f, 0)) == 0;
        }
    }
    return ok;
}

static bool seccomp_deny(scmp_filter_ctx ctx)
{
    /* the kernel keyring is not namespaced; io_uring makes sockets and opens
     * files past any rule here; ptrace, another process's memory and
     * pidfd_getfd would let the command drive a policy binary's process
     * (its identity) from outside it */
    static const int denied[] = {
        SCMP_SYS(add_key),        SCMP_SYS(keyctl),           SCMP_SYS(request_key),
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),   SCMP_SYS(io_uring_register),
        SCMP_SYS(ptrace),         SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
        SCMP_SYS(pidfd_getfd),
    };
    bool ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCSTI)) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCLINUX)) == 0;

    for (size_t i = 0; ok && i < sizeof(denied) / sizeof(denied[0]); i++) {
        ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), denied[i], 0) == 0;
    }
    return ok && seccomp_families(ctx);
}

static bool seccomp_apply(char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc;

    if (ctx == NULL) {
        snprintf(err, errlen, "seccomp: cannot make the filter");
        return false;
    }
    if (!seccomp_deny(ctx)) {
        seccomp_release(ctx);
        snprintf(err, errlen, "seccomp: cannot add a rule");
        return false;
    }
    rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(err, errlen, "seccomp: cannot load the filter: %s", strerror(-rc));
        return false;
    }
    return true;
}

static bool drop_user(const struct sandbox_plan *plan, char *err, size_t errlen)
{
    if (setgroups(0, NULL) != 0 || setresgid(plan->gid, plan->gid, plan->gid) != 0 ||
        setresuid(plan->uid, plan->uid, plan->uid) != 0) {
        snprintf(err, errlen, "cannot become uid %lu gid %lu: %s", (unsigned long)plan->uid,
                 (unsigned long)plan->gid, strerror(errno));
        return false;
    }
    if (setuid(0) == 0) { /* a privilege left behind would be a bug */
        snprintf(err, errlen, "the command could become root again");
        return false;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
        return false;
    }
    return true;
}

int sandbox_exec(const struct sandbox_plan *plan, char **argv, char **envp)
{
    char err[PATH_MAX + 128];
    const char *cwd = plan->cwd;

    reset_signals();
    (void)setsid();
    (void)syscall(SYS_close_range, 3U, ~0U, 0U);
    if (chdir(cwd) != 0) {
        cwd = "/";
        if (chdir(cwd) != 0) {
            fprintf(stderr, "proviso: sandbox: cannot enter /: %s\n", strerror(errno));
            return 126;
        }
    }
    /* Landlock's paths are opened as the user: a path it cannot search is
     * one it could not use either. */
    if (!drop_user(plan, err, sizeof(err)) || !sandbox_landlock(plan, err, sizeof(err)) ||
        !seccomp_apply(err, sizeof(err))) {
        fprintf(stderr, "proviso: sandbox: %s\n", err);
        return 126;
    }
    execvpe(argv[0], argv, envp);
    fprintf(stderr, "proviso: sandbox: %s: %s\n", argv[0], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
