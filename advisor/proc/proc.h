/* SPDX-License-Identifier: Apache-2.0 */
/* proc.h - the advisor as a process (advisor/proc/)
 *
 * The top room: the prover child (advisor_child.c), other replicas'
 * commits (advisor_listen.c) and main (advisor_main.c, options, threads,
 * signals), which wires every room below together
 * (docs/architecture.md#advisor).
 */
#ifndef ADVISOR_PROC_H
#define ADVISOR_PROC_H

#include "advisor/http/http.h"

/* Other replicas' commits (advisor_listen.c, docs/scale-out.md#replicas):
 * on a PostgreSQL store one thread LISTENs for the notes every write
 * transaction sends, updates the sandbox tokens they name and wakes the
 * long-polls (advisor_changed). NULL with 'err' "" on SQLite (nothing to
 * listen to); NULL with 'err' set when the listener cannot start. */
struct advisor_listen;
struct advisor_listen *advisor_listen_start(struct advisor *a, char *err, size_t errlen);
void advisor_listen_stop(struct advisor_listen *l);
/* Apply one note's payload (store.h "Replicas") through store 'st'. */
void advisor_listen_apply(struct advisor *a, struct store *st, const char *payload);

/* ===========================================================================
 * The prover child (advisor_child.c)
 * ========================================================================= */

struct advisor_child;
/* Start proviso-prover ('exe') on a free loopback port with a fresh token
 * passed through an inherited descriptor, wait for /healthz and publish its
 * address as the member "child" it adds to a->pool (which must exist); a
 * supervisor thread restarts it with back-off when it dies, the member out
 * meanwhile. NULL with a message in 'err'. */
struct advisor_child *advisor_child_start(struct advisor *a, const char *exe, char *err,
                                          size_t errlen);
/* SIGTERM, then SIGKILL after 'grace_ms'; joins the supervisor. */
void advisor_child_stop(struct advisor_child *c, unsigned grace_ms);

#endif
