/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_validate.c - `proviso validate FILE...`: load and validate policies
 *
 * Each file is read (bounded by MODEL_MAX_POLICY_BYTES; "-" is stdin), then
 * parsed, validated and compiled exactly as the proxy and the prover would
 * load it. A bad file prints one line per diagnostic, "FILE:LINE:COL:
 * message"; a good one prints its warnings (model_policy_warnings) as
 * "FILE:LINE:COL: warning: message [code]" and then "FILE: ok", each group
 * in line order (--format json: one
 * object with each file's "valid", "diagnostics" (the lines), "errors"
 * (objects {code, location, message}, like the warnings) and "warnings"). Exit 0 when every file is ok, 2 when any file is missing,
 * unreadable or invalid (or on usage errors), or, with --strict, has a
 * warning.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_args.h"
#include "common/pv_file.h"
#include "model/model.h"

static const struct pv_opt validate_opts[] = {
    {"format", "text|json", "text (default): one line per problem; json: one object", 0},
    {"strict", NULL, "treat any warning as an error (exit 2)", 0},
};

static const struct pv_cmd validate_cmd = {
    .prog = "proviso validate",
    .synopsis = "[--format text|json] [--strict] FILE...",
    .summary = "Parse and validate each policy file (YAML or JSON; - reads stdin), exactly as\n"
               "the proxy and the prover load it. Prints one 'FILE:LINE:COL: message'\n"
               "per problem, or each warning as 'FILE:LINE:COL: warning: message [code]'\n"
               "and then 'FILE: ok', in line order.",
    .opts = validate_opts,
    .nopts = PV_ARRAY_LEN(validate_opts),
    .example = "proviso validate policy.yaml\n"
               "proviso validate --format json policy.yaml other.yaml",
    .epilog = "exit: 0 when every file is valid, 2 otherwise (or on a usage error; with\n"
              "--strict, also on a warning).",
};

/* One error as the warnings are: {"code", "location", "message"} (new
 * reference). 'line' is "FILE:LINE:COL: message" and 'msg' its message; the
 * code is "unknown-field" for a misspelled or misplaced key, "invalid"
 * otherwise. */
static json_t *error_json(const char *path, const char *line, const char *msg)
{
    size_t ll = line != NULL ? strlen(line) : 0;
    size_t ml = msg != NULL ? strlen(msg) : 0;
    const char *code =
        msg != NULL && strncmp(msg, "unknown field", 13) == 0 ? "unknown-field" : "invalid";

    if (line == NULL || msg == NULL) {
        return json_pack("{s:s,s:s,s:s}", "code", "invalid", "location", path, "message",
                         line != NULL ? line : "(out of memory)");
    }
    if (ll >= ml + 2 && strcmp(line + ll - ml, msg) == 0 && line[ll - ml - 2] == ':') {
        return json_pack("{s:s,s:s%,s:s}", "code", code, "location", line, ll - ml - 2, "message",
                         msg);
    }
    return json_pack("{s:s,s:s,s:s}", "code", code, "location", path, "message", line);
}

/* The result of one file for --format json: {"file", "valid",
 * "diagnostics": [lines], "errors": [objects]} (new reference) or NULL when
 * out of memory. */
static json_t *file_json(const char *path, bool valid, struct model_diags *d, const char *extra)
{
    json_t *o =
        json_pack("{s:s, s:b, s:[], s:[]}", "file", path, "valid", valid, "diagnostics", "errors");
    json_t *list = o != NULL ? json_object_get(o, "diagnostics") : NULL;
    json_t *errs = o != NULL ? json_object_get(o, "errors") : NULL;

    for (size_t i = 0; list != NULL && d != NULL && i < model_diags_count(d); i++) {
        const char *line = model_diags_line(d, i);
        json_array_append_new(list, json_string(line != NULL ? line : "(out of memory)"));
        json_array_append_new(errs, error_json(path, line, model_diags_msg(d, i)));
    }
    if (list != NULL && extra != NULL) {
        json_array_append_new(list, json_string(extra));
        json_array_append_new(errs, json_pack("{s:s,s:s,s:s}", "code", "invalid", "location", path,
                                              "message", extra));
    }
    return o;
}

