/* SPDX-License-Identifier: Apache-2.0 */
/* pv_log.c - the one logging module: timestamped lines on stderr */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
    struct timespec now;
    struct tm tm;

    if (level < min_level) {
        return;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ldZ %s %s: ", ts, now.tv_nsec / 1000000, log_prefix, tag);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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

void pv_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(PV_LOG_ERROR, "fatal", fmt, ap);
    va_end(ap);
    exit(2);
}
