/* SPDX-License-Identifier: Apache-2.0 */
/* pv_notify.h - tell systemd a server is ready (Type=notify), without libsystemd
 *
 * systemd passes $NOTIFY_SOCKET, an AF_UNIX datagram socket (a path, or an
 * abstract name written with a leading '@'), to a Type=notify service and
 * waits for "READY=1" on it. The three servers call pv_notify_ready() once,
 * when they listen; outside systemd (no $NOTIFY_SOCKET) it does nothing.
 */
#ifndef PV_NOTIFY_H
#define PV_NOTIFY_H

#include "common/pv.h"

/* Take $NOTIFY_SOCKET for this process and remove it from the environment,
 * so that a child (the advisor's prover) never reports to systemd in the
 * server's name. Call it first in main, before any thread starts; a later
 * pv_notify_ready() uses the name it kept. */
void pv_notify_claim(void);

/* Send "READY=1" to $NOTIFY_SOCKET (or to the name pv_notify_claim kept). OK when it was sent or
 * there is no socket to send to; PV_ERR_USAGE for a name that is neither a
 * path nor '@'-abstract or too long, PV_ERR_IO (errno set) when sending
 * failed. */
pv_result pv_notify_ready(void) PV_WUR;

#endif
