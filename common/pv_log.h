/* SPDX-License-Identifier: Apache-2.0 */
/* pv_log.h - the one logging module (stderr, relayd-style) */
#ifndef PV_LOG_H
#define PV_LOG_H

#include <stdnoreturn.h>

enum pv_log_level { PV_LOG_DEBUG, PV_LOG_INFO, PV_LOG_WARN, PV_LOG_ERROR };

void pv_log_set_level(enum pv_log_level level);
void pv_log_set_prefix(const char *prefix);
void pv_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pv_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pv_log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pv_log_errorx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One access-log line of a server (httpd_server.c), in the same shape as
 * the others: "TS PREFIX access: ...". */
void pv_log_access(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only during startup and configuration load. */
noreturn void pv_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
