/* SPDX-License-Identifier: Apache-2.0 */
/* pv_args.h - the one command-line grammar of every proviso executable
 *
 * Each command declares a table of its options (name, value placeholder,
 * one-line description) and a struct pv_cmd around it (synopsis, summary,
 * example). pv_args_parse reads argv against that table:
 *
 *   --name VALUE and --name=VALUE   the same option
 *   --flag                           an option without a value (no "=")
 *   -h, --help                       the help text, built from the table
 *   --version                        when the command has a version line
 *   --                               the rest are operands
 *   -                                an operand (stdin, by convention)
 *
 * anything else that starts with '-' is an unknown option: one line on
 * stderr, "PROG: unknown option '--x' (see 'PROG --help')", and exit status
 * 2. Options may come before, between or after the operands.
 */
#ifndef PV_ARGS_H
#define PV_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PV_ARGS_MAX_OPTS 32 /* options in one table */
#define PV_ARGS_MAX_SEEN 64 /* option occurrences in one command line */

enum pv_opt_flags {
    PV_OPT_REPEAT = 1u << 0, /* may be given more than once (pv_args_nth) */
    PV_OPT_REFUSE = 1u << 1, /* never accepted: 'help' is the reason (hidden) */
    PV_OPT_HIDDEN = 1u << 2, /* accepted, not listed in --help */
};

/* One option: 'name' without the dashes; 'arg' the value placeholder
 * ("FILE"), NULL for a flag; 'help' one line. */
struct pv_opt {
    const char *name;
    const char *arg;
    const char *help;
    unsigned flags;
};

/* One command: 'prog' as the user types it ("proviso validate"), 'synopsis'
 * what follows it in the usage line, 'summary' and 'epilog' free text
 * (epilog may be NULL), 'example' one or more lines, 'version' the
 * --version line (NULL: no --version). 'last_wins': an option given twice
 * takes the last value (the servers, as getopt does, so a script or unit
 * can override a default argument); otherwise it is a usage error (the
 * proviso subcommands, where a second --policy is a mistake). Strings are
 * static. */
struct pv_cmd {
    const char *prog;
    const char *synopsis;
    const char *summary;
    const struct pv_opt *opts;
    size_t nopts;
    const char *example;
    const char *epilog;
    const char *version;
    bool last_wins;
};

/* A parsed command line. Strings are borrowed from argv. */
struct pv_args {
    const struct pv_cmd *cmd;
    const char *value[PV_ARGS_MAX_OPTS]; /* last value; "" for a flag; NULL absent */
    unsigned count[PV_ARGS_MAX_OPTS];
    struct {
        unsigned opt;
        const char *value;
    } seen[PV_ARGS_MAX_SEEN];
    unsigned nseen;
    char **pos; /* the operands, in order (argv reordered in place) */
    int npos;
};

enum pv_args_status {
    PV_ARGS_OK,    /* go on */
    PV_ARGS_EXIT0, /* --help or --version was printed: exit 0 */
    PV_ARGS_USAGE, /* a usage error was printed on stderr: exit 2 */
};

/* Parse argv[1..argc-1] (argv[0] is the command's own name) against 'cmd'
 * into 'a'. Operands are moved to the front of argv[1..] (a->pos points
 * there); option strings are not copied. Prints help, version or the
 * usage error itself. */
enum pv_args_status pv_args_parse(const struct pv_cmd *cmd, int argc, char **argv,
                                  struct pv_args *a);

/* The value of option 'name' (borrowed), NULL when absent; "" for a flag.
 * 'name' must be in the table (an unknown name is our bug: abort). */
const char *pv_args_get(const struct pv_args *a, const char *name);
bool pv_args_has(const struct pv_args *a, const char *name);
/* How many times option 'name' was given. */
unsigned pv_args_count(const struct pv_args *a, const char *name);
/* The 'n'th value (0-based) of a repeatable option, NULL past the last. */
const char *pv_args_nth(const struct pv_args *a, const char *name, unsigned n);

/* Print "PROG: MESSAGE (see 'PROG --help')" on stderr; returns 2, the usage
 * exit status, so callers can "return pv_args_usage(...)". */
int pv_args_usage(const struct pv_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The full help text of 'cmd' (usage, summary, options, example, epilog). */
void pv_args_help(const struct pv_cmd *cmd, FILE *out);

/* The value of 'name' as a number in 'min'..'max' into '*out'; on a bad
 * number prints the usage error and returns false. An absent option leaves
 * '*out' alone and returns true. */
bool pv_args_number(const struct pv_args *a, const char *name, uint64_t min, uint64_t max,
                    uint64_t *out);

/* What both HTTP servers read the same way: --port and --token-fd. */
struct pv_server_opts {
    bool have_port;
    uint16_t port;
    bool have_fd;
    int token_fd; /* -1 when absent */
};
/* A server's command line: parse 'cmd' into 'a' (exit 0 after --help or
 * --version; exit 2 on a usage error or an operand) and read --port and
 * --token-fd (both must be in the table) into 'out'. */
void pv_args_server(const struct pv_cmd *cmd, int argc, char **argv, struct pv_args *a,
                    struct pv_server_opts *out);

/* 's' as a number in 0..max, or fatal naming 'what' (start-up only). */
uint64_t pv_opt_number(const char *s, uint64_t max, const char *what);

#endif
