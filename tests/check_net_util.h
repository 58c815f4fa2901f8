/* SPDX-License-Identifier: Apache-2.0 */
/* check_net_util.h - loopback sockets for the unit suites that talk to a
 * server of their own (check_hclient, check_cli_text) */
#ifndef TESTS_CHECK_NET_UTIL_H
#define TESTS_CHECK_NET_UTIL_H

/* A TCP socket on 127.0.0.1 (an ephemeral port) listening with 'backlog';
 * its port in *port. A failure fails the test. */
int check_net_listen(int backlog, unsigned *port);

#endif
