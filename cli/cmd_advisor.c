/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_advisor.c - the reviewer and operator commands: options, the table
 *
 *   proviso sandbox create|list|show|delete ...
 *   proviso policy get|set SANDBOX ...
 *   proviso settings get|set|delete [KEY [VALUE]] (--global | --sandbox NAME)
 *   proviso rule list|get|approve|approve-suggestion|reject|approve-all|undo|edit|clear|
 *                history
 *
 * Every subcommand is one row of 'subcmds': the options it takes, the ones
 * it needs, how many operands, its help and example, and the function that
 * runs it. One parser reads every command line against its row
 * ("--opt value" and "--opt=value"; an unknown option is a usage error), so
 * the commands themselves only talk to the advisor and print.
 *
 * The admin token comes from --token-file FILE or $PROVISO_TOKEN_FILE (a
 * file, never a value on the command line or in the environment); it is
 * wiped once the client is gone. --format json prints the advisor's answer
 * object as it came, indented; text is for a reviewer's eyes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_dynbuf.h"
#include "common/pv_settings.h"
#include "common/pv_token.h"
#include "model/model.h"

/* ===========================================================================
 * Options and the subcommand table
 * ========================================================================= */

static const struct pv_opt optdefs[CLI_O__COUNT] = {
    [CLI_O_ADVISOR] = {"advisor", "URL",
                       "the advisor (default $PROVISO_ADVISOR, else " DEFAULT_ADVISOR ")", 0},
    [CLI_O_TOKEN_FILE] = {"token-file", "FILE", "the admin token (default $PROVISO_TOKEN_FILE)", 0},
    [CLI_O_FORMAT] = {"format", "text|json", "json prints the advisor's answer as it came", 0},
    [CLI_O_POLICY] = {"policy", "FILE", "the base policy (YAML or JSON)", 0},
    [CLI_O_CREDENTIALS] = {"credentials", "FILE", "the sandbox's credentials", 0},
    [CLI_O_BOUNDARY] = {"boundary", "FILE", "the most its policy may ever allow", 0},
    [CLI_O_TOKEN_OUT] = {"token-out", "FILE", "write the sandbox token there (mode 0600)", 0},
    [CLI_O_GLOBAL] = {"global", NULL, "the global scope", 0},
    [CLI_O_SANDBOX] = {"sandbox", "NAME", "one sandbox's scope", 0},
    [CLI_O_STATUS] = {"status", "pending|approved|rejected|suspended", "only chunks in this state",
                      0},
    [CLI_O_CHUNK_ID] = {"chunk-id", "ID", "the chunk (a unique prefix is enough)", 0},
    [CLI_O_REVIEW_TOKEN] = {"review-token", "TOKEN", "the review token of what you reviewed", 0},
    [CLI_O_REASON] = {"reason", "TEXT", "why (required): the agent and the history read it", 0},
    [CLI_O_FLAGGED] = {"include-security-flagged", NULL, "also chunks with security notes", 0},
    [CLI_O_RULE] = {"rule", "FILE", "the new rule (JSON or YAML)", 0},
};

#define O(x) (1u << CLI_O_##x)
#define COMMON (O(ADVISOR) | O(TOKEN_FILE) | O(FORMAT))
#define SCOPE (O(GLOBAL) | O(SANDBOX))
/* The advisor's settings keys (common/pv_settings.h; the advisor checks
 * them): one "Keys:" line of the settings commands' help that shell
 * completion reads, then a line per key. */
#define KEY_WORD_(id, key, kind, dflt, values, max, help) " " key
#define KEY_LINE_(id, key, kind, dflt, values, max, help) \
    "  " key "  " values " (default " dflt ")\n      " help "\n"
#define SETTING_KEYS_HELP                            \
    "Keys:" PV_SETTINGS(KEY_WORD_) "\n" PV_SETTINGS( \
        KEY_LINE_) "A global value wins over a sandbox's; docs/advisor.md#settings."

static int sandbox_create(struct cli_adv *a);
static int sandbox_list(struct cli_adv *a);
static int sandbox_show(struct cli_adv *a);
static int sandbox_delete(struct cli_adv *a);
static int policy_get(struct cli_adv *a);
static int policy_set(struct cli_adv *a);
static int settings_get(struct cli_adv *a);
static int settings_set(struct cli_adv *a);
static int settings_delete(struct cli_adv *a);

struct subcmd {
    const char *group;
    const char *name;
    unsigned opts;     /* besides COMMON */
    unsigned required; /* of opts */
    unsigned min_pos, max_pos;
    const char *synopsis; /* operands and options after "proviso GROUP NAME" */
    const char *help;
    const char *example;
    int (*run)(struct cli_adv *a);
};

