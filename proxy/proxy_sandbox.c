/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_sandbox.c - serving a sandbox made by `proviso sandbox run`
 * (--sandbox-init PID; docs/sandbox.md#proxy).
 *
 * The proxy stays in the host's namespaces (it resolves names and dials
 * upstreams there) but two of its sockets are made in the sandbox's network
 * namespace, the one of PID (the sandbox's init): the listening socket, so
 * that the sandbox's 127.0.0.1:PORT is the proxy and nothing else exists
 * there, and the sock_diag socket that finds a client's socket inode (a
 * socket is looked up in the namespace it lives in). The main thread
 * enters the namespace only around those two calls (setns affects the
 * calling thread alone, and nothing else runs yet). Identity reads the
 * sandbox's own /proc, PID's root's /proc, a procfs of the sandbox's PID
 * namespace: the scan reads only the sandbox's processes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/pv_log.h"
#include "proxy/proxy_ident.h"
#include "proxy/proxy_int.h"

static int sandbox_ns = -1;
static int home_ns = -1;

bool proxy_sandbox_open(const struct proxy_config *cfg, char *err, size_t errlen)
{
    char path[64];

    if (cfg->sandbox_init <= 0) {
        return true;
    }
    snprintf(path, sizeof(path), "/proc/%d/ns/net", cfg->sandbox_init);
    sandbox_ns = open(path, O_RDONLY | O_CLOEXEC);
    home_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (sandbox_ns < 0 || home_ns < 0) {
        snprintf(err, errlen, "--sandbox-init %d: cannot open %s: %s", cfg->sandbox_init,
                 sandbox_ns < 0 ? path : "this thread's network namespace", strerror(errno));
        return false;
    }
    snprintf(path, sizeof(path), "/proc/%d/root/proc", cfg->sandbox_init);
    if (!proxy_ident_set_proc(path)) {
        snprintf(err, errlen, "--sandbox-init %d: cannot read the sandbox's /proc (%s): %s",
                 cfg->sandbox_init, path, strerror(errno));
        return false;
    }
    return true;
}

bool proxy_sandbox_enter(void)
{
    return sandbox_ns < 0 || setns(sandbox_ns, CLONE_NEWNET) == 0;
}

void proxy_sandbox_leave(void)
{
    if (home_ns >= 0 && setns(home_ns, CLONE_NEWNET) != 0) {
        pv_log_errorx("cannot return to the host's network namespace: %s", strerror(errno));
        _exit(2); /* upstreams would be dialled from the sandbox: never go on */
    }
}
