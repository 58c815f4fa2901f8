/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_view.c - reading the lifecycle: one chunk (agent or reviewer
 * view), the long-poll on it, the list and the history
 * (docs/advisor.md#wait).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/life/life.h"
#include "advisor/life/life_int.h"
#include "advisor/store/store.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "model/model.h"

/* ===========================================================================
 * Reading
 * ========================================================================= */

void advisor_view_clear(struct advisor_view *v)
{
    json_decref(v->json);
    memset(v, 0, sizeof(*v));
}

pv_result advisor_refusal_result(enum advisor_refusal why)
{
    switch (why) {
    case ADVISOR_DECIDED:
        return PV_RESULT_OK;
    case ADVISOR_REFUSED_NOT_FOUND:
    case ADVISOR_REFUSED_NO_CHUNK:
        PV_BAIL(PV_ERR_NOTFOUND);
    case ADVISOR_REFUSED_CONFLICT:
    case ADVISOR_REFUSED_PRECONDITION:
    case ADVISOR_REFUSED_STALE:
        PV_BAIL(PV_ERR_CONFLICT);
    case ADVISOR_REFUSED_EXISTS:
        PV_BAIL(PV_ERR_EXISTS);
    case ADVISOR_REFUSED_INVALID:
    case ADVISOR_REFUSED_INVALID_PROPOSAL:
    case ADVISOR_REFUSED_BAD_REQUEST:
    case ADVISOR_REFUSED_INVALID_JSON:
    case ADVISOR_REFUSED_INVALID_OPENAPI:
    case ADVISOR_REFUSED_TOO_MANY_SERVERS:
        PV_BAIL(PV_ERR_USAGE);
    case ADVISOR_REFUSED_INTERNAL:
    case ADVISOR_REFUSED_UNBACKED:
    case ADVISOR_REFUSED_DISCOVERY:
        break;
    }
    PV_BAIL(PV_ERR_INTERNAL);
}

pv_result advisor_view_refuse(struct advisor_view *v, enum advisor_refusal why, const char *fmt,
                              ...)
{
    va_list ap;

    v->refusal = why;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
    va_end(ap);
    return advisor_refusal_result(why);
}

pv_result advisor_view_store_error(struct advisor_view *v, pv_result res, const char *what)
{
    if (res.err == PV_ERR_NOTFOUND) {
        v->refusal = ADVISOR_REFUSED_NOT_FOUND;
        snprintf(v->detail, sizeof(v->detail), "%s not found", what);
    } else if (res.err == PV_ERR_EXISTS) {
        v->refusal = ADVISOR_REFUSED_EXISTS;
        snprintf(v->detail, sizeof(v->detail), "%s already exists", what);
    } else {
        v->refusal = ADVISOR_REFUSED_INTERNAL;
        snprintf(v->detail, sizeof(v->detail), "the store failed; see the advisor's log");
    }
    return res;
}

/* A view refused: why and the message. */
static pv_result view_refused(struct advisor_view *v, enum advisor_refusal why, pv_result res,
                              const char *what, const char *id)
{
    v->refusal = why;
    if (why == ADVISOR_REFUSED_NO_CHUNK) {
        snprintf(v->detail, sizeof(v->detail),
                 "chunk '%.64s' is not present in this sandbox's draft policy", id);
    } else if (res.err == PV_ERR_NOTFOUND) {
        v->refusal = ADVISOR_REFUSED_NOT_FOUND;
        snprintf(v->detail, sizeof(v->detail), "%s not found", what);
    } else if (res.err == PV_ERR_NOMEM) {
        v->refusal = ADVISOR_REFUSED_INTERNAL;
        snprintf(v->detail, sizeof(v->detail), "out of memory");
    } else {
        v->refusal = ADVISOR_REFUSED_INTERNAL;
        snprintf(v->detail, sizeof(v->detail), "the store failed; see the advisor's log");
        pv_log_warnx("%s: %s failed: %s", what, pv_strerror(res.err),
                     pv_debug_str != NULL ? pv_debug_str : "?");
    }
    return pv_ok(res) ? pv_fail(PV_ERR_NOTFOUND, __func__) : res;
}

/* Read chunk 'id' of sandbox 'sid' into 'c', or refuse. */
static pv_result chunk_read(struct advisor_worker *w, int64_t sid, const char *id,
                            struct store_chunk *c, struct advisor_view *v)
{
    pv_result res = store_chunk_get(w->st, sid, id, c);

    if (!pv_ok(res)) {
        return view_refused(
            v, res.err == PV_ERR_NOTFOUND ? ADVISOR_REFUSED_NO_CHUNK : ADVISOR_REFUSED_INTERNAL,
            res, "chunk", id);
    }
    return PV_RESULT_OK;
}

pv_result advisor_chunk_get(struct advisor_worker *w, const char *sandbox, const char *id,
                            bool reviewer, struct advisor_view *out)
{
    struct store_chunk c;
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);

    memset(out, 0, sizeof(*out));
    if (!pv_ok(res)) {
        return view_refused(out, ADVISOR_REFUSED_NOT_FOUND, res, "sandbox", id);
    }
    PV_GUARD(chunk_read(w, sid, id, &c, out));
    out->json = advisor_chunk_json(w, &c, reviewer);
    store_chunk_clear(&c);
    return PV_RESULT_OK;
}

