/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - subcommands of the proviso command
 *
 * Each subcommand takes argc/argv starting at its own name and returns the
 * process exit status. Exit codes: 0 success/allow/empty/within, 1 deny/
 * findings/exceeds, 2 invalid input or usage, 3 unknown.
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

int cli_validate(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_prove(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_corpus(int argc, char **argv);
int cli_sandbox(int argc, char **argv);
int cli_policy(int argc, char **argv);
int cli_settings(int argc, char **argv);
int cli_rule(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_run(int argc, char **argv);

/* Read a whole file (at most 'cap' bytes; "-" is stdin) into a new
 * NUL-terminated buffer (caller frees). Returns NULL and prints
 * "proviso: FILE: reason" once on error (pv_file_read's messages). */
char *cli_read_file(const char *path, size_t cap, size_t *len);

/* Convert one YAML document to JSON (new reference) with libmodel's reader
 * (model_yaml_json; 'dup_ok': a repeated key is no error, the last wins).
 * NULL + 'err' ("FILE:LINE:COL: message") on error. */
json_t *cli_yaml_to_json(const char *file, const char *buf, size_t len, bool dup_ok, char *err,
                         size_t errlen);

enum cli_doc { CLI_DOC_POLICY, CLI_DOC_PROPOSAL };
/* When the document in 'buf' (file 'path') failed to load as 'want' and
 * looks like the other kind, a one-line hint ("PATH: hint: ..."), else
 * NULL. The string is static (per thread), valid until the next call. */
const char *cli_doc_hint(const char *path, const char *buf, size_t len, enum cli_doc want);

/* ===========================================================================
 * The advisor client (cli_http.c)
 * ========================================================================= */

struct cli_http;

struct cli_answer {
    long status;     /* HTTP status; 0 when no answer was read */
    json_t *body;    /* the answer object (owned), NULL when there is none */
    char error[256]; /* why there is no usable answer */
    char *raw;       /* cli_http_get_raw: the 2xx answer's bytes (owned) */
    size_t raw_len;
};

/* A client for the advisor at 'base' (http[s]://host:port) sending 'token'
 * as the bearer token (both borrowed; copied). NULL when out of memory.
 * cli_http_free wipes the token's copy; NULL is a no-op. */
struct cli_http *cli_http_new(const char *base, const char *token);
void cli_http_free(struct cli_http *h);
/* The base URL (borrowed from 'h'). */
const char *cli_http_base(const struct cli_http *h);

/* Send 'method' 'path' (from cli_http_path) with 'body' (borrowed, NULL for
 * none) as JSON. Fills 'a' (cleared first; cli_answer_clear frees it).
 * Returns 0 for a 2xx JSON object, 1 for a 4xx JSON object, 3 otherwise
 * (a->error says why when a->body is NULL). */
int cli_http_call(struct cli_http *h, const char *method, const char *path, const json_t *body,
                  struct cli_answer *a);
void cli_answer_clear(struct cli_answer *a);
/* GET 'path' and keep a 2xx answer's bytes unparsed in a->raw (an error
 * answer is parsed as by cli_http_call). Same exit statuses. */
int cli_http_get_raw(struct cli_http *h, const char *path, struct cli_answer *a);

/* "/seg/seg...[?qkey=qval]" from the NULL-terminated 'segs', each segment
 * and the query percent-encoded. New string (caller frees) or NULL. */
char *cli_http_path(const char *const *segs, const char *qkey, const char *qval);

/* ===========================================================================
 * The reviewer commands' shared parts (cmd_advisor.c)
 * ========================================================================= */

enum cli_opt {
    CLI_O_ADVISOR,
    CLI_O_TOKEN_FILE,
    CLI_O_FORMAT,
    CLI_O_POLICY,
    CLI_O_CREDENTIALS,
    CLI_O_BOUNDARY,
    CLI_O_TOKEN_OUT,
    CLI_O_GLOBAL,
    CLI_O_SANDBOX,
    CLI_O_STATUS,
    CLI_O_CHUNK_ID,
    CLI_O_REVIEW_TOKEN,
    CLI_O_REASON,
    CLI_O_FLAGGED,
    CLI_O_RULE,
    CLI_O__COUNT
};

/* One parsed reviewer command line (strings borrowed from argv). */
struct cli_adv {
    const char *opt[CLI_O__COUNT]; /* the value; "" for a flag; NULL when absent */
    const char *pos[2];            /* operands */
    size_t npos;
    bool json;             /* --format json */
    struct cli_http *http; /* owned by the dispatcher */
};

#define DEFAULT_ADVISOR "http://127.0.0.1:8788"

/* The advisor's URL: 'opt' (--advisor), else $PROVISO_ADVISOR, else
 * DEFAULT_ADVISOR; NULL (with the message on stderr) when it is no http://
 * or https:// URL. Borrowed. */
const char *cli_adv_url(const char *opt);

/* Connect 'a' to the advisor named by its --advisor/--token-file options
 * (or $PROVISO_ADVISOR, $PROVISO_TOKEN_FILE): 0, or 2 with a message. */
int cli_adv_connect(struct cli_adv *a);

/* Call the advisor (cli_http_call). Anything but success is reported on
 * stderr ("proviso: error: detail", or why it was not reached). 'path'
 * (borrowed) may be NULL after a failed cli_http_path: out of memory. */
int cli_adv_call(struct cli_adv *a, const char *method, const char *path, const json_t *body,
                 struct cli_answer *ans);
/* Print the answer: JSON (any answer, with --format json) or 'text' (on
 * success); clears 'ans' and returns 'rc' (2 when stdout fails). */
int cli_adv_finish(struct cli_adv *a, int rc, struct cli_answer *ans,
                   void (*text)(struct cli_adv *, json_t *));
/* cli_adv_call then cli_adv_finish on the path of 'segs'. */
int cli_adv_simple(struct cli_adv *a, const char *method, const char *const *segs,
                   const json_t *body, void (*text)(struct cli_adv *, json_t *));
void cli_print_json(const json_t *j);
/* The string member 'key' of 'o' (borrowed), "" when absent. */
const char *cli_str(const json_t *o, const char *key);

/* `proviso sandbox run` (cmd_sandbox_run.c): argv[0] is "run". */
int cli_sandbox_run(int argc, char **argv);

/* The rule commands (cmd_rule.c). */
int cli_rule_list(struct cli_adv *a);
int cli_rule_get(struct cli_adv *a);
int cli_rule_approve(struct cli_adv *a);
int cli_rule_approve_suggestion(struct cli_adv *a);
int cli_rule_reject(struct cli_adv *a);
int cli_rule_approve_all(struct cli_adv *a);
int cli_rule_undo(struct cli_adv *a);
int cli_rule_edit(struct cli_adv *a);
int cli_rule_clear(struct cli_adv *a);
int cli_rule_history(struct cli_adv *a);

/* ===========================================================================
 * Reviewer text (cli_chunk.c)
 * ========================================================================= */

/* Print a chunk object of the advisor for a reviewer: status, rule,
 * endpoints, binaries, rationale, validation result, each finding with its
 * witness, security notes, application error, the policy diff. */
void cli_chunk_print(FILE *out, const json_t *chunk);
/* One line of 'rule list' for a chunk; cli_chunk_header prints the heading. */
void cli_chunk_header(FILE *out);
void cli_chunk_line(FILE *out, const json_t *chunk);
/* "host:port [L7 rest enforce, allow GET /x]" for one endpoint of a rule,
 * appended to 'b' (sticky errors, see pv_dynbuf_put). */
struct pv_dynbuf;
void cli_endpoint_summary(struct pv_dynbuf *b, const json_t *endpoint);

#endif
