/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_rule.c - `proviso rule ...`: a reviewer's decisions on proposals
 *
 *   proviso rule list SANDBOX [--status S]
 *   proviso rule get|approve|reject|undo|edit SANDBOX --chunk-id ID ...
 *   proviso rule approve-all|clear|history SANDBOX
 *
 * A chunk id may be given whole or as a unique prefix (the eight characters
 * 'rule list' shows); a prefix is resolved against the sandbox's list first.
 *
 * Approval carries the chunk's review token: by default the one of the
 * evaluation fetched just before (or --review-token, the one a reviewer
 * read in 'rule get'). When the advisor answers 412 the evaluation has
 * changed (the policy moved on, or the credentials did): nothing was
 * approved, the command exits 1 and shows the refreshed chunk so the
 * reviewer can look again.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "model/model.h"

#define CHUNK_ID_LEN 36u

/* The full id of the chunk 'id' names in the sandbox (a whole id, or a
 * unique prefix). Returns 0 with a new string in '*out', else the exit
 * status after a message. */
static int resolve_chunk(struct cli_adv *a, const char *id, char **out)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "proposals", NULL};
    struct cli_answer ans;
    const json_t *c;
    const char *found = NULL;
    size_t matches = 0;
    size_t len = strlen(id);
    size_t i;
    char *path;
    int rc;

    *out = NULL;
    if (len == 0) {
        fprintf(stderr, "proviso: --chunk-id is empty\n");
        return 2;
    }
    if (len >= CHUNK_ID_LEN) {
        *out = pv_strdup(id);
        return *out != NULL ? 0 : 3;
    }
    path = cli_http_path(segs, NULL, NULL);
    rc = cli_adv_call(a, "GET", path, NULL, &ans);
    free(path);
    if (rc != 0) {
        cli_answer_clear(&ans);
        return rc;
    }
    json_array_foreach(json_object_get(ans.body, "chunks"), i, c)
    {
        const char *cid = json_string_value(json_object_get(c, "chunk_id"));
        if (cid != NULL && strncmp(cid, id, len) == 0) {
            found = cid;
            matches++;
        }
    }
    if (matches == 1) {
        *out = pv_strdup(found);
        rc = *out != NULL ? 0 : 3;
    } else {
        fprintf(stderr, "proviso: %s: %s chunk of sandbox %s has an id starting with '%s'\n",
                matches == 0 ? "chunk_not_found" : "ambiguous",
                matches == 0 ? "no" : "more than one", a->pos[0], id);
        rc = 1;
    }
    cli_answer_clear(&ans);
    return rc;
}

/* POST/PUT/GET on the chunk (plus an action segment) with the id resolved. */
static int chunk_call(struct cli_adv *a, const char *method, const char *action, const json_t *body,
                      void (*text)(struct cli_adv *, json_t *))
{
    char *id = NULL;
    int rc = resolve_chunk(a, a->opt[CLI_O_CHUNK_ID], &id);

    if (rc == 0) {
        const char *segs[] = {"v1", "sandboxes", a->pos[0], "proposals", id, action, NULL};
        rc = cli_adv_simple(a, method, segs, body, text);
    }
    free(id);
    return rc;
}

static void chunk_text(struct cli_adv *a, json_t *c)
{
    (void)a;
    cli_chunk_print(stdout, c);
}

/* ===========================================================================
 * list, get, history
 * ========================================================================= */

static void list_text(struct cli_adv *a, json_t *ans)
{
    const json_t *chunks = json_object_get(ans, "chunks");
    const json_t *c;
    size_t i;

    if (json_array_size(chunks) == 0) {
        printf("no %s%schunks in sandbox %s\n",
               a->opt[CLI_O_STATUS] != NULL ? a->opt[CLI_O_STATUS] : "",
               a->opt[CLI_O_STATUS] != NULL ? " " : "", a->pos[0]);
        return;
    }
    cli_chunk_header(stdout);
    json_array_foreach(chunks, i, c)
    {
        cli_chunk_line(stdout, c);
    }
}

