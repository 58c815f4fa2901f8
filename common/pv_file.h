/* SPDX-License-Identifier: Apache-2.0 */
/* pv_file.h - read a file the user named, with one set of messages
 *
 * Every command and server reads the files named on its command line or in
 * its configuration through pv_file_read, so a missing, unreadable or
 * too-large file and a directory are reported the same way everywhere:
 *
 *   FILE: No such file or directory
 *   FILE: Permission denied
 *   FILE: Is a directory
 *   FILE: larger than N bytes
 *
 * ("-" is standard input when the caller allows it.)
 */
#ifndef PV_FILE_H
#define PV_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/pv.h"

/* Read all of 'path' (borrowed), at most 'cap' bytes, into '*out' (new
 * NUL-terminated buffer, caller frees; "" for an empty file) and '*len'.
 * 'allow_stdin': "-" reads standard input. On failure '*out' is NULL, 'err'
 * holds "PATH: reason" and the result is PV_ERR_IO (missing, unreadable,
 * directory or not a regular file), PV_ERR_TOOBIG or PV_ERR_NOMEM. */
pv_result pv_file_read(const char *path, size_t cap, bool allow_stdin, char **out, size_t *len,
                       char *err, size_t errlen) PV_WUR;

/* Read 'fd' (borrowed, opened by the caller: a /proc file, which is not
 * regular) to its end, at most 'cap' bytes, into '*out' (new NUL-terminated
 * buffer, caller frees) and '*len'. Returns 0, or an errno value (EFBIG over
 * the cap, ENOMEM, or read's) with '*out' NULL. */
int pv_file_read_fd(int fd, size_t cap, char **out, size_t *len);

/* Check, before start-up goes further, that 'path' names a regular file this
 * process can open for reading (for files a library opens itself later,
 * e.g. a CA bundle). On failure 'err' holds the same "PATH: reason" as
 * pv_file_read and the result is PV_ERR_IO. */
pv_result pv_file_readable(const char *path, char *err, size_t errlen) PV_WUR;

/* The reason part of a pv_file_read message for 'path' ("No such file or
 * directory"), for callers that print the file name themselves (borrowed
 * from 'err'). */
const char *pv_file_reason(const char *path, const char *err);

#endif
