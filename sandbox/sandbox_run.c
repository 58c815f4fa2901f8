/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_run.c - `proviso sandbox run`: the processes and their lifetimes
 * (docs/sandbox.md#lifecycle).
 *
 *   proviso (root, the host's namespaces)
 *    |- init: PID 1 of new PID, network, mount, IPC, UTS and cgroup
 *    |   |    namespaces; builds the root (sandbox_root.c), then waits
 *    |   '- the command (sandbox_exec.c)
 *    '- proviso-proxy --sandbox-init INIT (sandbox_proxy.c)
 *
 * Nothing outlives what it belongs to, by the kernel's own rules: init and
 * the proxy get SIGKILL when proviso ends (PR_SET_PDEATHSIG); every process
 * of the sandbox ends when init does (it is its PID namespace's init); the
 * namespaces, the mounts and the proxy's data (a tmpfs inside the mount
 * namespace) go with their last process. Init ends when the command does,
 * with its status. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to proviso go
 * to init, which sends them to every process of the sandbox.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/pv.h"
#include "sandbox/sandbox_int.h"

#define READY_MAX 2048

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void block_signals(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < PV_ARRAY_LEN(forwarded); i++) {
        sigaddset(set, forwarded[i]);
    }
    sigaddset(set, SIGCHLD);
    sigprocmask(SIG_BLOCK, set, NULL);
}

static void noop(int sig)
{
    (void)sig;
}

static int status_code(int status)
{
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 125;
}

/* PID 1 of the sandbox: the kernel drops a signal to a namespace's init
 * that has no handler, so each forwarded one has a handler (that never
 * runs: they stay blocked and are taken by sigwaitinfo). */
static void init_wait(pid_t cmd)
{
    struct sigaction sa;
    sigset_t set;
    siginfo_t si;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = noop;
    for (size_t i = 0; i < PV_ARRAY_LEN(forwarded); i++) {
        sigaction(forwarded[i], &sa, NULL);
    }
    sigaction(SIGCHLD, &sa, NULL);
    block_signals(&set);
    for (;;) {
        int status;
        pid_t w;
        if (sigwaitinfo(&set, &si) < 0) {
            continue;
        }
        if (si.si_signo != SIGCHLD) {
            kill(-1, si.si_signo); /* every process of the namespace but init */
            continue;
        }
        while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
            if (w == cmd) {
                _exit(status_code(status));
            }
        }
    }
}

static void init_main(const struct sandbox_plan *plan, char **argv, char **envp, int ready, int go)
{
    char err[PATH_MAX + 256];
    char c;
    pid_t cmd;

    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        _exit(125);
    }
    if (!sandbox_root_build(plan, err, sizeof(err))) {
        dprintf(ready, "%s", err);
        _exit(125);
    }
    if (write(ready, "OK", 2) != 2) {
        _exit(125);
    }
    close(ready);
    if (read(go, &c, 1) != 1) {
        _exit(125); /* proviso ended, or the proxy did not start */
    }
    close(go);
    cmd = fork();
    if (cmd < 0) {
        fprintf(stderr, "proviso: sandbox: cannot start the command: %s\n", strerror(errno));
        _exit(125);
    }
    if (cmd == 0) {
        _exit(sandbox_exec(plan, argv, envp));
    }
    init_wait(cmd);
}

/* Wait for init's word: "OK", or why it could not build the sandbox. */
static bool read_ready(int fd, char *err, size_t errlen)
{
    char buf[READY_MAX];
    size_t n = 0;
    ssize_t r;

    while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) != 0) {
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        n += (size_t)r;
    }
    buf[n] = '\0';
    if (strcmp(buf, "OK") == 0) {
        return true;
    }
    snprintf(err, errlen, "%s", n > 0 ? buf : "the sandbox's init ended before it was ready");
    return false;
}

/* Forward signals and wait for init; the proxy ending first ends the
 * sandbox (without it the command has no network, but it would not know
 * why). */