pv_result advisor_chunk_wait(struct advisor_worker *w, const char *sandbox, const char *id,
                             unsigned timeout_s, struct advisor_hold *hold,
                             struct advisor_view *out)
{
    int64_t deadline = advisor_now_ms() + (int64_t)timeout_s * 1000;
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);

    memset(out, 0, sizeof(*out));
    if (!pv_ok(res)) {
        return view_refused(out, ADVISOR_REFUSED_NOT_FOUND, res, "sandbox", id);
    }
    for (;;) {
        uint64_t seen = advisor_change_count(w->a);
        struct store_chunk c;
        PV_GUARD(chunk_read(w, sid, id, &c, out));
        if (strcmp(c.status, "pending") != 0 || advisor_now_ms() >= deadline ||
            advisor_stopping(w->a)) {
            out->json = advisor_chunk_json(w, &c, false);
            if (out->json != NULL && strcmp(c.status, "pending") == 0) {
                json_object_set_new(out->json, "timed_out", json_true());
            }
            store_chunk_clear(&c);
            return PV_RESULT_OK;
        }
        store_chunk_clear(&c);
        if (!advisor_hold_wait(w->a, hold, seen, deadline)) {
            deadline = 0; /* the client left: answer now, the reply is dropped */
        }
    }
}

struct list_ctx {
    struct advisor_worker *w;
    json_t *arr;
    bool reviewer;
};

static void list_one(void *arg, const struct store_chunk *c)
{
    struct list_ctx *x = arg;
    json_array_append_new(x->arr, advisor_chunk_json(x->w, c, x->reviewer));
}

pv_result advisor_chunk_list(struct advisor_worker *w, const char *sandbox, const char *status,
                             bool reviewer, struct advisor_view *out)
{
    struct list_ctx x = {.w = w, .arr = json_array(), .reviewer = reviewer};
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);

    memset(out, 0, sizeof(*out));
    if (pv_ok(res) && status != NULL && strcmp(status, "pending") != 0 &&
        strcmp(status, "approved") != 0 && strcmp(status, "rejected") != 0 &&
        strcmp(status, "suspended") != 0) {
        json_decref(x.arr);
        out->refusal = ADVISOR_REFUSED_BAD_REQUEST;
        snprintf(out->detail, sizeof(out->detail),
                 "status must be one of pending, approved, rejected, suspended");
        PV_BAIL(PV_ERR_USAGE);
    }
    if (pv_ok(res)) {
        res = store_chunk_each(w->st, sid, status, list_one, &x);
    }
    if (!pv_ok(res)) {
        json_decref(x.arr);
        return view_refused(out, ADVISOR_REFUSED_NOT_FOUND, res, "sandbox", NULL);
    }
    out->json = json_pack("{s:s,s:o}", "sandbox", sandbox, "chunks", x.arr);
    return out->json != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, __func__);
}

