/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_validate.c - `proviso validate FILE...`: load and validate policies
 *
 * Each file is read (bounded by MODEL_MAX_POLICY_BYTES; "-" is stdin), then
 * parsed, validated and compiled exactly as the proxy and the prover would
 * load it. A good file prints "FILE: ok"; a bad one prints one line per
 * diagnostic, "FILE:LINE:COL: message". Exit 0 when every file is ok, 2 when
 * any file is missing, unreadable or invalid (or on usage errors).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/model.h"

static void validate_usage(FILE *out)
{
    fprintf(out, "usage: proviso validate FILE...\n"
                 "  Parse and validate each policy file (YAML or JSON; - reads stdin).\n"
                 "  Prints 'FILE: ok' or one 'FILE:LINE:COL: message' per problem.\n"
                 "  Exit 0 when all files are valid, 2 otherwise.\n");
}

/* 0 when 'path' holds a valid policy, 2 otherwise. */
static int validate_one(const char *path)
{
    struct model_diags *diags;
    struct model_policy *p;
    size_t len = 0;
    char *buf;
    int rc = 0;

    buf = cli_read_file(path, MODEL_MAX_POLICY_BYTES, &len);
    if (buf == NULL) {
        return 2;
    }
    diags = model_diags_new();
    if (diags == NULL) {
        fprintf(stderr, "proviso: %s: out of memory\n", path);
        free(buf);
        return 2;
    }
    p = model_policy_load(path, buf, len, MODEL_FMT_AUTO, diags);
    if (p != NULL && model_diags_count(diags) == 0) {
        printf("%s: ok\n", path);
    } else {
        size_t n = model_diags_count(diags);
        rc = 2;
        if (n == 0) {
            printf("%s: invalid policy\n", path);
        }
        for (size_t i = 0; i < n; i++) {
            const char *line = model_diags_line(diags, i);
            printf("%s\n", line != NULL ? line : "(out of memory)");
        }
    }
    model_policy_free(p);
    model_diags_free(diags);
    free(buf);
    return rc;
}

int cli_validate(int argc, char **argv)
{
    int first = 1;
    int rc = 0;

    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        validate_usage(stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--") == 0) {
        first = 2;
    }
    if (argc <= first) {
        validate_usage(stderr);
        return 2;
    }
    for (int i = first; i < argc; i++) {
        if (validate_one(argv[i]) != 0) {
            rc = 2;
        }
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "proviso: validate: cannot write output\n");
        rc = 2;
    }
    return rc;
}