static const struct subcmd subcmds[] = {
    {"sandbox", "create", O(POLICY) | O(CREDENTIALS) | O(BOUNDARY) | O(TOKEN_OUT), O(POLICY), 1, 1,
     "NAME --policy FILE [--credentials FILE] [--boundary FILE] [--token-out FILE]",
     "Create a sandbox with its base policy. Its own token is written to --token-out\n"
     "(mode 0600) or, without it, printed once.",
     "proviso sandbox create demo --policy base.yaml --token-out demo.token", sandbox_create},
    {"sandbox", "list", 0, 0, 0, 0, "", "List the sandboxes.", "proviso sandbox list",
     sandbox_list},
    {"sandbox", "show", 0, 0, 1, 1, "NAME", "Show one sandbox.", "proviso sandbox show demo",
     sandbox_show},
    {"sandbox", "delete", 0, 0, 1, 1, "NAME", "Delete a sandbox and all its state.",
     "proviso sandbox delete demo", sandbox_delete},
    {"policy", "get", 0, 0, 1, 1, "SANDBOX",
     "Print the sandbox's effective policy (YAML; --format json: the whole answer).",
     "proviso policy get demo > effective.yaml", policy_get},
    {"policy", "set", O(POLICY), O(POLICY), 1, 1, "SANDBOX --policy FILE",
     "Set the operator's base policy; approved rules are merged into it again.",
     "proviso policy set demo --policy base.yaml", policy_set},
    {"settings", "get", SCOPE, 0, 0, 1, "[KEY] (--global | --sandbox NAME)",
     "Show the settings (or one KEY) and where each value comes from.\n" SETTING_KEYS_HELP,
     "proviso settings get --sandbox demo", settings_get},
    {"settings", "set", SCOPE, 0, 2, 2, "KEY VALUE (--global | --sandbox NAME)",
     "Set a setting. VALUE is JSON when it is true, false, a number, a quoted\n"
     "string or a list ('[\"10.0.0.0/8\"]'), else a string (auto is \"auto\").\n" SETTING_KEYS_HELP,
     "proviso settings set proposal_approval_mode auto --global", settings_set},
    {"settings", "delete", SCOPE, 0, 1, 1, "KEY (--global | --sandbox NAME)",
     "Delete a setting.\n" SETTING_KEYS_HELP,
     "proviso settings delete proposal_approval_mode --sandbox demo", settings_delete},
    {"rule", "list", O(STATUS), 0, 1, 1, "SANDBOX [--status pending|approved|rejected|suspended]",
     "One line per proposal chunk: id, status, rule, endpoint, validation result.",
     "proviso rule list demo --status pending", cli_rule_list},
    {"rule", "get", O(CHUNK_ID), O(CHUNK_ID), 1, 1, "SANDBOX --chunk-id ID",
     "Show a chunk with its evidence: findings and witnesses, security notes, diff.\n"
     "ID may be a unique prefix of the chunk id (as 'rule list' shows it).",
     "proviso rule get demo --chunk-id 3f2a9c1d", cli_rule_get},
    {"rule", "approve", O(CHUNK_ID) | O(REVIEW_TOKEN), O(CHUNK_ID), 1, 1,
     "SANDBOX --chunk-id ID [--review-token TOKEN]",
     "Approve a chunk with the review token of the evaluation you reviewed (default:\n"
     "the one fetched now). If the evaluation changed, nothing is approved (exit 1)\n"
     "and the refreshed chunk is shown.",
     "proviso rule approve demo --chunk-id 3f2a9c1d", cli_rule_approve},
    {"rule", "approve-suggestion", O(CHUNK_ID) | O(REVIEW_TOKEN), O(CHUNK_ID), 1, 1,
     "SANDBOX --chunk-id ID [--review-token TOKEN]",
     "Approve the narrower rule the advisor proved approvable for a chunk ('suggestion'\n"
     "in 'rule get') instead of the rule as proposed, with the suggestion's review token\n"
     "(default: the one fetched now). If it changed, nothing is approved (exit 1).",
     "proviso rule approve-suggestion demo --chunk-id 3f2a9c1d", cli_rule_approve_suggestion},
    {"rule", "reject", O(CHUNK_ID) | O(REASON), O(CHUNK_ID), 1, 1,
     "SANDBOX --chunk-id ID --reason TEXT",
     "Reject a chunk; rejecting an approved chunk removes what it granted. The reason is\n"
     "required, as in the inbox: the agent reads it.",
     "proviso rule reject demo --chunk-id 3f2a9c1d --reason 'use the read-only API'",
     cli_rule_reject},
    {"rule", "approve-all", O(FLAGGED), 0, 1, 1, "SANDBOX [--include-security-flagged]",
     "Approve every pending chunk whose evaluation is current; chunks with security\n"
     "notes are skipped unless --include-security-flagged.",
     "proviso rule approve-all demo", cli_rule_approve_all},
    {"rule", "undo", O(CHUNK_ID), O(CHUNK_ID), 1, 1, "SANDBOX --chunk-id ID",
     "Undo an approval: the grant is removed and the chunk is pending again.",
     "proviso rule undo demo --chunk-id 3f2a9c1d", cli_rule_undo},
    {"rule", "edit", O(CHUNK_ID) | O(RULE), O(CHUNK_ID) | O(RULE), 1, 1,
     "SANDBOX --chunk-id ID --rule FILE",
     "Replace a pending chunk's rule (a NetworkPolicyRule, JSON or YAML); it is\n"
     "evaluated again.",
     "proviso rule edit demo --chunk-id 3f2a9c1d --rule narrower.yaml", cli_rule_edit},
    {"rule", "clear", 0, 0, 1, 1, "SANDBOX", "Delete every pending chunk of a sandbox.",
     "proviso rule clear demo", cli_rule_clear},
    {"rule", "history", 0, 0, 1, 1, "SANDBOX", "The proposals and decisions, oldest first.",
     "proviso rule history demo", cli_rule_history},
};

