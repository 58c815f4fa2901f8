/* SPDX-License-Identifier: Apache-2.0 */
/* pv_file.c - read a file the user named, with one set of messages
 *
 * open(2) succeeds on a directory and read(2) then fails with EISDIR, and a
 * FIFO or a device can block or never end: so the file is checked with
 * fstat() after opening (no race with a rename) and only regular files and
 * standard input are read. The size cap is enforced while reading, so a
 * growing file cannot exceed it either.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "common/pv_file.h"

/* Read 'fd' to the end into 'b'; 0 or an errno value (EFBIG over the cap). */
static int read_fd(int fd, struct pv_dynbuf *b)
{
    char chunk[16384];

    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno;
        }
        if (n == 0) {
            return 0;
        }
        if (!pv_ok(pv_dynbuf_add(b, chunk, (size_t)n))) {
            return pv_errno == PV_ERR_TOOBIG ? EFBIG : ENOMEM;
        }
    }
}

int pv_file_read_fd(int fd, size_t cap, char **out, size_t *len)
{
    struct pv_dynbuf b;
    int e;

    *len = 0;
    pv_dynbuf_init(&b, cap);
    e = read_fd(fd, &b);
    if (e != 0) {
        pv_dynbuf_free(&b);
        *out = NULL;
        return e;
    }
    *out = b.buf == NULL ? pv_strdup("") : pv_dynbuf_take(&b, len);
    return *out == NULL ? ENOMEM : 0;
}

pv_result pv_file_read(const char *path, size_t cap, bool allow_stdin, char **out, size_t *len,
                       char *err, size_t errlen)
{
    struct pv_dynbuf b;
    struct stat st;
    bool is_stdin = allow_stdin && strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int e;

    *out = NULL;
    *len = 0;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        PV_BAIL(PV_ERR_IO);
    }
    e = fstat(fd, &st) != 0 ? errno : 0;
    if (e == 0 && !is_stdin && S_ISDIR(st.st_mode)) {
        e = EISDIR;
    }
    if (e == 0 && !is_stdin && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        PV_BAIL(PV_ERR_IO);
    }
    if (e == 0 && !is_stdin) {
        /* O_NONBLOCK only kept open(2) from waiting on a FIFO. */
        (void)fcntl(fd, F_SETFL, 0);
    }
    pv_dynbuf_init(&b, cap);
    if (e == 0) {
        e = read_fd(fd, &b);
    }
    if (!is_stdin) {
        close(fd);
    }
    if (e == EFBIG) {
        snprintf(err, errlen, "%s: larger than %zu bytes", path, cap);
    } else if (e != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(e));
    }
    if (e != 0) {
        pv_dynbuf_free(&b);
        PV_BAIL(e == EFBIG ? PV_ERR_TOOBIG : e == ENOMEM ? PV_ERR_NOMEM : PV_ERR_IO);
    }
    if (b.buf == NULL) {
        *out = pv_strdup("");
        *len = 0;
    } else {
        *out = pv_dynbuf_take(&b, len);
    }
    if (*out == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

const char *pv_file_reason(const char *path, const char *err)
{
    size_t n = strlen(path);

    if (strncmp(err, path, n) == 0 && err[n] == ':' && err[n + 1] == ' ') {
        return err + n + 2;
    }
    return err;
}

pv_result pv_file_readable(const char *path, char *err, size_t errlen)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    int e = 0;

    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        PV_BAIL(PV_ERR_IO);
    }
    if (fstat(fd, &st) != 0) {
        e = errno;
    } else if (S_ISDIR(st.st_mode)) {
        e = EISDIR;
    }
    close(fd);
    if (e != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        PV_BAIL(PV_ERR_IO);
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        PV_BAIL(PV_ERR_IO);
    }
    return PV_RESULT_OK;
}
