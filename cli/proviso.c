/* SPDX-License-Identifier: Apache-2.0 */
/* proviso.c - the proviso command: a table of subcommands
 *
 *   proviso validate FILE...
 *   proviso eval --policy FILE --binary PATH --method M --url URL [--ip ADDR]
 *   proviso prove [--baseline FILE] (--candidate F | --proposal F | --policy F) ...
 *   proviso check --candidate FILE --boundary FILE ...
 *   proviso corpus run PATH...
 *   proviso sandbox|policy|settings|rule ...   (the advisor's reviewer CLI)
 *   proviso help [CMD], proviso version
 *
 * Every subcommand reads its command line with pv_args_parse against its own
 * option table (common/pv_args.h), so all share one grammar.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_file.h"

static int cli_help(int argc, char **argv);
static int cli_version(int argc, char **argv);

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
    {"run", cli_run, "start host-side tool servers for a sandbox and register them"},
    {"help", cli_help, "describe the commands, or one command (help CMD)"},
    {"version", cli_version, "print the version"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: proviso <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < PV_ARRAY_LEN(commands); i++) {
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(out, "\n'proviso help CMD' or 'proviso CMD --help' describes one command.\n"
                 "\nExample:\n  proviso validate examples/policy.yaml\n"
                 "\nexit: 0 ok/allow/empty/within, 1 deny/findings/exceeds, "
                 "2 invalid input or usage, 3 unknown\n"
                 "advisor commands: 0 ok, 1 the advisor refused, 2 usage or unreadable input, "
                 "3 advisor unreachable or failed\n");
}

char *cli_read_file(const char *path, size_t cap, size_t *len)
{
    char err[PATH_MAX + 64];
    char *buf = NULL;

    if (!pv_ok(pv_file_read(path, cap, true, &buf, len, err, sizeof(err)))) {
        fprintf(stderr, "proviso: %s\n", err);
        return NULL;
    }
    return buf;
}

static int find_command(const char *name)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(commands); i++) {
        if (strcmp(name, commands[i].name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static int unknown_command(const char *name)
{
    fprintf(stderr, "proviso: unknown command '%s' (see 'proviso help')\n", name);
    return 2;
}

/* proviso help [CMD [SUBCMD]]: CMD's own --help. */
static int cli_help(int argc, char **argv)
{
    static char help_flag[] = "--help";
    char *args[4];
    int k;

    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (argc > 3) {
        fprintf(stderr, "proviso help: too many operands (see 'proviso help')\n");
        return 2;
    }
    k = find_command(argv[1]);
    if (k < 0) {
        return unknown_command(argv[1]);
    }
    args[0] = argv[1];
    args[1] = argc > 2 ? argv[2] : help_flag;
    args[2] = argc > 2 ? help_flag : NULL;
    args[3] = NULL;
    return commands[k].fn(argc > 2 ? 3 : 2, args);
}

static int cli_version(int argc, char **argv)
{
    static const struct pv_cmd cmd = {
        .prog = "proviso version",
        .synopsis = "",
        .summary = "Print the version of proviso.",
        .example = "proviso version",
    };
    struct pv_args a;

    switch (pv_args_parse(&cmd, argc, argv, &a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    if (a.npos > 0) {
        return pv_args_usage(&cmd, "unexpected operand '%s'", a.pos[0]);
    }
    printf("proviso %s\n", PACKAGE_VERSION);
    return 0;
}

int main(int argc, char **argv)
{
    int k;

    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("proviso %s\n", PACKAGE_VERSION);
        return 0;
    }
    k = find_command(argv[1]);
    if (k < 0) {
        return unknown_command(argv[1]);
    }
    return commands[k].fn(argc - 1, argv + 1);
}
