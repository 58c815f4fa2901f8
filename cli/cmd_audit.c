/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_audit.c - proviso audit pubkey|export|verify|replay (docs/audit.md)
 *
 * pubkey and export ask the advisor over HTTP (admin token); export
 * --data-dir runs `proviso-advisor --data-dir DIR --export-audit` instead,
 * so this command never links the store. verify and replay read an export
 * file an attacker may have touched: verify never trusts the file's own
 * key, only the one given with --pubkey.
 *
 * Exit statuses: verify 0 intact, 1 tampered, 2 unreadable (or usage);
 * replay 0 when every approval replays the same, 1 when any differs or is
 * a violation, 2 unreadable input, 3 no prover; pubkey/export as the other
 * advisor commands (0 ok, 1 refused, 2 usage, 3 unreachable).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cli/cli.h"
#include "cli/cli_replay.h"
#include "common/pv_args.h"

enum aopt {
    A_ADVISOR,
    A_TOKEN_FILE,
    A_SINCE,
    A_DATA_DIR,
    A_STORE,
    A_AUDIT_KEY,
    A_PUBKEY,
    A_PROVER,
    A_PROVER_TOKEN,
    A_FORMAT,
    A_THREADS,
    A__COUNT
};

/* Option names as the tables spell them (no dashes). */
static const char *const opt_names[A__COUNT] = {
    [A_ADVISOR] = "advisor",
    [A_TOKEN_FILE] = "token-file",
    [A_SINCE] = "since",
    [A_DATA_DIR] = "data-dir",
    [A_STORE] = "store",
    [A_AUDIT_KEY] = "audit-key-file",
    [A_PUBKEY] = "pubkey",
    [A_PROVER] = "prover",
    [A_PROVER_TOKEN] = "prover-token-file",
    [A_FORMAT] = "format",
    [A_THREADS] = "threads",
};

struct aargs {
    const char *opt[A__COUNT];
    const char *file;
    bool json;
    bool all_sigs;
};

#define OPT_ADVISOR                                        \
    {                                                      \
        "advisor", "URL",                                  \
            "the advisor (default $PROVISO_ADVISOR, else " \
            "http://127.0.0.1:8788)",                      \
            0                                              \
    }
#define OPT_TOKEN                                                                \
    {                                                                            \
        "token-file", "FILE", "the admin token (default $PROVISO_TOKEN_FILE)", 0 \
    }
#define OPT_FORMAT                                               \
    {                                                            \
        "format", "text|json", "output format (default text)", 0 \
    }
#define OPT_THREADS                                                           \
    {                                                                         \
        "threads", "N", "work on N threads (default: the number of cores)", 0 \
    }

static const struct pv_opt pubkey_opts[] = {OPT_ADVISOR, OPT_TOKEN, OPT_FORMAT};
static const struct pv_opt export_opts[] = {
    OPT_ADVISOR,
    OPT_TOKEN,
    {"since", "SEQ", "only the records after SEQ", 0},
    {"data-dir", "DIR", "export from the advisor's data directory, offline", 0},
    {"store", "URL", "with --data-dir: the advisor's store (sqlite:FILE or postgresql://...)", 0},
    {"audit-key-file", "FILE", "with --data-dir: the advisor's audit key, when not in DIR", 0},
};
static const struct pv_opt verify_opts[] = {
    {"pubkey", "KEY", "the advisor's public key: a file (PEM or base64) or the base64", 0},
    {"all-signatures", NULL, "check every record's signature, not only the last", 0},
    OPT_FORMAT,
    OPT_THREADS,
};
static const struct pv_opt replay_opts[] = {
    {"prover", "URL", "ask this proviso-prover (default: the prover in process)", 0},
    {"prover-token-file", "FILE", "its bearer token", 0},
    OPT_FORMAT,
    OPT_THREADS,
};

#define AUDIT_EPILOG "docs/audit.md says what each answer lets an auditor conclude."