#define ADV_EXIT                                                                             \
    "exit: 0 ok, 1 the advisor refused, 2 usage or unreadable input, 3 advisor unreachable " \
    "or failed"

static void usage_group(FILE *f, const char *group)
{
    fprintf(f, "usage:\n");
    for (size_t i = 0; i < PV_ARRAY_LEN(subcmds); i++) {
        if (strcmp(subcmds[i].group, group) == 0) {
            fprintf(f, "  proviso %s %s %s\n", group, subcmds[i].name, subcmds[i].synopsis);
        }
    }
    fprintf(f, "\n'proviso %s COMMAND --help' describes one command and its options.\n", group);
    for (size_t i = 0; i < PV_ARRAY_LEN(subcmds); i++) {
        if (strcmp(subcmds[i].group, group) == 0) {
            fprintf(f, "\nExample:\n  %s\n", subcmds[i].example);
            break;
        }
    }
    fprintf(f, "\n%s\n", ADV_EXIT);
}

/* --status: one of the states its option row names (the advisor refuses
 * any other, but that is the user's typo, not the advisor's error): -1 when
 * it is, else the usage exit status after a message with a did-you-mean. */
static int check_status(const struct pv_cmd *cmd, const char *status)
{
    const char *states = optdefs[CLI_O_STATUS].arg;
    size_t n = strlen(status);
    char near[32];
    const char *m;

    for (const char *w = states; *w != '\0';) {
        size_t len = strcspn(w, "|");

        if (len == n && memcmp(w, status, n) == 0) {
            return -1;
        }
        w += len + (w[len] == '|');
    }
    m = pv_closest_word(status, states, near, sizeof(near));
    return pv_args_usage(cmd, "unknown status '%s'%s%s%s: expected one of %s", status,
                         m != NULL ? " (did you mean '" : "", m != NULL ? m : "",
                         m != NULL ? "'?)" : "", states);
}

/* Read the command line of 'c' with the common grammar (common/pv_args.h):
 * its option table is the common options plus the row's own. Returns -1 to
 * go on, else the exit status (help: 0, usage error: 2). */