/* model_warn_fn: the warnings of one file, collected so that they are
 * reported in line order (model_policy_warnings walks rules by key). */
struct warn_item {
    enum model_warning w;
    uint32_t line, col;
    size_t seq;  /* the order found, for ties */
    char *where; /* "FILE:LINE:COL" or "FILE" (owned) */
    char *msg;   /* owned */
};

struct warn_sink {
    struct warn_item *v;
    size_t n;
    bool nomem;
};

static void on_warning(void *arg, enum model_warning w, const char *file, uint32_t line,
                       uint32_t col, const char *msg)
{
    struct warn_sink *ws = arg;
    char where[PATH_MAX + 32];
    struct warn_item *nv;

    if (line > 0) {
        snprintf(where, sizeof(where), "%s:%u:%u", file != NULL ? file : "-", (unsigned)line,
                 (unsigned)col);
    } else {
        snprintf(where, sizeof(where), "%s", file != NULL ? file : "-");
    }
    nv = pv_realloc(ws->v, (ws->n + 1) * sizeof(*nv));
    if (nv == NULL) {
        ws->nomem = true;
        return;
    }
    ws->v = nv;
    nv[ws->n] = (struct warn_item){w, line, col, ws->n, pv_strdup(where), pv_strdup(msg)};
    if (nv[ws->n].where == NULL || nv[ws->n].msg == NULL) {
        free(nv[ws->n].where);
        free(nv[ws->n].msg);
        ws->nomem = true;
        return;
    }
    ws->n++;
}