static const struct pv_cmd audit_cmds[] = {
    {.prog = "proviso audit pubkey",
     .synopsis = "[--advisor URL] [--token-file FILE] [--format json]",
     .summary = "Print the advisor's audit public key (as `audit verify --pubkey` takes it).",
     .opts = pubkey_opts,
     .nopts = PV_ARRAY_LEN(pubkey_opts),
     .example = "proviso audit pubkey --advisor http://127.0.0.1:8788 > advisor.pub",
     .epilog = "exit: 0 ok, 1 the advisor refused, 2 usage, 3 the advisor unreachable"},
    {.prog = "proviso audit export",
     .synopsis = "[--advisor URL] [--token-file FILE] [--since SEQ] | --data-dir DIR "
                 "[--store URL] [--audit-key-file FILE] [--since SEQ]",
     .summary = "Write the signed decision record and the blobs it references (JSON lines)\n"
                "to stdout, from the advisor over HTTP or from its data directory.",
     .opts = export_opts,
     .nopts = PV_ARRAY_LEN(export_opts),
     .example = "proviso audit export --advisor http://127.0.0.1:8788 > audit.jsonl",
     .epilog = "exit: 0 ok, 1 the advisor refused, 2 usage, 3 the advisor unreachable"},
    {.prog = "proviso audit verify",
     .synopsis = "FILE --pubkey KEY [--all-signatures] [--format json]",
     .summary = "Check an export's chain, hashes, signatures, blob digests and sequence; name\n"
                "the first bad record and why.",
     .opts = verify_opts,
     .nopts = PV_ARRAY_LEN(verify_opts),
     .example = "proviso audit verify audit.jsonl --pubkey advisor.pub",
     .epilog = "exit: 0 intact, 1 tampered, 2 unreadable or usage. " AUDIT_EPILOG},
    {.prog = "proviso audit replay",
     .synopsis = "FILE [--prover URL --prover-token-file FILE] [--threads N] [--format json]",
     .summary = "Decide every approval of an export again from its recorded inputs and compare.",
     .opts = replay_opts,
     .nopts = PV_ARRAY_LEN(replay_opts),
     .example = "proviso audit replay audit.jsonl",
     .epilog = "exit: 0 nothing differs, 1 a difference or a violation, 2 unreadable input,\n"
               "3 no prover. " AUDIT_EPILOG},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: proviso audit pubkey|export|verify|replay [OPTIONS] (see 'proviso audit "
                 "CMD --help')\n"
                 "  pubkey  print the advisor's audit public key\n"
                 "  export  write the signed decision record (JSON lines)\n"
                 "  verify  check an export's chain, hashes and signatures\n"
                 "  replay  decide every approval of an export again\n");
}

/* Options of subcommand argv[1]; 'want_file': it takes the export file as
 * its operand. -1 to go on, else the exit status. */