static int parse(const struct subcmd *c, int argc, char **argv, struct cli_adv *a)
{
    unsigned allowed = c->opts | COMMON;
    struct pv_opt table[CLI_O__COUNT];
    int ids[CLI_O__COUNT];
    char prog[64];
    char synopsis[256];
    struct pv_cmd cmd;
    struct pv_args pa;
    size_t n = 0;

    for (int k = 0; k < CLI_O__COUNT; k++) {
        if ((allowed & (1u << k)) != 0) {
            ids[n] = k;
            table[n++] = optdefs[k];
        }
    }
    snprintf(prog, sizeof(prog), "proviso %s %s", c->group, c->name);
    snprintf(synopsis, sizeof(synopsis),
             "%s\n%*s[--advisor URL] [--token-file FILE] "
             "[--format text|json]",
             c->synopsis, (int)strlen(prog) + 8, "");
    memset(&cmd, 0, sizeof(cmd));
    cmd.prog = prog;
    cmd.synopsis = synopsis;
    cmd.summary = c->help;
    cmd.opts = table;
    cmd.nopts = n;
    cmd.example = c->example;
    cmd.epilog = ADV_EXIT;
    switch (pv_args_parse(&cmd, argc, argv, &pa)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        a->opt[ids[i]] = pa.value[i];
    }
    if (pa.npos > (int)c->max_pos) {
        return pv_args_usage(&cmd, "unexpected operand '%s'", pa.pos[c->max_pos]);
    }
    for (int i = 0; i < pa.npos; i++) {
        a->pos[a->npos++] = pa.pos[i];
    }
    for (int k = 0; k < CLI_O__COUNT; k++) {
        if ((c->required & (1u << k)) != 0 && a->opt[k] == NULL) {
            return pv_args_usage(&cmd, "--%s is required", optdefs[k].name);
        }
    }
    if (a->npos < c->min_pos) {
        return pv_args_usage(&cmd, "%s", "missing operand");
    }
    if ((c->opts & SCOPE) == SCOPE &&
        (a->opt[CLI_O_GLOBAL] != NULL) == (a->opt[CLI_O_SANDBOX] != NULL)) {
        return pv_args_usage(&cmd, "%s", "give exactly one of --global and --sandbox NAME");
    }
    if (a->opt[CLI_O_FORMAT] != NULL && strcmp(a->opt[CLI_O_FORMAT], "text") != 0 &&
        strcmp(a->opt[CLI_O_FORMAT], "json") != 0) {
        return pv_args_usage(&cmd, "unknown format '%s' (text or json)", a->opt[CLI_O_FORMAT]);
    }
    a->json = a->opt[CLI_O_FORMAT] != NULL && strcmp(a->opt[CLI_O_FORMAT], "json") == 0;
    if (a->opt[CLI_O_STATUS] != NULL) {
        return check_status(&cmd, a->opt[CLI_O_STATUS]);
    }
    return -1;
}

/* ===========================================================================
 * The token and the client
 * ========================================================================= */

/* The admin token from 'path' (common/pv_token.h). New string (the caller
 * wipes and frees it) or NULL after a message. */
static char *read_token(const char *path, size_t *len)
{
    char err[PV_TOKEN_ERR_MAX];
    char *tok = NULL;
    unsigned mode = 0;

    if (!pv_ok(pv_token_read(path, -1, &tok, len, &mode, err, sizeof(err)))) {
        fprintf(stderr, "proviso: %s\n", err);
        return NULL;
    }
    if ((mode & 077) != 0) {
        fprintf(stderr,
                "proviso: warning: token file %s is readable by other users (chmod 600 it)\n",
                path);
    }
    return tok;
}

const char *cli_adv_url(const char *opt)
{
    const char *url = opt != NULL ? opt : getenv("PROVISO_ADVISOR");

    if (url == NULL || url[0] == '\0') {
        url = DEFAULT_ADVISOR;
    }
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        fprintf(stderr, "proviso: --advisor wants an http:// or https:// URL, not '%s'\n", url);
        return NULL;
    }
    return url;
}

/* Connect 'a' to the advisor: 0 or the exit status 2. */
int cli_adv_connect(struct cli_adv *a)
{
    const char *url = cli_adv_url(a->opt[CLI_O_ADVISOR]);
    const char *tf = a->opt[CLI_O_TOKEN_FILE];
    char *tok;
    size_t tlen = 0;

    if (url == NULL) {
        return 2;
    }
    if (tf == NULL) {
        tf = getenv("PROVISO_TOKEN_FILE");
    }
    if (tf == NULL || tf[0] == '\0') {
        fprintf(stderr, "proviso: the admin token is needed: --token-file FILE or "
                        "PROVISO_TOKEN_FILE=FILE\n");
        return 2;
    }
    tok = read_token(tf, &tlen);
    if (tok == NULL) {
        return 2;
    }
    a->http = cli_http_new(url, tok);
    pv_token_wipe_free(tok, tlen);
    if (a->http == NULL) {
        fprintf(stderr, "proviso: cannot set up the HTTP client\n");
        return 2;
    }
    return 0;
}

/* ===========================================================================
 * Calls and output (shared with cmd_rule.c)
 * ========================================================================= */

void cli_print_json(const json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

    if (s != NULL) {
        printf("%s\n", s);
        free(s);
    } else {
        fprintf(stderr, "proviso: out of memory\n");
    }
}

int cli_adv_call(struct cli_adv *a, const char *method, const char *path, const json_t *body,
                 struct cli_answer *ans)
{
    int rc;

