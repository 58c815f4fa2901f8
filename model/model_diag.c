/* SPDX-License-Identifier: Apache-2.0 */
/* model_diag.c - diagnostics: located messages of every reader
 *
 * A diagnostic is a FILE:LINE:COL and a message; the readers, the schema
 * walker, the validator and the loader add them, and every consumer (the
 * CLI, the prover service, the advisor) reads them back as lines. This
 * file is part of model/'s base: it calls nothing else of model/.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"

/* A policy with thousands of problems is reported by its first ones. */
#define MAX_DIAGS 1000

/* ---------------------------------------------------------------------------
 * Diagnostics
 * ------------------------------------------------------------------------- */

struct model_diags *model_diags_new(void)
{
    return pv_calloc(1, sizeof(struct model_diags));
}

void model_diags_free(struct model_diags *d)
{
    if (d == NULL) {
        return;
    }
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].file);
        free(d->v[i].msg);
        free(d->v[i].line);
    }
    free(d->v);
    free(d);
}

bool model_diags_nomem(const struct model_diags *d)
{
    const char *oom = pv_strerror(PV_ERR_NOMEM);
    size_t ol = strlen(oom);

    for (size_t i = 0; d != NULL && i < d->n; i++) {
        const char *m = d->v[i].msg;
        size_t ml = m != NULL ? strlen(m) : 0;

        /* the message, or its end ("cannot compile policy: out of memory") */
        if (ml >= ol && strcmp(m + ml - ol, oom) == 0 && (ml == ol || m[ml - ol - 1] == ' ')) {
            return true;
        }
    }
    return false;
}

size_t model_diags_count(const struct model_diags *d)
{
    return d == NULL ? 0 : d->n;
}

static pv_result diag_push(struct model_diags *d, const char *file, struct model_mark mark,
                           char *msg /* steals */)
{
    struct model_diag *slot;

    PV_ENSURE(msg != NULL, PV_ERR_NOMEM);
    /* One diagnostic is one line, whatever text (jansson's "near '...'",
     * an echoed host) it quotes from the input. */
    for (char *c = msg; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7F) {
            *c = '?';
        }
    }
    /* Capacity doubles at every power of two, so no separate cap field. */
    if (d->n == 0 || (d->n & (d->n - 1)) == 0) {
        size_t ncap = d->n == 0 ? 4 : d->n * 2;
        struct model_diag *nv = pv_realloc(d->v, ncap * sizeof(*nv));
        if (nv == NULL) {
            free(msg);
            PV_BAIL(PV_ERR_NOMEM);
        }
        d->v = nv;
    }
    slot = &d->v[d->n];
    slot->file = pv_strdup(file != NULL ? file : "<input>");
    if (slot->file == NULL) {
        free(msg);
        PV_BAIL(PV_ERR_NOMEM);
    }
    slot->mark = mark;
    slot->msg = msg;
    slot->line = NULL;
    d->n++;
    return PV_RESULT_OK;
}

pv_result model_diag_add(struct model_diags *d, const char *file, struct model_mark mark,
                         const char *fmt, ...)
{
    struct pv_dynbuf b;
    va_list ap;
    pv_result r;

    PV_ENSURE_REF(d);
    if (d->n > MAX_DIAGS) {
        return PV_RESULT_OK;
    }
    if (d->n == MAX_DIAGS) {
        pv_dynbuf_init(&b, 64);
        PV_GUARD(pv_dynbuf_addstr(&b, "too many errors; the rest are not reported"));
        return diag_push(d, file, (struct model_mark){0, 0}, pv_dynbuf_take(&b, NULL));
    }
    pv_dynbuf_init(&b, 4096);
    va_start(ap, fmt);
    r = pv_dynbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (r.err == PV_ERR_TOOBIG) {
        /* Over-long message (a huge key echoed back): keep what fits. */
        pv_dynbuf_free(&b);
        pv_dynbuf_init(&b, 4096);
        PV_GUARD(pv_dynbuf_addstr(&b, "(message too long)"));
    } else if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        return r;
    }
    return diag_push(d, file, mark, pv_dynbuf_take(&b, NULL));
}

const char *model_diags_line(struct model_diags *d, size_t i)
{
    struct model_diag *g;
    struct pv_dynbuf b;
    pv_result r;

    if (d == NULL || i >= d->n) {
        return NULL;
    }
    g = &d->v[i];
    if (g->line != NULL) {
        return g->line;
    }
    pv_dynbuf_init(&b, SIZE_MAX / 2);
    if (g->mark.line == 0) {
        r = pv_dynbuf_printf(&b, "%s: %s", g->file, g->msg);
    } else {
        r = pv_dynbuf_printf(&b, "%s:%u:%u: %s", g->file, (unsigned)g->mark.line,
                             (unsigned)g->mark.col, g->msg);
    }
    if (!pv_ok(r)) {
        pv_dynbuf_free(&b);
        return g->msg;
    }
    g->line = pv_dynbuf_take(&b, NULL);
    return g->line;
}

/* Unlocated diagnostics (line 0: "too many errors", a whole-file problem)
 * sort after every located one. */
static bool diag_before(const struct model_diag *a, const struct model_diag *b)
{
    uint64_t ka = a->mark.line == 0 ? UINT64_MAX : (uint64_t)a->mark.line << 32 | a->mark.col;
    uint64_t kb = b->mark.line == 0 ? UINT64_MAX : (uint64_t)b->mark.line << 32 | b->mark.col;

    return ka < kb;
}

void model_diags_sort(struct model_diags *d)
{
    /* Insertion sort: stable, and a policy has at most MAX_DIAGS + 1. */
    for (size_t i = 1; d != NULL && i < d->n; i++) {
        struct model_diag g = d->v[i];
        size_t j = i;

        while (j > 0 && diag_before(&g, &d->v[j - 1])) {
            d->v[j] = d->v[j - 1];
            j--;
        }
        d->v[j] = g;
    }
}

const char *model_diags_msg(const struct model_diags *d, size_t i)
{
    if (d == NULL || i >= d->n) {
        return NULL;
    }
    return d->v[i].msg;
}
