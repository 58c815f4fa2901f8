/* SPDX-License-Identifier: Apache-2.0 */
/* pv_token.h - read a bearer token from a file or a descriptor
 *
 * Every token proviso reads (the servers' --token-file and --token-fd, the
 * CLI's admin token, the proxy's sandbox token) goes through this one
 * reader, so they share one set of rules and messages: a regular file (or
 * an inherited descriptor), surrounding whitespace dropped, PV_TOKEN_MIN to
 * PV_TOKEN_MAX bytes of printable ASCII without spaces. Every copy of the
 * secret bytes is wiped before it is freed or goes out of scope.
 */
#ifndef PV_TOKEN_H
#define PV_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/pv.h"

#define PV_TOKEN_MIN 16u
#define PV_TOKEN_MAX 4096u
/* A buffer for pv_token_read's message: a path (PATH_MAX) and the reason. */
#define PV_TOKEN_ERR_MAX 4160u

/* Read the token of 'path' (a regular file; fd < 0) or of the descriptor
 * 'fd' (closed here; 'path' then names it in messages, e.g. "--token-fd").
 * On success '*out' is a new NUL-terminated buffer of '*len' bytes (free it
 * with pv_token_wipe_free) and '*mode' the file's permission bits (0 for a
 * descriptor). On failure 'err' holds "PATH: reason" and the result is
 * PV_ERR_IO (missing, unreadable, not a regular file), PV_ERR_PARSE (not a
 * token) or PV_ERR_NOMEM. */
pv_result pv_token_read(const char *path, int fd, char **out, size_t *len, unsigned *mode,
                        char *err, size_t errlen) PV_WUR;

/* Wipe 'len' bytes of 'p' and free it (NULL is fine). */
void pv_token_wipe_free(char *p, size_t len);

#endif