    if (path == NULL) {
        memset(ans, 0, sizeof(*ans));
        fprintf(stderr, "proviso: out of memory\n");
        return 3;
    }
    rc = cli_http_call(a->http, method, path, body, ans);
    if (rc == 0) {
        return 0;
    }
    if (ans->body == NULL) {
        if (ans->status == 0) {
            fprintf(stderr, "proviso: cannot reach the advisor at %s: %s\n", cli_http_base(a->http),
                    ans->error);
        } else {
            fprintf(stderr, "proviso: the advisor at %s: %s\n", cli_http_base(a->http), ans->error);
        }
        return rc;
    }
    {
        const char *err = json_string_value(json_object_get(ans->body, "error"));
        const char *detail = json_string_value(json_object_get(ans->body, "detail"));
        const json_t *diags = json_object_get(ans->body, "diagnostics");
        size_t i;
        const json_t *d;

        fprintf(stderr, "proviso: %s: %s\n", err != NULL ? err : "error",
                detail != NULL ? detail : "(no detail)");
        json_array_foreach(diags, i, d)
        {
            if (i > 0 && json_is_string(d)) {
                fprintf(stderr, "  %s\n", json_string_value(d));
            }
        }
    }
    return rc;
}

int cli_adv_finish(struct cli_adv *a, int rc, struct cli_answer *ans,
                   void (*text)(struct cli_adv *, json_t *))
{
    if (ans->body != NULL && (a->json || rc != 0)) {
        if (a->json) {
            cli_print_json(ans->body);
        }
    } else if (rc == 0 && text != NULL) {
        text(a, ans->body);
    }
    cli_answer_clear(ans);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "proviso: cannot write the output\n");
        rc = 2;
    }
    return rc;
}

int cli_adv_simple(struct cli_adv *a, const char *method, const char *const *segs,
                   const json_t *body, void (*text)(struct cli_adv *, json_t *))
{
    struct cli_answer ans;
    char *path = cli_http_path(segs, NULL, NULL);
    int rc = cli_adv_call(a, method, path, body, &ans);

    free(path);
    return cli_adv_finish(a, rc, &ans, text);
}

/* A document file's text (policy, credentials, boundary): new string or
 * NULL after a message. */
static char *read_doc(const char *path)
{
    size_t len = 0;
    char *buf = cli_read_file(path, MODEL_MAX_POLICY_BYTES, &len);

    if (buf != NULL && strlen(buf) != len) {
        fprintf(stderr, "proviso: %s: the file holds a NUL byte\n", path);
        free(buf);
        buf = NULL;
    }
    return buf;
}

const char *cli_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/* ===========================================================================
 * sandbox
 * ========================================================================= */

/* The token file: created 0600 (or an existing regular file set to 0600,
 * truncated only once there is a token to write) before the sandbox
 * exists, so a token is never lost to an unwritable path. */
static int token_out_open(const char *path, bool *created)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;

    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST) {
        fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
            close(fd);
            fprintf(stderr, "proviso: --token-out %s: not a regular file\n", path);
            return -1;
        }
        if (fd >= 0 && fchmod(fd, 0600) != 0) {
            fprintf(stderr, "proviso: --token-out %s: %s\n", path, strerror(errno));
            close(fd);
            return -1;
        }
    }
    if (fd < 0) {
        fprintf(stderr, "proviso: --token-out %s: %s\n", path, strerror(errno));
    }
    return fd;
}

static bool write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* long: read the documents, send, print one answer; the documents and the answer are freed at one
 * exit */
static int sandbox_create(struct cli_adv *a)
{
    const char *out = a->opt[CLI_O_TOKEN_OUT];
    json_t *body = json_pack("{s:s}", "name", a->pos[0]);
    static const char *const segs[] = {"v1", "sandboxes", NULL};
    struct cli_answer ans;
    char *path = NULL;
    bool created = false;
    int fd = -1;
    int rc = 2;
    const struct {
        enum cli_opt opt;
        const char *field;
    } docs[] = {
        {CLI_O_POLICY, "policy"},
        {CLI_O_CREDENTIALS, "credentials"},
        {CLI_O_BOUNDARY, "boundary"},
    };

    memset(&ans, 0, sizeof(ans));
    if (body == NULL) {
        fprintf(stderr, "proviso: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(docs); i++) {
        char *text;
        if (a->opt[docs[i].opt] == NULL) {
            continue;
        }
        text = read_doc(a->opt[docs[i].opt]);
        if (text == NULL || json_object_set_new(body, docs[i].field, json_string(text)) != 0) {
            if (text != NULL) {
                fprintf(stderr, "proviso: %s: not UTF-8 text\n", a->opt[docs[i].opt]);
            }
            free(text);
            goto out;
        }
        free(text);
    }
    if (out != NULL) {
        fd = token_out_open(out, &created);
        if (fd < 0) {
            goto out;
        }
    }
    path = cli_http_path(segs, NULL, NULL);
    rc = cli_adv_call(a, "POST", path, body, &ans);
    if (rc != 0) {
        if (created) {
            (void)unlink(out);
        }
        rc = cli_adv_finish(a, rc, &ans, NULL);
        goto out;
    }
    {
        json_t *tokj = json_object_get(ans.body, "token");
        const char *tok = json_string_value(tokj);
        size_t tlen = json_string_length(tokj);

        if (tok == NULL) {
            fprintf(stderr, "proviso: the advisor's answer has no token\n");
            rc = 3;
        } else if (fd >= 0) {
            if (ftruncate(fd, 0) != 0 || !write_all(fd, tok, tlen) || !write_all(fd, "\n", 1) ||
                fsync(fd) != 0) {
                fprintf(stderr,
                        "proviso: sandbox %s was created but its token could not be written to "
                        "%s (%s); delete and create it again\n",
                        a->pos[0], out, strerror(errno));
                rc = 3;
            }
            /* The token is in the file; it is not printed. */
            json_object_del(ans.body, "token");
            json_object_set_new(ans.body, "token_file", json_string(out));
        } else {
            fprintf(stderr,
                    "proviso: warning: this is sandbox %s's own token and it is shown "
                    "only now; store it (next time use --token-out FILE)\n",
                    a->pos[0]);
        }
    }
    if (a->json) {
        cli_print_json(ans.body);
    } else if (rc == 0) {
        printf("sandbox %s created: policy version %lld sha256:%s\n", a->pos[0],
               (long long)json_integer_value(json_object_get(ans.body, "policy_version")),
               cli_str(ans.body, "policy_hash"));
        if (out != NULL) {
            printf("token written to %s (mode 0600)\n", out);
        } else {
            printf("token: %s\n", cli_str(ans.body, "token"));
        }
    }
    cli_answer_clear(&ans);
out:
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        fprintf(stderr, "proviso: --token-out %s: %s\n", out, strerror(errno));
        rc = 3;
    }
    free(path);
    json_decref(body);
    return rc;
}

