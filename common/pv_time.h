/* SPDX-License-Identifier: Apache-2.0 */
/* pv_time.h - deadlines for pthread_cond_timedwait
 *
 * A timed wait takes an absolute time on the condition variable's clock
 * (CLOCK_REALTIME unless pthread_condattr_setclock chose another): now
 * plus a number of milliseconds, the nanoseconds carried into seconds.
 */
#ifndef PV_TIME_H
#define PV_TIME_H

#include <time.h>

/* '*ts' := now on 'clock' + 'ms' milliseconds. */
static inline void pv_deadline(struct timespec *ts, clockid_t clock, unsigned ms)
{
    clock_gettime(clock, ts);
    ts->tv_sec += (time_t)(ms / 1000u);
    ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

#endif
