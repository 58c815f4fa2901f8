/* SPDX-License-Identifier: Apache-2.0 */
/* pv_token.c - read a bearer token from a file or a descriptor (pv_token.h)
 *
 * The bytes are read into a stack buffer one token and some slack long, so
 * an oversized file is refused without reading it all; the buffer is wiped
 * on every path (explicit_bzero: the compiler may not drop it).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_token.h"

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Read up to 'cap' bytes; the count, or -1 with errno. */
static ssize_t read_upto(int fd, unsigned char *buf, size_t cap)
{
    size_t n = 0;

    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return -1;
        }
        if (r == 0) {
            break;
        }
        n += (size_t)r;
    }
    return (ssize_t)n;
}

void pv_token_wipe_free(char *p, size_t len)
{
    if (p != NULL) {
        explicit_bzero(p, len);
        free(p);
    }
}

pv_result pv_token_read(const char *path, int fd, char **out, size_t *len, unsigned *mode,
                        char *err, size_t errlen)
{
    unsigned char buf[PV_TOKEN_MAX + 64];
    struct stat st;
    char range[64];
    const char *why = NULL;
    int code = PV_ERR_IO;
    bool own = fd < 0;
    ssize_t n = -1;
    size_t a = 0;
    size_t b = 0;

    *out = NULL;
    *len = 0;
    *mode = 0;
    if (own) {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
    if (fd < 0) {
        why = strerror(errno);
    } else if (own && fstat(fd, &st) != 0) {
        why = strerror(errno);
    } else if (own && !S_ISREG(st.st_mode)) {
        /* the words of common/pv_file.h, as for every other file */
        why = S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file";
    } else {
        if (own) {
            *mode = (unsigned)(st.st_mode & 07777);
            (void)fcntl(fd, F_SETFL, 0); /* O_NONBLOCK only guarded open(2) */
        }
        n = read_upto(fd, buf, sizeof(buf));
        why = n < 0 ? strerror(errno) : NULL;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (why == NULL) {
        b = (size_t)n;
        while (a < b && is_space(buf[a])) {
            a++;
        }
        while (b > a && is_space(buf[b - 1])) {
            b--;
        }
        code = PV_ERR_PARSE;
        if ((size_t)n == sizeof(buf) || b - a < PV_TOKEN_MIN || b - a > PV_TOKEN_MAX) {
            snprintf(range, sizeof(range), "a token is %u..%u bytes", PV_TOKEN_MIN, PV_TOKEN_MAX);
            why = range;
        }
        for (size_t i = a; why == NULL && i < b; i++) {
            if (buf[i] < 0x21 || buf[i] > 0x7e) {
                why = "a token is printable ASCII without spaces";
            }
        }
    }
    if (why == NULL) {
        *out = pv_malloc(b - a + 1);
        if (*out == NULL) {
            code = PV_ERR_NOMEM;
            why = "out of memory";
        } else {
            memcpy(*out, buf + a, b - a);
            (*out)[b - a] = '\0';
            *len = b - a;
        }
    }
    explicit_bzero(buf, sizeof(buf));
    if (why != NULL) {
        snprintf(err, errlen, "%s: %s", path, why);
        PV_BAIL(code);
    }
    return PV_RESULT_OK;
}