int cli_rule_list(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "proposals", NULL};
    struct cli_answer ans;
    char *path =
        cli_http_path(segs, a->opt[CLI_O_STATUS] != NULL ? "status" : NULL, a->opt[CLI_O_STATUS]);
    int rc = cli_adv_call(a, "GET", path, NULL, &ans);

    free(path);
    return cli_adv_finish(a, rc, &ans, list_text);
}

int cli_rule_get(struct cli_adv *a)
{
    return chunk_call(a, "GET", NULL, NULL, chunk_text);
}

/* " (automatically)", " (by a reviewer)", " (by the re-proof)" or "". */
static const char *decided_by_text(const json_t *e)
{
    const char *by = cli_str(e, "decided_by");

    if (strcmp(by, "auto") == 0) {
        return " (automatically)";
    }
    if (strcmp(by, "reviewer") == 0) {
        return " (by a reviewer)";
    }
    if (strcmp(by, "reproof") == 0) {
        return " (by the re-proof)";
    }
    return "";
}

static void history_text(struct cli_adv *a, json_t *ans)
{
    const json_t *list = json_object_get(ans, "history");
    const json_t *e;
    size_t i;
    bool proposed = false;

    if (json_array_size(list) == 0) {
        printf("no proposals in sandbox %s\n", a->pos[0]);
        return;
    }
    json_array_foreach(list, i, e)
    {
        time_t t = (time_t)(json_integer_value(json_object_get(e, "timestamp_ms")) / 1000);
        struct tm tm;
        char when[32] = "?";

        if (gmtime_r(&t, &tm) != NULL) {
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        }
        printf("%s  %-8.8s  %-9s %s%s\n", when, cli_str(e, "chunk_id"), cli_str(e, "event"),
               cli_str(e, "message"), decided_by_text(e));
        proposed = proposed || strcmp(cli_str(e, "event"), "proposed") == 0;
    }
    if (proposed) {
        printf("(confidence: the proposer's estimate that the rule is wanted, not a safety "
               "score)\n");
    }
}

/* Each decision of the history learns who took it (decided_by of the
 * chunk list: auto, reviewer, reproof), so an automatic approval reads as
 * one. Text output only; --format json prints the history as it came. */
static void history_join(struct cli_adv *a, json_t *history)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "proposals", NULL};
    char *path = cli_http_path(segs, NULL, NULL);
    struct cli_answer ans;
    const json_t *chunks;
    const json_t *c;
    json_t *e;
    size_t i, k;

    if (path == NULL) {
        return;
    }
    if (cli_adv_call(a, "GET", path, NULL, &ans) != 0) {
        free(path);
        cli_answer_clear(&ans);
        return;
    }
    free(path);
    chunks = json_object_get(ans.body, "chunks");
    json_array_foreach(json_object_get(history, "history"), i, e)
    {
        if (strcmp(cli_str(e, "event"), "proposed") == 0) {
            continue;
        }
        json_array_foreach(chunks, k, c)
        {
            if (strcmp(cli_str(c, "chunk_id"), cli_str(e, "chunk_id")) == 0) {
                json_object_set(e, "decided_by", json_object_get(c, "decided_by"));
                break;
            }
        }
    }
    cli_answer_clear(&ans);
}

int cli_rule_history(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "history", NULL};
    struct cli_answer ans;
    char *path = cli_http_path(segs, NULL, NULL);
    int rc;

    if (path == NULL) {
        return 3;
    }
    rc = cli_adv_call(a, "GET", path, NULL, &ans);
    free(path);
    if (rc == 0 && !a->json) {
        history_join(a, ans.body);
    }
    return cli_adv_finish(a, rc, &ans, history_text);
}

/* ===========================================================================
 * Decisions
 * ========================================================================= */