static void sandbox_line(const json_t *sb)
{
    printf("%-24s %7lld  %-12.12s %7lld  %-5s %s\n", cli_str(sb, "name"),
           (long long)json_integer_value(json_object_get(sb, "policy_version")),
           cli_str(sb, "policy_hash"),
           (long long)json_integer_value(json_object_get(sb, "loaded_revision")),
           json_is_true(json_object_get(sb, "has_credentials")) ? "yes" : "no",
           json_is_true(json_object_get(sb, "has_boundary")) ? "yes" : "no");
}

static void list_text(struct cli_adv *a, json_t *ans)
{
    const json_t *arr = json_object_get(ans, "sandboxes");
    size_t i;
    const json_t *sb;

    (void)a;
    if (json_array_size(arr) == 0) {
        printf("no sandboxes\n");
        return;
    }
    printf("%-24s %7s  %-12s %7s  %-5s %s\n", "NAME", "VERSION", "HASH", "LOADED", "CREDS",
           "BOUND");
    json_array_foreach(arr, i, sb)
    {
        sandbox_line(sb);
    }
}

static int sandbox_list(struct cli_adv *a)
{
    static const char *const segs[] = {"v1", "sandboxes", NULL};
    return cli_adv_simple(a, "GET", segs, NULL, list_text);
}

static void show_text(struct cli_adv *a, json_t *sb)
{
    const json_t *addrs = json_object_get(sb, "addresses");

    (void)a;
    printf("sandbox:          %s\n", cli_str(sb, "name"));
    printf("policy version:   %lld\n",
           (long long)json_integer_value(json_object_get(sb, "policy_version")));
    printf("policy hash:      sha256:%s\n", cli_str(sb, "policy_hash"));
    printf("loaded revision:  %lld\n",
           (long long)json_integer_value(json_object_get(sb, "loaded_revision")));
    printf("credentials:      %s\n",
           json_is_true(json_object_get(sb, "has_credentials")) ? "yes" : "none");
    printf("boundary:         %s\n",
           json_is_true(json_object_get(sb, "has_boundary")) ? "yes" : "none");
    if (json_array_size(addrs) > 0) {
        size_t i;
        const json_t *ad;
        printf("addresses:       ");
        json_array_foreach(addrs, i, ad)
        {
            printf(" %s", json_is_string(ad) ? json_string_value(ad) : "?");
        }
        printf("\n");
    }
}

static int sandbox_show(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], NULL};
    return cli_adv_simple(a, "GET", segs, NULL, show_text);
}

static void deleted_text(struct cli_adv *a, json_t *ans)
{
    (void)a;
    printf("sandbox %s deleted\n", cli_str(ans, "name"));
}

static int sandbox_delete(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], NULL};
    return cli_adv_simple(a, "DELETE", segs, NULL, deleted_text);
}

/* ===========================================================================
 * policy
 * ========================================================================= */