static int supervise(pid_t init, struct sandbox_proxy *px, const sigset_t *set)
{
    siginfo_t si;
    int code = -1;
    bool proxy_ended = false;

    while (code < 0) {
        int status;
        pid_t w;
        if (sigwaitinfo(set, &si) < 0) {
            continue;
        }
        if (si.si_signo != SIGCHLD) {
            kill(init, si.si_signo);
            continue;
        }
        while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
            if (w == init) {
                code = status_code(status);
            } else if (w == px->pid) {
                px->pid = -1;
                fprintf(stderr,
                        "proviso: sandbox: the proxy ended (status %d); stopping the "
                        "command\n",
                        status_code(status));
                kill(init, SIGKILL);
                proxy_ended = true;
            }
        }
    }
    return proxy_ended ? 125 : code;
}

static pid_t clone_init(void)
{
    unsigned long flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
                          CLONE_NEWCGROUP | SIGCHLD;

    return (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
}

static int start(const struct sandbox_opts *o, const struct model_policy *p,
                 const struct sandbox_plan *plan, char **envp, struct sandbox_proxy *px)
{
    int ready[2];
    int go[2];
    sigset_t set;
    pid_t init;
    char err[PATH_MAX + 256];

    block_signals(&set);
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
        fprintf(stderr, "proviso: sandbox: pipe: %s\n", strerror(errno));
        return 125;
    }
    init = clone_init();
    if (init < 0) {
        fprintf(stderr, "proviso: sandbox: cannot make the namespaces: %s\n", strerror(errno));
        return 125;
    }
    if (init == 0) {
        close(ready[0]);
        close(go[1]);
        init_main(plan, o->argv, envp, ready[1], go[0]);
        _exit(125);
    }
    close(ready[1]);
    close(go[0]);
    if (!read_ready(ready[0], err, sizeof(err)) ||
        !sandbox_proxy_start(o, p, init, px, err, sizeof(err))) {
        fprintf(stderr, "proviso: sandbox: %s\n", err);
        kill(init, SIGKILL);
        (void)waitpid(init, NULL, 0);
        return 125;
    }
    close(ready[0]);
    if (o->verbose) {
        fprintf(stderr, "proviso: sandbox: init %d, proxy %d (admin 127.0.0.1:%u)\n", (int)init,
                (int)px->pid, px->admin_port);
    }
    if (write(go[1], "g", 1) != 1) {
        kill(init, SIGKILL);
    }
    close(go[1]);
    return supervise(init, px, &set);
}

static int run_plan(const struct sandbox_opts *o, const struct model_policy *p,
                    struct sandbox_proxy *px)
{
    struct sandbox_plan *plan = pv_calloc(1, sizeof(*plan));
    char err[PATH_MAX + 256];
    char **envp;
    int code;

    if (plan == NULL) {
        fprintf(stderr, "proviso: sandbox: out of memory\n");
        return 125;
    }
    if (!sandbox_plan_make(p, o, plan, err, sizeof(err))) {
        fprintf(stderr, "proviso: sandbox: %s\n", err);
        free(plan);
        return 125;
    }
    envp = sandbox_env(o, plan, o->name != NULL);
    if (envp == NULL) {
        fprintf(stderr, "proviso: sandbox: out of memory\n");
        free(plan);
        return 125;
    }
    code = start(o, p, plan, envp, px);
    sandbox_proxy_stop(px);
    sandbox_env_free(envp);
    free(plan);
    return code;
}

int sandbox_run(const struct sandbox_opts *o, const struct model_policy *p)
{
    struct sandbox_proxy px;

    memset(&px, 0, sizeof(px));
    px.pid = -1;
    if (geteuid() != 0) {
        fprintf(stderr, "proviso: sandbox: run as root: making namespaces, mounts and the "
                        "command's user needs it (docs/sandbox.md#privileges)\n");
        return 125;
    }
    return run_plan(o, p, &px);
}