static void decided_text(struct cli_adv *a, json_t *ans)
{
    printf("chunk %s is %s", cli_str(ans, "chunk_id"), cli_str(ans, "status"));
    if (json_object_get(ans, "policy_version") != NULL) {
        printf("; sandbox %s policy version %lld sha256:%s", a->pos[0],
               (long long)json_integer_value(json_object_get(ans, "policy_version")),
               cli_str(ans, "policy_hash"));
    }
    printf("\n");
}

/* After a 412: the refreshed chunk, on stdout (text), or added to the
 * advisor's error answer as "chunk" (json). */
static int show_refreshed(struct cli_adv *a, const char *segs[], struct cli_answer *err)
{
    struct cli_answer ans;
    char *path = cli_http_path(segs, NULL, NULL);
    int rc = cli_adv_call(a, "GET", path, NULL, &ans);

    free(path);
    fprintf(stderr,
            "proviso: the evaluation changed since it was reviewed; nothing was "
            "approved. Review the refreshed chunk%s and approve again.\n",
            a->json ? " (\"chunk\")" : " below");
    if (a->json) {
        if (rc == 0) {
            json_object_set(err->body, "chunk", ans.body);
        }
        cli_print_json(err->body);
    } else if (rc == 0) {
        cli_chunk_print(stdout, ans.body);
    }
    cli_answer_clear(&ans);
    cli_answer_clear(err);
    return 1;
}

/* Approve the chunk (its rule) or its narrowed suggestion, with the review
 * token given or the one fetched now. */
static int approve_as(struct cli_adv *a, bool suggestion)
{
    char *id = NULL;
    int rc = resolve_chunk(a, a->opt[CLI_O_CHUNK_ID], &id);
    struct cli_answer ans;
    json_t *body = NULL;
    char *path = NULL;

    memset(&ans, 0, sizeof(ans));
    if (rc != 0) {
        return rc;
    }
    {
        const char *chunk[] = {"v1", "sandboxes", a->pos[0], "proposals", id, NULL};
        const char *approve[] = {"v1",      "sandboxes",
                                 a->pos[0], "proposals",
                                 id,        suggestion ? "approve-suggestion" : "approve",
                                 NULL};

        if (a->opt[CLI_O_REVIEW_TOKEN] != NULL) {
            body = json_pack("{s:s}", "review_token", a->opt[CLI_O_REVIEW_TOKEN]);
        } else {
            path = cli_http_path(chunk, NULL, NULL);
            rc = cli_adv_call(a, "GET", path, NULL, &ans);
            PV_SAFE_FREE(path);
            if (rc != 0) {
                rc = cli_adv_finish(a, rc, &ans, NULL);
                goto out;
            }
            body = json_pack(
                "{s:s}", "review_token",
                suggestion
                    ? cli_str(json_object_get(json_object_get(ans.body, "evidence"), "suggestion"),
                              "review_token")
                    : cli_str(ans.body, "review_token"));
            cli_answer_clear(&ans);
        }
        if (body == NULL) {
            fprintf(stderr, "proviso: the review token is not UTF-8 text\n");
            rc = 2;
            goto out;
        }
        path = cli_http_path(approve, NULL, NULL);
        rc = cli_adv_call(a, "POST", path, body, &ans);
        if (rc == 1 && ans.status == 412) {
            rc = show_refreshed(a, chunk, &ans);
            goto out;
        }
        rc = cli_adv_finish(a, rc, &ans, decided_text);
    }
out:
    free(path);
    free(id);
    json_decref(body);
    return rc;
}

int cli_rule_approve(struct cli_adv *a)
{
    return approve_as(a, false);
}

int cli_rule_approve_suggestion(struct cli_adv *a)
{
    return approve_as(a, true);
}

/* A rejection carries its reason, as in the inbox: the agent reads it, and
 * the history keeps it. Whitespace alone is no reason. */
