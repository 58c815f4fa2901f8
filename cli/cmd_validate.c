/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_validate.c - `proviso validate FILE...`: load and validate policies
 *
 * Each file is read (bounded by MODEL_MAX_POLICY_BYTES; "-" is stdin), then
 * parsed, validated and compiled exactly as the proxy and the prover would
 * load it. A good file prints "FILE: ok"; a bad one prints one line per
 * diagnostic, "FILE:LINE:COL: message". Warnings (model_policy_warnings)
 * follow as "FILE:LINE:COL: warning: message [code]". Exit 0 when every file
 * is ok, 2 when any file is missing, unreadable or invalid (or on usage
 * errors), or, with --strict, has a warning.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/model.h"

static void validate_usage(FILE *out)
{
    fprintf(out, "usage: proviso validate [--strict] FILE...\n"
                 "  Parse and validate each policy file (YAML or JSON; - reads stdin).\n"
                 "  Prints 'FILE: ok' or one 'FILE:LINE:COL: message' per problem.\n"
                 "  Warnings follow as 'FILE:LINE:COL: warning: message [code]'.\n"
                 "  Exit 0 when all files are valid, 2 otherwise (--strict: also on a warning).\n");
}

/* model_warn_fn: print one warning; count it in '*arg' (a size_t). */
static void print_warning(void *arg, enum model_warning w, const char *file, uint32_t line,
                          uint32_t col, const char *msg)
{
    size_t *n = arg;

    if (line > 0) {
        printf("%s:%u:%u: warning: %s [%s]\n", file != NULL ? file : "-", (unsigned)line,
               (unsigned)col, msg, model_warning_code(w));
    } else {
        printf("%s: warning: %s [%s]\n", file != NULL ? file : "-", msg, model_warning_code(w));
    }
    (*n)++;
}

/* 0 when 'path' holds a valid policy, 2 otherwise (or, 'strict', with
 * warnings). */
static int validate_one(const char *path, bool strict)
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
        size_t nwarn = 0;

        printf("%s: ok\n", path);
        model_policy_warnings(p, MODEL_WARN_FS, print_warning, &nwarn);
        if (strict && nwarn > 0) {
            printf("%s: --strict: %zu warning%s treated as error%s\n", path, nwarn,
                   nwarn == 1 ? "" : "s", nwarn == 1 ? "" : "s");
            rc = 2;
        }
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
    bool strict = false;

    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        validate_usage(stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--strict") == 0) {
        strict = true;
        first = 2;
    }
    if (argc > first && strcmp(argv[first], "--") == 0) {
        first++;
    }
    if (argc <= first) {
        validate_usage(stderr);
        return 2;
    }
    for (int i = first; i < argc; i++) {
        if (validate_one(argv[i], strict) != 0) {
            rc = 2;
        }
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "proviso: validate: cannot write output\n");
        rc = 2;
    }
    return rc;
}
