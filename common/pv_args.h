/* SPDX-License-Identifier: Apache-2.0 */
/* pv_args.h - the long-option grammar every proviso server accepts
 *
 * "--name VALUE" and "--name=VALUE" are the same option; a missing value
 * and a malformed number end the process with one line on stderr (exit 2,
 * pv_fatal), as start-up errors do.
 */
#ifndef PV_ARGS_H
#define PV_ARGS_H

#include <stdint.h>

/* When argv[*i] is option 'name', its value (advancing *i past a separate
 * value); NULL when argv[*i] is another option. */
const char *pv_opt_value(int argc, char **argv, int *i, const char *name);
/* 's' as a number in 0..max, or fatal naming 'what'. */
uint64_t pv_opt_number(const char *s, uint64_t max, const char *what);

#endif