static bool reason_given(const char *r)
{
    for (; r != NULL && *r != '\0'; r++) {
        if (!isspace((unsigned char)*r)) {
            return true;
        }
    }
    return false;
}

int cli_rule_reject(struct cli_adv *a)
{
    json_t *body;
    int rc;

    if (!reason_given(a->opt[CLI_O_REASON])) {
        fprintf(stderr, "proviso: rule reject needs --reason TEXT (why; the agent reads it, as "
                        "in the inbox)\n");
        return 2;
    }
    body = json_pack("{s:s}", "reason", a->opt[CLI_O_REASON]);
    if (body == NULL) {
        fprintf(stderr, "proviso: --reason is not UTF-8 text\n");
        return 2;
    }
    rc = chunk_call(a, "POST", "reject", body, decided_text);
    json_decref(body);
    return rc;
}

int cli_rule_undo(struct cli_adv *a)
{
    return chunk_call(a, "POST", "undo", NULL, decided_text);
}

static void approve_all_text(struct cli_adv *a, json_t *ans)
{
    const json_t *e;
    size_t i;

    printf("sandbox %s: approved %lld chunk(s), skipped %lld\n", a->pos[0],
           (long long)json_integer_value(json_object_get(ans, "approved_chunks")),
           (long long)json_integer_value(json_object_get(ans, "skipped_chunks")));
    json_array_foreach(json_object_get(ans, "approved"), i, e)
    {
        printf("  approved %s  policy version %lld\n", cli_str(e, "chunk_id"),
               (long long)json_integer_value(json_object_get(e, "policy_version")));
    }
    json_array_foreach(json_object_get(ans, "skipped"), i, e)
    {
        printf("  skipped  %s  %s\n", cli_str(e, "chunk_id"), cli_str(e, "reason"));
    }
}

int cli_rule_approve_all(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "proposals", "approve-all", NULL};
    json_t *body = json_pack("{s:b}", "include_security_flagged", a->opt[CLI_O_FLAGGED] != NULL);
    int rc = cli_adv_simple(a, "POST", segs, body, approve_all_text);

    json_decref(body);
    return rc;
}

/* The --rule file: a JSON or YAML NetworkPolicyRule object. New reference
 * or NULL after a message. */
static json_t *read_rule(const char *file)
{
    size_t len = 0;
    char *buf = cli_read_file(file, MODEL_MAX_POLICY_BYTES, &len);
    json_t *rule;
    char err[256] = "";

    if (buf == NULL) {
        return NULL;
    }
    rule = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
    if (rule == NULL) {
        rule = cli_yaml_to_json(file, buf, len, false, err, sizeof(err));
    }
    free(buf);
    if (!json_is_object(rule)) {
        if (err[0] != '\0') {
            fprintf(stderr, "proviso: %s\n", err); /* err begins with FILE:LINE:COL */
        } else {
            fprintf(stderr, "proviso: %s: a rule is a JSON or YAML mapping (NetworkPolicyRule)\n",
                    file);
        }
        json_decref(rule);
        return NULL;
    }
    return rule;
}

int cli_rule_edit(struct cli_adv *a)
{
    json_t *rule = read_rule(a->opt[CLI_O_RULE]);
    json_t *body = rule != NULL ? json_pack("{s:o}", "rule", rule) : NULL;
    int rc;

    if (body == NULL) {
        return 2;
    }
    rc = chunk_call(a, "PUT", NULL, body, chunk_text);
    json_decref(body);
    return rc;
}

static void cleared_text(struct cli_adv *a, json_t *ans)
{
    printf("sandbox %s: cleared %lld pending chunk(s)\n", a->pos[0],
           (long long)json_integer_value(json_object_get(ans, "cleared")));
}

int cli_rule_clear(struct cli_adv *a)
{
    const char *segs[] = {"v1", "sandboxes", a->pos[0], "proposals", NULL};
    return cli_adv_simple(a, "DELETE", segs, NULL, cleared_text);
}