struct history_ctx {
    struct advisor_worker *w;
    json_t *arr;
    bool reviewer;
};

/* One history entry: 'event' of chunk 'id' at 'ms' saying 'msg'. */
static void history_add(json_t *arr, int64_t ms, const char *event, const char *id, const char *msg)
{
    json_array_append_new(arr, json_pack("{s:I,s:s,s:s,s:s}", "timestamp_ms", (json_int_t)ms,
                                         "event", event, "chunk_id", id, "message", msg));
}

/* A chunk's entries, written from the view its caller may read
 * (advisor_chunk_json): the sandbox's token gets the agent view, so the
 * confidence (reviewer-only, docs/security.md#agent-view) is in the
 * admin's history only. The times are the history's own. */
static void history_one(void *arg, const struct store_chunk *c)
{
    struct history_ctx *x = arg;
    json_t *view = advisor_chunk_json(x->w, c, x->reviewer);
    const char *name = json_string_value(json_object_get(view, "rule_name"));
    const char *status = json_string_value(json_object_get(view, "status"));
    const char *reason = json_string_value(json_object_get(view, "rejection_reason"));
    const json_t *conf = json_object_get(view, "confidence");
    char msg[512];

    if (name == NULL || status == NULL || reason == NULL) {
        json_decref(view);
        return;
    }
    if (json_is_number(conf)) {
        snprintf(msg, sizeof(msg), "Rule '%s' proposed (confidence: %d%%)", name,
                 (int)(json_number_value(conf) * 100.0 + 0.5));
    } else {
        snprintf(msg, sizeof(msg), "Rule '%s' proposed", name);
    }
    history_add(x->arr, c->created_ms, "proposed", c->id, msg);
    if (c->decided_ms > 0 && strcmp(status, "pending") != 0) {
        snprintf(msg, sizeof(msg), "Rule '%s' %s%s%s", name, status, reason[0] != '\0' ? ": " : "",
                 reason);
        history_add(x->arr, c->decided_ms, status, c->id, msg);
    }
    json_decref(view);
}

static int by_time(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "timestamp_ms"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "timestamp_ms"));
    return x < y ? -1 : x > y ? 1 : 0;
}

pv_result advisor_history(struct advisor_worker *w, const char *sandbox, bool reviewer,
                          struct advisor_view *out)
{
    struct history_ctx x = {.w = w, .arr = json_array(), .reviewer = reviewer};
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);
    size_t n;
    json_t **v;
    json_t *sorted = json_array();

    memset(out, 0, sizeof(*out));
    if (pv_ok(res)) {
        res = store_chunk_each(w->st, sid, NULL, history_one, &x);
    }
    if (!pv_ok(res) || sorted == NULL) {
        json_decref(x.arr);
        json_decref(sorted);
        return view_refused(out, ADVISOR_REFUSED_NOT_FOUND,
                            pv_ok(res) ? pv_fail(PV_ERR_NOMEM, __func__) : res, "sandbox", NULL);
    }
    n = json_array_size(x.arr);
    v = pv_calloc(n + 1, sizeof(*v));
    for (size_t i = 0; v != NULL && i < n; i++) {
        v[i] = json_array_get(x.arr, i);
    }
    if (v != NULL) {
        /* Stable enough: entries of one chunk have increasing times. */
        qsort(v, n, sizeof(*v), by_time);
        for (size_t i = 0; i < n; i++) {
            json_array_append(sorted, v[i]);
        }
    }
    free(v);
    json_decref(x.arr);
    out->json = json_pack("{s:s,s:o}", "sandbox", sandbox, "history", sorted);
    return out->json != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, __func__);
}
