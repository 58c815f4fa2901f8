/* SPDX-License-Identifier: Apache-2.0 */
/* pv_args.c - the one command-line grammar of every proviso executable
 *
 * The option table is the only description of a command line: the parser,
 * the usage errors and the --help text all read it, so they cannot drift
 * apart. The man pages and the bash completion are checked against --help
 * by tests/cli_grammar.sh and tests/install.sh.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv.h"
#include "common/pv_args.h"
#include "common/pv_log.h"

/* The table index of 'name' ('len' bytes), or -1. */
static int find_opt(const struct pv_cmd *cmd, const char *name, size_t len)
{
    for (size_t k = 0; k < cmd->nopts; k++) {
        if (strlen(cmd->opts[k].name) == len && strncmp(cmd->opts[k].name, name, len) == 0) {
            return (int)k;
        }
    }
    return -1;
}

static int lookup(const struct pv_args *a, const char *name)
{
    int k = find_opt(a->cmd, name, strlen(name));

    if (k < 0) {
        /* Asking for an option the table does not declare is our bug. */
        pv_log_errorx("%s: option --%s is not in the table of '%s'", __func__, name, a->cmd->prog);
        abort();
    }
    return k;
}

int pv_args_usage(const struct pv_cmd *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", cmd->prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see '%s --help')\n", cmd->prog);
    return 2;
}

/* Options longer than this get their description on the next line. */
#define HELP_COLUMN 24

void pv_args_help(const struct pv_cmd *cmd, FILE *out)
{
    int width = (int)strlen("-h, --help");

    fprintf(out, "usage: %s %s\n\n%s\n\noptions:\n", cmd->prog, cmd->synopsis, cmd->summary);
    for (size_t k = 0; k < cmd->nopts; k++) {
        const struct pv_opt *o = &cmd->opts[k];
        int w = 2 + (int)strlen(o->name) + (o->arg != NULL ? 1 + (int)strlen(o->arg) : 0);
        if ((o->flags & (PV_OPT_REFUSE | PV_OPT_HIDDEN)) == 0 && w > width && w <= HELP_COLUMN) {
            width = w;
        }
    }
    for (size_t k = 0; k < cmd->nopts; k++) {
        const struct pv_opt *o = &cmd->opts[k];
        int w = 2 + (int)strlen(o->name) + (o->arg != NULL ? 1 + (int)strlen(o->arg) : 0);
        if ((o->flags & (PV_OPT_REFUSE | PV_OPT_HIDDEN)) != 0) {
            continue;
        }
        fprintf(out, "  --%s%s%s", o->name, o->arg != NULL ? " " : "",
                o->arg != NULL ? o->arg : "");
        if (w > width) {
            fprintf(out, "\n  %*s  %s\n", width, "", o->help);
        } else {
            fprintf(out, "%*s  %s\n", width - w, "", o->help);
        }
    }
    fprintf(out, "  %-*s  %s\n", width, "-h, --help", "show this help and exit");
    if (cmd->version != NULL) {
        fprintf(out, "  %-*s  %s\n", width, "--version", "show the version and exit");
    }
    fprintf(out, "\nExample:\n");
    for (const char *l = cmd->example; *l != '\0';) {
        size_t n = strcspn(l, "\n");
        fprintf(out, "  %.*s\n", (int)n, l);
        l += n;
        if (*l == '\n') {
            l++;
        }
    }
    if (cmd->epilog != NULL) {
        fprintf(out, "\n%s\n", cmd->epilog);
    }
}

/* Record option 'k' with 'value'; false (reported) when it may not repeat
 * or the line holds too many options. */
static bool record(const struct pv_cmd *cmd, struct pv_args *a, int k, const char *value)
{
    const struct pv_opt *o = &cmd->opts[k];

    if (a->count[k] > 0 && (o->flags & PV_OPT_REPEAT) == 0 && !cmd->last_wins) {
        pv_args_usage(cmd, "option '--%s' given twice", o->name);
        return false;
    }
    if (a->nseen >= PV_ARGS_MAX_SEEN) {
        pv_args_usage(cmd, "more than %d options", PV_ARGS_MAX_SEEN);
        return false;
    }
    a->seen[a->nseen].opt = (unsigned)k;
    a->seen[a->nseen].value = value;
    a->nseen++;
    a->value[k] = value;
    a->count[k]++;
    return true;
}

enum pv_args_status pv_args_parse(const struct pv_cmd *cmd, int argc, char **argv,
                                  struct pv_args *a)
{
    bool operands_only = false;
    int npos = 0;

    memset(a, 0, sizeof(*a));
    a->cmd = cmd;
    if (cmd->nopts > PV_ARGS_MAX_OPTS) {
        pv_log_errorx("%s: '%s' declares too many options", __func__, cmd->prog);
        abort();
    }
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        const char *eq;
        size_t nlen;
        int k;