static void policy_text(struct cli_adv *a, json_t *ans)
{
    const char *yaml = cli_str(ans, "policy_yaml");
    size_t n = strlen(yaml);

    (void)a;
    printf("# sandbox %s, effective policy revision %lld, sha256:%s\n", cli_str(ans, "sandbox"),
           (long long)json_integer_value(json_object_get(ans, "revision")), cli_str(ans, "hash"));
    fputs(yaml, stdout);
    if (n > 0 && yaml[n - 1] != '\n') {
        fputc('\n', stdout);
    }
}

static int policy_get(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "policy", NULL};
    return cli_adv_simple(a, "GET", segs, NULL, policy_text);
}

/* The new base's revisions, then every approved chunk the change
 * suspended, by id (rule get SANDBOX --chunk-id ID says why), or that
 * none was. */
static void policy_set_text(struct cli_adv *a, json_t *ans)
{
    const json_t *sus = json_object_get(ans, "suspended");
    const json_t *v;
    size_t i;

    printf("sandbox %s: base revision %lld; effective policy version %lld sha256:%s\n", a->pos[0],
           (long long)json_integer_value(json_object_get(ans, "base_revision")),
           (long long)json_integer_value(json_object_get(ans, "policy_version")),
           cli_str(ans, "policy_hash"));
    if (json_array_size(sus) == 0) {
        printf("suspended: none (every approved chunk still proves as approved)\n");
        return;
    }
    printf("suspended: %zu approved chunk%s (what each now grants was not approved; "
           "proviso rule get %s --chunk-id ID says why):\n",
           json_array_size(sus), json_array_size(sus) == 1 ? "" : "s", a->pos[0]);
    json_array_foreach(sus, i, v)
    {
        printf("  %s\n", json_is_string(v) ? json_string_value(v) : "?");
    }
}

static int policy_set(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "policy", NULL};
    char *text = read_doc(a->opt[CLI_O_POLICY]);
    json_t *body = text != NULL ? json_pack("{s:s}", "policy", text) : NULL;
    int rc;

    free(text);
    if (body == NULL) {
        if (text != NULL) {
            fprintf(stderr, "proviso: %s: not UTF-8 text\n", a->opt[CLI_O_POLICY]);
        }
        return 2;
    }
    rc = cli_adv_simple(a, "PUT", segs, body, policy_set_text);
    json_decref(body);
    return rc;
}

/* ===========================================================================
 * settings
 * ========================================================================= */

/* What an unset key means (common/pv_settings.h, docs/advisor.md#settings):
 * the advisor answers null with resolved_from "default". */
static const char *setting_default(const char *key)
{
    const struct pv_setting_row *row = pv_setting_find(key);

    return row != NULL ? row->dflt : "unset";
}

/* KEY, the effective value and where it comes from: default, global or
 * sandbox. */
static void setting_line(const char *key, const json_t *s)
{
    const json_t *value = json_object_get(s, "value");
    char *v = value == NULL || json_is_null(value)
                  ? NULL
                  : json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    const char *from = cli_str(s, "resolved_from");

    printf("%-32s %-10s (from %s)\n", key,
           v != NULL       ? v
           : value == NULL ? "?"
                           : setting_default(key),
           from[0] ? from : "?");
    free(v);
}

static void settings_text(struct cli_adv *a, json_t *ans)
{
    const char *key;
    const json_t *s;

    (void)a;
    json_object_foreach(ans, key, s)
    {
        setting_line(key, s);
    }
}

/* ["v1", "settings"] or ["v1", "sandboxes", NAME, "settings"], plus 'key'. */
static void scope_segs(const struct cli_adv *a, const char *key, const char *segs[6])
{
    size_t n = 0;

    segs[n++] = "v1";
    if (a->opt[CLI_O_SANDBOX] != NULL) {
        segs[n++] = "sandboxes";
        segs[n++] = a->opt[CLI_O_SANDBOX];
    }
    segs[n++] = "settings";
    segs[n++] = key;
    segs[n] = NULL;
}

/* After the advisor refused KEY (or KEY VALUE): the key it probably meant,
 * or the form VALUE takes (common/pv_settings.h), on a line of its own;
 * the advisor's message stays as it is (docs/reference-compat.md#gateway).
 * Nothing when the table sees nothing wrong (a 409, a missing sandbox). */
