/* SPDX-License-Identifier: Apache-2.0 */
/* pv_log.c - the one logging module: timestamped lines on stderr */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/pv_log.h"

static enum pv_log_level min_level = PV_LOG_INFO;
static const char *log_prefix = "proviso";

void pv_log_set_level(enum pv_log_level level)
{
    min_level = level;
}

void pv_log_set_prefix(const char *prefix)
{
    log_prefix = prefix;
}

static void vlog(enum pv_log_level level, const char *tag, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void vlog(enum pv_log_level level, const char *tag, const char *fmt, va_list ap)
{
    char ts[32];
    char line[4096];
    struct timespec now;
    struct tm tm;
    int n;
    int m;
    size_t len;

    if (level < min_level) {
        return;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    /* The whole line in one buffer and one write(2): the servers log from
     * several threads, and separate writes of one line could interleave. */
    n = snprintf(line, sizeof(line), "%s.%03ldZ %s %s: ", ts, now.tv_nsec / 1000000, log_prefix,
                 tag);
    if (n < 0) {
        return;
    }
    m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    if (m < 0) {
        return;
    }
    len = (size_t)n + (size_t)m;
    if (len >= sizeof(line) - 1) {
        len = sizeof(line) - 5;
        memcpy(line + len, "...", 3); /* cut: the line says so */
        len += 3;
    }
    line[len++] = '\n';
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, line, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return;
        }
        memmove(line, line + w, len - (size_t)w);
        len -= (size_t)w;
    }
}

#define PV_LOG_FN(name, level, tag) \
    void name(const char *fmt, ...) \
    {                               \
        va_list ap;                 \
        va_start(ap, fmt);          \
        vlog(level, tag, fmt, ap);  \
        va_end(ap);                 \
    }

PV_LOG_FN(pv_log_debug, PV_LOG_DEBUG, "debug")
PV_LOG_FN(pv_log_info, PV_LOG_INFO, "info")
PV_LOG_FN(pv_log_warnx, PV_LOG_WARN, "warning")
PV_LOG_FN(pv_log_errorx, PV_LOG_ERROR, "error")
PV_LOG_FN(pv_log_access, PV_LOG_INFO, "access")

void pv_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(PV_LOG_ERROR, "fatal", fmt, ap);
    va_end(ap);
    exit(2);
}
