/* SPDX-License-Identifier: Apache-2.0 */
/* pv_notify.c - sd_notify("READY=1") on $NOTIFY_SOCKET, without libsystemd
 *
 * The protocol is one datagram of "KEY=VALUE" lines to the socket named by
 * $NOTIFY_SOCKET (sd_notify(3)): a filesystem path, or an abstract name
 * when it starts with '@' (the '@' becomes a NUL byte). A name that does not
 * fit sun_path is an error, never truncated.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/pv_notify.h"

/* The name pv_notify_claim took; sized like sun_path plus one, so that a
 * name too long for it is still seen as too long and refused. */
static char claimed[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
static int claimed_set;

void pv_notify_claim(void)
{
    const char *name = getenv("NOTIFY_SOCKET");

    if (name != NULL) {
        size_t len = strlen(name);
        if (len >= sizeof(claimed)) {
            len = sizeof(claimed) - 1;
        }
        memcpy(claimed, name, len);
        claimed[len] = '\0';
        (void)unsetenv("NOTIFY_SOCKET");
    }
    claimed_set = 1;
}

pv_result pv_notify_ready(void)
{
    const char *name = claimed_set ? claimed : getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    size_t len;
    static const char msg[] = "READY=1";
    int fd;
    ssize_t n;

    if (name == NULL || name[0] == '\0') {
        return PV_RESULT_OK;
    }
    len = strlen(name);
    if ((name[0] != '/' && name[0] != '@') || len >= sizeof(sa.sun_path)) {
        errno = EINVAL;
        PV_BAIL(PV_ERR_USAGE);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, name, len);
    if (name[0] == '@') {
        sa.sun_path[0] = '\0';
    }
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        PV_BAIL(PV_ERR_IO);
    }
    n = sendto(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL, (const struct sockaddr *)&sa,
               (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/')));
    close(fd);
    PV_ENSURE(n == (ssize_t)(sizeof(msg) - 1), PV_ERR_IO);
    return PV_RESULT_OK;
}
