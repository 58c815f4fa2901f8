/* SPDX-License-Identifier: Apache-2.0 */
/* pv_args.c - the long-option grammar every proviso server accepts */
#include "config.h"

#include <string.h>

#include "common/pv.h"
#include "common/pv_args.h"
#include "common/pv_log.h"

const char *pv_opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);

    if (strncmp(argv[*i], name, n) != 0) {
        return NULL;
    }
    if (argv[*i][n] == '=') {
        return argv[*i] + n + 1;
    }
    if (argv[*i][n] != '\0') {
        return NULL;
    }
    if (*i + 1 >= argc) {
        pv_fatal("%s needs a value", name);
    }
    (*i)++;
    return argv[*i];
}

uint64_t pv_opt_number(const char *s, uint64_t max, const char *what)
{
    uint64_t v = 0;

    if (!pv_ok(pv_parse_u64(s, strlen(s), max, &v))) {
        pv_fatal("%s: not a number in 0..%llu: '%s'", what, (unsigned long long)max, s);
    }
    return v;
}