        if (operands_only || arg[0] != '-' || strcmp(arg, "-") == 0) {
            /* Operands go to the front, in order; only option strings were
             * passed over, and their pointers are already recorded. */
            argv[1 + npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            operands_only = true;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            pv_args_help(cmd, stdout);
            return PV_ARGS_EXIT0;
        }
        if (cmd->version != NULL && strcmp(arg, "--version") == 0) {
            printf("%s\n", cmd->version);
            return PV_ARGS_EXIT0;
        }
        if (arg[1] != '-') {
            pv_args_usage(cmd, "unknown option '%s'", arg);
            return PV_ARGS_USAGE;
        }
        eq = strchr(arg + 2, '=');
        nlen = eq != NULL ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
        k = find_opt(cmd, arg + 2, nlen);
        if (k < 0) {
            pv_args_usage(cmd, "unknown option '%.*s'", (int)(nlen + 2), arg);
            return PV_ARGS_USAGE;
        }
        if ((cmd->opts[k].flags & PV_OPT_REFUSE) != 0) {
            pv_args_usage(cmd, "option '--%s' is not accepted: %s", cmd->opts[k].name,
                          cmd->opts[k].help);
            return PV_ARGS_USAGE;
        }
        if (cmd->opts[k].arg == NULL) {
            if (eq != NULL) {
                pv_args_usage(cmd, "option '--%s' takes no value", cmd->opts[k].name);
                return PV_ARGS_USAGE;
            }
            if (!record(cmd, a, k, "")) {
                return PV_ARGS_USAGE;
            }
            continue;
        }
        if (eq == NULL && i + 1 >= argc) {
            pv_args_usage(cmd, "option '--%s' needs a value (%s)", cmd->opts[k].name,
                          cmd->opts[k].arg);
            return PV_ARGS_USAGE;
        }
        if (!record(cmd, a, k, eq != NULL ? eq + 1 : argv[++i])) {
            return PV_ARGS_USAGE;
        }
    }
    a->pos = argv + 1;
    a->npos = npos;
    return PV_ARGS_OK;
}

const char *pv_args_get(const struct pv_args *a, const char *name)
{
    return a->value[lookup(a, name)];
}

bool pv_args_has(const struct pv_args *a, const char *name)
{
    return a->value[lookup(a, name)] != NULL;
}

unsigned pv_args_count(const struct pv_args *a, const char *name)
{
    return a->count[lookup(a, name)];
}

const char *pv_args_nth(const struct pv_args *a, const char *name, unsigned n)
{
    unsigned k = (unsigned)lookup(a, name);

    for (unsigned i = 0; i < a->nseen; i++) {
        if (a->seen[i].opt == k) {
            if (n == 0) {
                return a->seen[i].value;
            }
            n--;
        }
    }
    return NULL;
}

bool pv_args_number(const struct pv_args *a, const char *name, uint64_t min, uint64_t max,
                    uint64_t *out)
{
    const char *s = pv_args_get(a, name);
    uint64_t v = 0;

    if (s == NULL) {
        return true;
    }
    if (!pv_ok(pv_parse_u64(s, strlen(s), max, &v)) || v < min) {
        pv_args_usage(a->cmd, "option '--%s' wants a number in %llu..%llu, not '%s'", name,
                      (unsigned long long)min, (unsigned long long)max, s);
        return false;
    }
    *out = v;
    return true;
}

uint64_t pv_opt_number(const char *s, uint64_t max, const char *what)
{
    uint64_t v = 0;

    if (!pv_ok(pv_parse_u64(s, strlen(s), max, &v))) {
        pv_fatal("%s: not a number in 0..%llu: '%s'", what, (unsigned long long)max, s);
    }
    return v;
}

void pv_args_server(const struct pv_cmd *cmd, int argc, char **argv, struct pv_args *a,
                    struct pv_server_opts *out)
{
    uint64_t v = 0;

    memset(out, 0, sizeof(*out));
    out->token_fd = -1;
    switch (pv_args_parse(cmd, argc, argv, a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        exit(0);
    case PV_ARGS_USAGE:
        exit(2);
    }
    if (a->npos > 0) {
        exit(pv_args_usage(cmd, "unexpected operand '%s'", a->pos[0]));
    }
    if (!pv_args_number(a, "port", 0, 65535, &v)) {
        exit(2);
    }
    out->have_port = pv_args_has(a, "port");
    out->port = (uint16_t)v;
    v = 0;
    if (!pv_args_number(a, "token-fd", 0, 1u << 20, &v)) {
        exit(2);
    }
    out->have_fd = pv_args_has(a, "token-fd");
    out->token_fd = out->have_fd ? (int)v : -1;
}
