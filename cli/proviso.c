/* SPDX-License-Identifier: Apache-2.0 */
/* proviso.c - the proviso command: a table of subcommands
 *
 *   proviso validate FILE...
 *   proviso eval --policy FILE --binary PATH --method M --url URL [--ip ADDR]
 *   proviso prove [--baseline FILE] (--candidate F | --proposal F | --policy F) ...
 *   proviso check --candidate FILE --boundary FILE ...
 *   proviso corpus run PATH...
 *   proviso sandbox|policy|settings|rule ...   (the advisor's reviewer CLI)
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_dynbuf.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"validate", cli_validate, "validate policy files"},
    {"eval", cli_eval, "decide one request under a policy"},
    {"prove", cli_prove, "prove what new authority a change grants"},
    {"check", cli_check, "check that a policy stays within a boundary"},
    {"corpus", cli_corpus, "run corpus cases (corpus run PATH...)"},
    {"sandbox", cli_sandbox, "advisor: create, list, show, delete sandboxes"},
    {"policy", cli_policy, "advisor: get or set a sandbox's policy"},
    {"settings", cli_settings, "advisor: get, set, delete settings"},
    {"rule", cli_rule, "advisor: review proposals (list, get, approve, reject, ...)"},
    {"audit", cli_audit, "advisor: export, verify and replay the decision record"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: proviso <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < PV_ARRAY_LEN(commands); i++) {
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(out, "\nexit: 0 ok/allow/empty/within, 1 deny/findings/exceeds, "
                 "2 invalid input, 3 unknown\n"
                 "advisor commands: 0 ok, 1 the advisor refused, 2 usage or unreadable input, "
                 "3 advisor unreachable or failed\n");
}

char *cli_read_file(const char *path, size_t cap, size_t *len)
{
    struct pv_dynbuf b;
    FILE *f;
    char chunk[65536];
    size_t n;

    f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "proviso: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    pv_dynbuf_init(&b, cap);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (!pv_ok(pv_dynbuf_add(&b, chunk, n))) {
            fprintf(stderr, "proviso: %s: file larger than %zu bytes\n", path, cap);
            pv_dynbuf_free(&b);
            if (f != stdin) {
                fclose(f);
            }
            return NULL;
        }
    }
    if (ferror(f)) {
        fprintf(stderr, "proviso: %s: read error\n", path);
        pv_dynbuf_free(&b);
        if (f != stdin) {
            fclose(f);
        }
        return NULL;
    }
    if (f != stdin) {
        fclose(f);
    }
    return pv_dynbuf_take(&b, len);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("proviso %s\n", PACKAGE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(commands); i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            return commands[i].fn(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "proviso: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