/* By line, then column, then the order found (unlocated last). */
static int cmp_warn(const void *a, const void *b)
{
    const struct warn_item *x = a;
    const struct warn_item *y = b;
    uint64_t kx = x->line == 0 ? UINT64_MAX : (uint64_t)x->line << 32 | x->col;
    uint64_t ky = y->line == 0 ? UINT64_MAX : (uint64_t)y->line << 32 | y->col;

    if (kx != ky) {
        return kx < ky ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Collect the warnings of 'p' in line order; false when out of memory. */
static bool collect_warnings(const struct model_policy *p, struct warn_sink *ws)
{
    model_policy_warnings(p, MODEL_WARN_FS, on_warning, ws);
    if (ws->n > 1) {
        qsort(ws->v, ws->n, sizeof(ws->v[0]), cmp_warn);
    }
    return !ws->nomem;
}

static void warn_sink_clear(struct warn_sink *ws)
{
    for (size_t i = 0; i < ws->n; i++) {
        free(ws->v[i].where);
        free(ws->v[i].msg);
    }
    free(ws->v);
    memset(ws, 0, sizeof(*ws));
}

static json_t *warnings_json(const struct warn_sink *ws)
{
    json_t *list = json_array();

    for (size_t i = 0; list != NULL && i < ws->n; i++) {
        json_array_append_new(list,
                              json_pack("{s:s,s:s,s:s}", "code", model_warning_code(ws->v[i].w),
                                        "location", ws->v[i].where, "message", ws->v[i].msg));
    }
    return list;
}

/* The result of one file as text: its errors (the hint after them), or its
 * warnings and then the verdict, each group in line order. Returns the
 * exit code: 'rc', or 2 when 'strict' and a warning was found. */
static int report_text(const char *path, int rc, struct model_diags *diags, const char *hint,
                       const struct warn_sink *ws, bool strict)
{
    size_t n = model_diags_count(diags);

    if (rc != 0) {
        if (n == 0) {
            printf("%s: invalid policy\n", path);
        }
        for (size_t i = 0; i < n; i++) {
            const char *line = model_diags_line(diags, i);
            printf("%s\n", line != NULL ? line : "(out of memory)");
        }
        if (hint != NULL) {
            printf("%s\n", hint);
        }
        return rc;
    }
    for (size_t i = 0; i < ws->n; i++) {
        printf("%s: warning: %s [%s]\n", ws->v[i].where, ws->v[i].msg,
               model_warning_code(ws->v[i].w));
    }
    if (strict && ws->n > 0) {
        printf("%s: --strict: %zu warning%s treated as error%s\n", path, ws->n,
               ws->n == 1 ? "" : "s", ws->n == 1 ? "" : "s");
        return 2;
    }
    printf("%s: ok\n", path);
    return 0;
}

/* The result of one file for --format json, appended to 'files'. */
static int report_json(const char *path, int rc, struct model_diags *diags, const char *hint,
                       const struct warn_sink *ws, bool strict, json_t *files)
{
    json_t *o = file_json(path, rc == 0, diags,
                          rc != 0 && model_diags_count(diags) == 0 ? "invalid policy" : hint);
    json_t *list = warnings_json(ws);

    if (o != NULL && list != NULL) {
        json_object_set(o, "warnings", list);
    }
    json_decref(list);
    if (strict && ws->n > 0 && o != NULL) {
        json_object_set_new(o, "valid", json_false());
        rc = 2;
    }
    json_array_append_new(files, o);
    return rc;
}

/* 0 when 'path' holds a valid policy, 2 otherwise (or, 'strict', with a
 * warning). With 'files' (JSON output) the result is appended there; else
 * it is printed. */
static int validate_one(const char *path, json_t *files, bool strict)
{
    struct warn_sink ws = {NULL, 0, false};
    struct model_diags *diags;
    struct model_policy *p;
    const char *hint = NULL;
    char err[PATH_MAX + 64];
    size_t len = 0;
    char *buf = NULL;
    int rc = 0;

    if (!pv_ok(pv_file_read(path, MODEL_MAX_POLICY_BYTES, true, &buf, &len, err, sizeof(err)))) {
        if (files != NULL) {
            json_array_append_new(files, file_json(path, false, NULL, err));
        } else {
            fprintf(stderr, "proviso: %s\n", err);
        }
        return 2;
    }
    diags = model_diags_new();
    if (diags == NULL) {
        fprintf(stderr, "proviso: %s: out of memory\n", path);
        free(buf);
        return 2;
    }
    p = model_policy_load(path, buf, len, MODEL_FMT_AUTO, diags);
    if (p == NULL || model_diags_count(diags) > 0) {
        rc = 2;
        hint = cli_doc_hint(path, buf, len, CLI_DOC_POLICY);
        model_diags_sort(diags);
    }
    if (rc == 0 && !collect_warnings(p, &ws)) {
        /* not "invalid": the file was not shown to be */
        fprintf(stderr, "proviso: %s: out of memory\n", path);
        rc = 2;
    } else if (files != NULL) {
        rc = report_json(path, rc, diags, hint, &ws, strict, files);
    } else {
        rc = report_text(path, rc, diags, hint, &ws, strict);
    }
    warn_sink_clear(&ws);
    model_policy_free(p);
    model_diags_free(diags);
    free(buf);
    return rc;
}

int cli_validate(int argc, char **argv)
{
    struct pv_args a;
    const char *fmt;
    json_t *files = NULL;
    int rc = 0;

    switch (pv_args_parse(&validate_cmd, argc, argv, &a)) {
    case PV_ARGS_OK:
        break;
    case PV_ARGS_EXIT0:
        return 0;
    case PV_ARGS_USAGE:
        return 2;
    }
    fmt = pv_args_get(&a, "format");
    if (fmt != NULL && strcmp(fmt, "text") != 0 && strcmp(fmt, "json") != 0) {
        return pv_args_usage(&validate_cmd, "unknown format '%s' (text or json)", fmt);
    }
    if (a.npos == 0) {
        return pv_args_usage(&validate_cmd, "no FILE given");
    }
    if (fmt != NULL && strcmp(fmt, "json") == 0) {
        files = json_array();
        if (files == NULL) {
            fprintf(stderr, "proviso: out of memory\n");
            return 2;
        }
    }
    for (int i = 0; i < a.npos; i++) {
        if (validate_one(a.pos[i], files, pv_args_has(&a, "strict")) != 0) {
            rc = 2;
        }
    }
    if (files != NULL) {
        json_t *o = json_pack("{s:b, s:o}", "valid", rc == 0, "files", files);
        char *s = o != NULL ? json_dumps(o, JSON_INDENT(2)) : NULL;
        if (s == NULL) {
            fprintf(stderr, "proviso: out of memory\n");
            rc = 2;
        } else {
            printf("%s\n", s);
        }
        free(s);
        json_decref(o);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "proviso: validate: cannot write output\n");
        rc = 2;
    }
    return rc;
}