static int parse(int argc, char **argv, bool want_file, struct aargs *x)
{
    const struct pv_cmd *cmd = NULL;
    struct pv_args a;
    const char *fmt;

    memset(x, 0, sizeof(*x));
    for (size_t i = 0; i < PV_ARRAY_LEN(audit_cmds); i++) {
        if (strcmp(audit_cmds[i].prog + strlen("proviso audit "), argv[1]) == 0) {
            cmd = &audit_cmds[i];
        }
    }
    if (cmd == NULL) {
        return 2;
    }
    switch (pv_args_parse(cmd, argc - 1, argv + 1, &a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    for (size_t k = 0; k < A__COUNT; k++) {
        for (size_t i = 0; i < cmd->nopts; i++) {
            if (strcmp(cmd->opts[i].name, opt_names[k]) == 0) {
                x->opt[k] = pv_args_get(&a, opt_names[k]);
            }
        }
    }
    if (strcmp(argv[1], "verify") == 0) {
        x->all_sigs = pv_args_has(&a, "all-signatures");
    }
    if (a.npos > (want_file ? 1 : 0)) {
        return pv_args_usage(cmd, "unexpected operand '%s'", a.pos[want_file ? 1 : 0]);
    }
    if (want_file && a.npos == 0) {
        return pv_args_usage(cmd, "the export file is required");
    }
    x->file = want_file ? a.pos[0] : NULL;
    fmt = x->opt[A_FORMAT];
    if (fmt != NULL && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
        return pv_args_usage(cmd, "unknown format '%s' (text or json)", fmt);
    }
    x->json = fmt != NULL && strcmp(fmt, "json") == 0;
    return -1;
}

static int since_of(const struct aargs *a, uint64_t *since)
{
    const char *s = a->opt[A_SINCE];

    *since = 0;
    if (s != NULL && !pv_ok(pv_parse_u64(s, strlen(s), INT64_MAX, since))) {
        fprintf(stderr, "proviso audit: --since wants a sequence number, not '%s'\n", s);
        return 2;
    }
    return 0;
}

/* ===========================================================================
 * pubkey, export (the advisor)
 * ========================================================================= */

static int open_advisor(const struct aargs *x, struct cli_adv *a)
{
    memset(a, 0, sizeof(*a));
    a->opt[CLI_O_ADVISOR] = x->opt[A_ADVISOR];
    a->opt[CLI_O_TOKEN_FILE] = x->opt[A_TOKEN_FILE];
    a->json = x->json;
    return cli_adv_connect(a);
}

static int cmd_pubkey(struct aargs *x)
{
    struct cli_adv a;
    struct cli_answer ans;
    int rc = open_advisor(x, &a);

    if (rc != 0) {
        return rc;
    }
    rc = cli_adv_call(&a, "GET", "/v1/audit/pubkey", NULL, &ans);
    if (rc == 0 && x->json) {
        cli_print_json(ans.body);
    } else if (rc == 0) {
        printf("%s\n", cli_str(ans.body, "public_key"));
    }
    cli_answer_clear(&ans);
    cli_http_free(a.http);
    return rc;
}

/* proviso-advisor next to this executable, else on PATH. */
static void advisor_exe(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n > 0) {
        char *slash;
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            if ((size_t)snprintf(out, len, "%s/proviso-advisor", self) < len &&
                access(out, X_OK) == 0) {
                return;
            }
        }
    }
    snprintf(out, len, "proviso-advisor");
}

static int export_offline(const struct aargs *x)
{
    static char data_dir_flag[] = "--data-dir";
    static char export_flag[] = "--export-audit";
    static char since_flag[] = "--since";
    static char store_flag[] = "--store";
    static char key_flag[] = "--audit-key-file";
    static const enum aopt passed[] = {A_DATA_DIR, A_STORE, A_AUDIT_KEY, A_SINCE};
    static char *const flags[] = {data_dir_flag, store_flag, key_flag, since_flag};
    char exe[PATH_MAX + 32];
    char *argv[3 + 2 * PV_ARRAY_LEN(passed)];
    char *vals[PV_ARRAY_LEN(passed)] = {NULL};
    int n = 0;

    advisor_exe(exe, sizeof(exe));
    argv[n++] = exe;
    for (size_t i = 0; i < PV_ARRAY_LEN(passed); i++) {
        if (x->opt[passed[i]] == NULL) {
            continue;
        }
        vals[i] = pv_strdup(x->opt[passed[i]]);
        if (vals[i] == NULL) {
            fprintf(stderr, "proviso audit export: out of memory\n");
            n = -1;
            break;
        }
        argv[n++] = flags[i];
        argv[n++] = vals[i];
        if (i == 0) {
            argv[n++] = export_flag;
        }
    }
    if (n > 0) {
        argv[n] = NULL;
        fflush(stdout);
        execvp(exe, argv);
        fprintf(stderr, "proviso audit export: cannot run %s: %s\n", exe, strerror(errno));
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(passed); i++) {
        free(vals[i]);
    }
    return 3;
}