static void setting_hint(const char *key, const json_t *value)
{
    const struct pv_setting_row *row = pv_setting_find(key);
    const char *near = row == NULL ? pv_setting_closest(key) : NULL;
    char word[32];

    if (row == NULL) {
        if (near != NULL) {
            fprintf(stderr, "proviso: hint: did you mean '%s'?\n", near);
        }
        return;
    }
    if (value == NULL) {
        return;
    }
    if (row->kind == PV_SETTING_BOOL && !json_is_boolean(value)) {
        fprintf(stderr, "proviso: hint: %s takes true or false\n", key);
    } else if (row->kind == PV_SETTING_CHOICE &&
               !(json_is_string(value) && pv_setting_choice_ok(row, json_string_value(value)))) {
        near = json_is_string(value)
                   ? pv_closest_word(json_string_value(value), row->values, word, sizeof(word))
                   : NULL;
        fprintf(stderr, "proviso: hint: %s takes one of %s, exactly as written%s%s%s\n", key,
                row->values, near != NULL ? " (did you mean '" : "", near != NULL ? near : "",
                near != NULL ? "'?)" : "");
    } else if (row->kind == PV_SETTING_CIDRS && !json_is_array(value)) {
        fprintf(stderr,
                "proviso: hint: %s takes a JSON list of at most %zu canonical CIDRs, "
                "such as '[\"10.0.0.0/8\"]'\n",
                key, row->max);
    }
}

static int settings_get(struct cli_adv *a)
{
    const char *segs[6];
    const char *key = a->npos > 0 ? a->pos[0] : NULL;
    struct cli_answer ans;
    char *path;
    int rc;

    scope_segs(a, NULL, segs);
    path = cli_http_path(segs, NULL, NULL);
    rc = cli_adv_call(a, "GET", path, NULL, &ans);
    free(path);
    if (rc == 0 && key != NULL) {
        json_t *one = json_object_get(ans.body, key);
        if (one == NULL) {
            const char *k;
            const json_t *v;
            fprintf(stderr, "proviso: unknown setting key '%s'. Allowed keys:", key);
            json_object_foreach(ans.body, k, v)
            {
                fprintf(stderr, " %s", k);
            }
            fputc('\n', stderr);
            setting_hint(key, NULL);
            cli_answer_clear(&ans);
            return 1;
        }
        if (a->json) {
            cli_print_json(one);
        } else {
            setting_line(key, one);
        }
        cli_answer_clear(&ans);
        return 0;
    }
    return cli_adv_finish(a, rc, &ans, settings_text);
}

/* The value of 'settings set': JSON when it is a boolean, a number, a
 * quoted string or a list (peer_address_ranges); anything else is the
 * string as typed. New reference. */
static json_t *setting_value(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);

    if (json_is_boolean(v) || json_is_number(v) || json_is_string(v) || json_is_array(v)) {
        return v;
    }
    json_decref(v);
    return json_string(text);
}

static int settings_set(struct cli_adv *a)
{
    const char *segs[6];
    json_t *value = setting_value(a->pos[1]);
    json_t *body = value != NULL ? json_pack("{s:o}", "value", value) : NULL;
    int rc;

    if (body == NULL) {
        fprintf(stderr, "proviso: VALUE is not UTF-8 text\n");
        return 2;
    }
    scope_segs(a, a->pos[0], segs);
    rc = cli_adv_simple(a, "PUT", segs, body, settings_text);
    if (rc != 0) {
        setting_hint(a->pos[0], value);
    }
    json_decref(body);
    return rc;
}

static int settings_delete(struct cli_adv *a)
{
    const char *segs[6];
    int rc;

    scope_segs(a, a->pos[0], segs);
    rc = cli_adv_simple(a, "DELETE", segs, NULL, settings_text);
    if (rc != 0) {
        setting_hint(a->pos[0], NULL);
    }
    return rc;
}

/* ===========================================================================
 * Dispatch
 * ========================================================================= */

static int run_group(const char *group, int argc, char **argv)
{
    const struct subcmd *c = NULL;
    struct cli_adv a;
    int rc;

    if (argc < 2) {
        fprintf(stderr, "proviso %s: missing command (see 'proviso %s --help')\n", group, group);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage_group(stdout, group);
        return 0;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(subcmds); i++) {
        if (strcmp(subcmds[i].group, group) == 0 && strcmp(subcmds[i].name, argv[1]) == 0) {
            c = &subcmds[i];
        }
    }
    if (c == NULL) {
        fprintf(stderr, "proviso %s: unknown command '%s' (see 'proviso %s --help')\n", group,
                argv[1], group);
        return 2;
    }
    memset(&a, 0, sizeof(a));
    rc = parse(c, argc - 1, argv + 1, &a);
    if (rc >= 0) {
        return rc;
    }
    rc = cli_adv_connect(&a);
    if (rc == 0) {
        rc = c->run(&a);
    }
    cli_http_free(a.http);
    return rc;
}

int cli_sandbox(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "run") == 0) {
        return cli_sandbox_run(argc - 1, argv + 1);
    }
    return run_group("sandbox", argc, argv);
}

int cli_policy(int argc, char **argv)
{
    return run_group("policy", argc, argv);
}

int cli_settings(int argc, char **argv)
{
    return run_group("settings", argc, argv);
}

int cli_rule(int argc, char **argv)
{
    return run_group("rule", argc, argv);
}