static int cmd_export(struct aargs *x)
{
    struct cli_adv a;
    struct cli_answer ans;
    uint64_t since;
    char q[32];
    char *path;
    int rc = since_of(x, &since);

    if (rc != 0) {
        return rc;
    }
    if (x->opt[A_DATA_DIR] != NULL) {
        if (x->opt[A_ADVISOR] != NULL) {
            fprintf(stderr, "proviso audit export: use one of --advisor and --data-dir\n");
            return 2;
        }
        return export_offline(x);
    }
    if (x->opt[A_STORE] != NULL || x->opt[A_AUDIT_KEY] != NULL) {
        fprintf(stderr, "proviso audit export: --store and --audit-key-file go with --data-dir\n");
        return 2;
    }
    rc = open_advisor(x, &a);
    if (rc != 0) {
        return rc;
    }
    snprintf(q, sizeof(q), "%llu", (unsigned long long)since);
    path = cli_http_path((const char *const[]){"v1", "audit", "export", NULL}, "since", q);
    rc = path != NULL ? cli_http_get_raw(a.http, path, &ans) : 3;
    free(path);
    if (rc == 0) {
        if (fwrite(ans.raw, 1, ans.raw_len, stdout) != ans.raw_len || fflush(stdout) != 0) {
            fprintf(stderr, "proviso audit export: cannot write to stdout\n");
            rc = 3;
        }
    } else if (ans.body != NULL) {
        fprintf(stderr, "proviso: %s: %s\n", cli_str(ans.body, "error"),
                cli_str(ans.body, "detail"));
    } else {
        fprintf(stderr, "proviso: %s\n", ans.error);
    }
    cli_answer_clear(&ans);
    cli_http_free(a.http);
    return rc;
}

/* ===========================================================================
 * verify
 * ========================================================================= */

/* --pubkey: a readable file's content, else the text itself. */
static struct audit_key *trusted_key(const char *arg)
{
    struct stat st;
    char err[256];
    struct audit_key *k;
    size_t len = 0;

    if (stat(arg, &st) == 0) {
        char *text = cli_read_file(arg, 65536, &len);
        if (text == NULL) {
            fprintf(stderr, "proviso audit: --pubkey %s: cannot read it\n", arg);
            return NULL;
        }
        k = audit_key_public(text, len, err, sizeof(err));
        free(text);
    } else {
        k = audit_key_public(arg, strlen(arg), err, sizeof(err));
    }
    if (k == NULL) {
        fprintf(stderr, "proviso audit: --pubkey: %s\n", err);
    }
    return k;
}

static unsigned threads_of(const struct aargs *x)
{
    const char *s = x->opt[A_THREADS];
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t v = 0;

    if (s != NULL && pv_ok(pv_parse_u64(s, strlen(s), 16, &v)) && v > 0) {
        return (unsigned)v;
    }
    return n > 0 ? (unsigned)(n > 16 ? 16 : n) : 1;
}

/* docs/audit.md#state: an intact chain's effective revisions, composed
 * again from its own records; a hash that differs makes it tampered. */
static void recompute(const char *buf, size_t len, struct audit_report *r,
                      struct cli_recompute *out)
{
    json_t *records = NULL;
    json_t *blobs = NULL;
    char err[512];

    if (!pv_ok(audit_load(buf, len, &records, &blobs, err, sizeof(err)))) {
        r->status = AUDIT_UNREADABLE;
        snprintf(r->reason, sizeof(r->reason), "%s", err);
        return;
    }
    cli_recompute(records, blobs, r->first_seq > 1, out);
    if (out->bad) {
        r->status = AUDIT_TAMPERED;
        r->bad_seq = out->bad_seq;
        r->bad_line = out->bad_line;
        snprintf(r->reason, sizeof(r->reason), "%s", out->reason);
    }
    json_decref(records);
    json_decref(blobs);
}

static int cmd_verify(struct aargs *x)
{
    static const char *const names[] = {"intact", "tampered", "unreadable"};
    struct cli_recompute rc_out;
    struct audit_report r;
    struct audit_key *k;
    size_t len = 0;
    char *buf;
    int rc;

    if (x->opt[A_PUBKEY] == NULL) {
        fprintf(stderr, "proviso audit verify: --pubkey KEY is required (the key you trust, "
                        "from `proviso audit pubkey`)\n");
        return 2;
    }
    k = trusted_key(x->opt[A_PUBKEY]);
    if (k == NULL) {
        return 2;
    }
    buf = cli_read_file(x->file, AUDIT_FILE_MAX, &len);
    if (buf == NULL) {
        memset(&r, 0, sizeof(r));
        r.status = AUDIT_UNREADABLE;
        snprintf(r.reason, sizeof(r.reason),
                 "%s: cannot read the file (missing, unreadable or "
                 "larger than 1 GiB)",
                 x->file);
    } else {
        audit_verify(buf, len, k, threads_of(x), x->all_sigs, &r);
    }
    memset(&rc_out, 0, sizeof(rc_out));
    if (r.status == AUDIT_INTACT) {
        recompute(buf, len, &r, &rc_out);
    }
    free(buf);
    audit_key_free(k);
    rc = r.status == AUDIT_INTACT ? 0 : r.status == AUDIT_TAMPERED ? 1 : 2;
    if (x->json) {
        json_t *j =
            json_pack("{s:s,s:I,s:I,s:I,s:I,s:s}", "status", names[r.status], "records",
                      (json_int_t)r.records, "blobs", (json_int_t)r.blobs, "first_seq",
                      (json_int_t)r.first_seq, "last_seq", (json_int_t)r.last_seq, "head", r.head);
        if (j != NULL) {
            json_object_set_new(j, "revisions_recomputed",
                                json_integer((json_int_t)rc_out.recomputed));
            json_object_set_new(j, "revisions_not_recomputable",
                                json_integer((json_int_t)rc_out.legacy));
            json_object_set_new(j, "state_checked", json_boolean(r.state_checked));
        }
        if (j != NULL && r.status != AUDIT_INTACT) {
            json_object_set_new(j, "bad",
                                json_pack("{s:I,s:I,s:s}", "seq", (json_int_t)r.bad_seq, "line",
                                          (json_int_t)r.bad_line, "reason", r.reason));
        }
        if (j == NULL) {
            fprintf(stderr, "proviso: out of memory\n");
            return 2;
        }
        cli_print_json(j);
        json_decref(j);
    } else if (r.status == AUDIT_INTACT) {
        printf("intact: %zu records (seq %lld..%lld), %zu blobs, head %s\n", r.records,
               (long long)r.first_seq, (long long)r.last_seq, r.blobs, r.head);
        printf("revisions: %zu recomputed from the records, %zu not recomputable (recorded "
               "before records named their base and chunks, or resting on records before the "
               "export)\n",
               rc_out.recomputed, rc_out.legacy);
        printf("store state: %s\n",
               r.state_checked ? "the state at the export is the one the records imply"
                               : "not checked (the export does not start at record 1, or its "
                                 "header carries no state)");
    } else if (r.status == AUDIT_TAMPERED) {
        if (r.bad_seq > 0) {
            printf("tampered: record seq %lld (line %zu): %s\n", (long long)r.bad_seq, r.bad_line,
                   r.reason);
        } else {
            printf("tampered: line %zu: %s\n", r.bad_line, r.reason);
        }
    } else {
        printf("unreadable: %s\n", r.reason);
    }
    return rc;
}

/* ===========================================================================
 * Dispatch
 * ========================================================================= */

int cli_audit(int argc, char **argv)
{
    struct aargs x;
    int rc;

    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "pubkey") == 0) {
        rc = parse(argc, argv, false, &x);
        return rc >= 0 ? rc : cmd_pubkey(&x);
    }
    if (strcmp(argv[1], "export") == 0) {
        rc = parse(argc, argv, false, &x);
        return rc >= 0 ? rc : cmd_export(&x);
    }
    if (strcmp(argv[1], "verify") == 0) {
        rc = parse(argc, argv, true, &x);
        return rc >= 0 ? rc : cmd_verify(&x);
    }
    if (strcmp(argv[1], "replay") == 0) {
        struct cli_replay_opts o;
        rc = parse(argc, argv, true, &x);
        if (rc >= 0) {
            return rc;
        }
        if ((x.opt[A_PROVER] == NULL) != (x.opt[A_PROVER_TOKEN] == NULL)) {
            fprintf(stderr, "proviso audit replay: --prover and --prover-token-file go together\n");
            return 2;
        }
        memset(&o, 0, sizeof(o));
        o.file = x.file;
        o.prover_url = x.opt[A_PROVER];
        o.prover_token_file = x.opt[A_PROVER_TOKEN];
        o.json = x.json;
        o.threads = threads_of(&x);
        return cli_replay(&o);
    }
    fprintf(stderr, "proviso audit: unknown command '%s' (see 'proviso audit --help')\n", argv[1]);
    return 2;
}
