/* SPDX-License-Identifier: Apache-2.0 */
/* cli_chunk.c - a proposal chunk as a reviewer reads it
 *
 * The advisor's chunk object (reviewer view: proposed_rule, security notes
 * and the evidence: the prover's answer, the boundary check, the policy
 * diff) printed as text to be read at a glance: first what the change
 * grants (the prover's headline sentence and its grant lines with their
 * breadth, prover_review_text), then what is asked (rule,
 * endpoints with their L7 rules, binaries, rationale), what the prover found
 * (validation result, then each path with its witness request), what to
 * watch (security notes, application error) and what would change (diff).
 * Everything here only reads the object; a missing member prints nothing or
 * "-", so an older or newer advisor's answer still renders.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv_dynbuf.h"
#include "prover/prover.h"

#define LABEL "%-18s"

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

static long long jint(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* Print 'text' under 'label', continuation lines indented to the value. */
static void field(FILE *out, const char *label, const char *text)
{
    const char *p = text;

    if (text == NULL || text[0] == '\0') {
        return;
    }
    fprintf(out, LABEL, label);
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        fprintf(out, "%s%.*s\n", p == text ? "" : "                  ", (int)n, p);
        p += n;
        if (*p == '\n') {
            p++;
        }
    }
}

/* ===========================================================================
 * Endpoints
 * ========================================================================= */

/* "METHOD PATH" (or the command, tool or operation) of one L7 rule. */
static void l7_rule(struct pv_dynbuf *b, const json_t *r)
{
    static const char *const keys[] = {"method", "path",           "command",
                                       "tool",   "operation_type", "operation_name"};
    bool first = true;

    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        const char *v = jstr(r, keys[i]);
        if (v[0] != '\0') {
            pv_dynbuf_putf(b, "%s%s", first ? "" : " ", v);
            first = false;
        }
    }
    if (first) {
        pv_dynbuf_puts(b, "*");
    }
}

void cli_endpoint_summary(struct pv_dynbuf *b, const json_t *ep)
{
    const json_t *ports = json_object_get(ep, "ports");
    const json_t *rules = json_object_get(ep, "rules");
    const json_t *deny = json_object_get(ep, "deny_rules");
    const json_t *ips = json_object_get(ep, "allowed_ips");
    const char *proto = jstr(ep, "protocol");
    const json_t *v;
    size_t i;

    pv_dynbuf_puts(b, json_object_get(ep, "host") != NULL ? jstr(ep, "host") : "*");
    if (json_array_size(ports) > 0) {
        pv_dynbuf_puts(b, ":");
        json_array_foreach(ports, i, v)
        {
            pv_dynbuf_putf(b, "%s%lld", i > 0 ? "," : "", (long long)json_integer_value(v));
        }
    } else {
        pv_dynbuf_putf(b, ":%lld", jint(ep, "port"));
    }
    if (proto[0] != '\0') {
        pv_dynbuf_putf(b, " [L7 %s", proto);
        if (jstr(ep, "enforcement")[0] != '\0') {
            pv_dynbuf_putf(b, " %s", jstr(ep, "enforcement"));
        }
    } else {
        pv_dynbuf_puts(b, " [L4");
    }
    if (jstr(ep, "access")[0] != '\0') {
        pv_dynbuf_putf(b, ", access %s", jstr(ep, "access"));
    }
    if (jstr(ep, "tls")[0] != '\0') {
        pv_dynbuf_putf(b, ", tls %s", jstr(ep, "tls"));
    }
    json_array_foreach(rules, i, v)
    {
        pv_dynbuf_puts(b, ", allow ");
        l7_rule(b, json_object_get(v, "allow"));
    }
    json_array_foreach(deny, i, v)
    {
        pv_dynbuf_puts(b, ", deny ");
        l7_rule(b, v);
    }
    json_array_foreach(ips, i, v)
    {
        pv_dynbuf_putf(b, ", allowed_ips %s", json_is_string(v) ? json_string_value(v) : "?");
    }
    if (json_is_true(json_object_get(ep, "allow_uninspected_credentials"))) {
        pv_dynbuf_puts(b, ", allow_uninspected_credentials");
    }
    pv_dynbuf_puts(b, "]");
}

static void endpoints(FILE *out, const json_t *rule)
{
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *ep;
    size_t i;

    json_array_foreach(eps, i, ep)
    {
        struct pv_dynbuf b;
        char *s;

        pv_dynbuf_init(&b, 65536);
        cli_endpoint_summary(&b, ep);
        s = pv_dynbuf_finish(&b);
        fprintf(out, LABEL "%s\n", i == 0 ? "endpoint:" : "", s != NULL ? s : "(too long)");
        free(s);
    }
}

static void binaries(FILE *out, const json_t *rule)
{
    const json_t *bins = json_object_get(rule, "binaries");
    const json_t *bin;
    size_t i;

    if (json_array_size(bins) == 0) {
        return;
    }
    fprintf(out, LABEL, "binaries:");
    json_array_foreach(bins, i, bin)
    {
        fprintf(out, "%s%s", i > 0 ? ", " : "", jstr(bin, "path"));
    }
    fputc('\n', out);
}

/* ===========================================================================
 * Evidence
 * ========================================================================= */

static void witness(FILE *out, const json_t *w)
{
    const char *q = jstr(w, "query");

    if (!json_is_object(w) || jstr(w, "host")[0] == '\0') {
        return;
    }
    fprintf(out, "      witness: %s %s:%lld%s%s%s", jstr(w, "method")[0] ? jstr(w, "method") : "-",
            jstr(w, "host"), jint(w, "port"), jstr(w, "path"), q[0] != '\0' ? "?" : "", q);
    if (jstr(w, "binary")[0] != '\0') {
        fprintf(out, " by %s", jstr(w, "binary"));
    }
    if (jstr(w, "ip")[0] != '\0') {
        fprintf(out, " to %s", jstr(w, "ip"));
    }
    fputc('\n', out);
    if (jstr(w, "action")[0] != '\0') {
        fprintf(out, "      api %s, action %s, risk %s\n", jstr(w, "api")[0] ? jstr(w, "api") : "-",
                jstr(w, "action"), jstr(w, "risk")[0] ? jstr(w, "risk") : "-");
    }
}

/* Each path of each finding of a prover answer ({verdict, findings[]}). */
static void findings(FILE *out, const char *label, const json_t *answer)
{
    const json_t *list = json_object_get(answer, "findings");
    const json_t *f;
    size_t i;

    if (!json_is_object(answer)) {
        return;
    }
    fprintf(out, LABEL "%s", label,
            jstr(answer, "verdict")[0] ? jstr(answer, "verdict") : "(no verdict)");
    if (jstr(answer, "reason")[0] != '\0') {
        fprintf(out, " (%s)", jstr(answer, "reason"));
    }
    if (jstr(answer, "error")[0] != '\0') {
        fprintf(out, " error: %s", jstr(answer, "error"));
    }
    fputc('\n', out);
    json_array_foreach(list, i, f)
    {
        const json_t *paths = json_object_get(f, "paths");
        const json_t *p;
        size_t k;

        json_array_foreach(paths, k, p)
        {
            const json_t *creds = json_object_get(p, "credentials");
            const json_t *c;
            size_t m;

            fprintf(out, "  - %s: %s -> %s:%lld", jstr(f, "category"), jstr(p, "binary"),
                    jstr(p, "host"), jint(p, "port"));
            if (jstr(p, "method")[0] != '\0') {
                fprintf(out, " %s", jstr(p, "method"));
            }
            if (jstr(p, "rule")[0] != '\0') {
                fprintf(out, " (rule %s", jstr(p, "rule"));
                json_array_foreach(creds, m, c)
                {
                    fprintf(out, "%s%s", m == 0 ? ", credentials " : ", ",
                            json_is_string(c) ? json_string_value(c) : "?");
                }
                fputc(')', out);
            }
            fputc('\n', out);
            witness(out, json_object_get(p, "witness"));
        }
    }
}

/* The evidence's diff, each line as it is, indented: its hunks' "@@ PATH @@"
 * headers and ' ', '-', '+' lines (docs/advisor.md#diff), or the '-' and
 * '+' lines alone of an evaluation stored before hunks. */
static void diff(FILE *out, const char *text)
{
    const char *p = text;

    if (text[0] == '\0') {
        return;
    }
    fprintf(out, "policy diff:\n");
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        fprintf(out, "  %.*s\n", (int)n, p);
        p += n;
        if (*p == '\n') {
            p++;
        }
    }
}

/* ===========================================================================
 * The chunk
 * ========================================================================= */

/* What the change grants, first (docs/semantics.md#grants): the prover's
 * headline sentence and one line per grant with its breadth. Only when the
 * evidence carries a grant list: an answer without one (an older advisor,
 * an invalid candidate) must not read as "grants no new unit". */
static void grants(FILE *out, const json_t *answer)
{
    char *s;

    if (!json_is_array(json_object_get(answer, "grants"))) {
        return;
    }
    s = prover_review_text(answer, false);
    if (s != NULL) {
        fprintf(out, "%s\n", s);
    }
    free(s);
}

void cli_chunk_print(FILE *out, const json_t *c)
{
    const json_t *rule = json_object_get(c, "proposed_rule");
    const json_t *ev = json_object_get(c, "evidence");
    const char *status = jstr(c, "status");

    fprintf(out, "chunk %s\n", jstr(c, "chunk_id"));
    grants(out, json_object_get(ev, "prover"));
    fprintf(out, LABEL "%s", "status:", status);
    if (strcmp(status, "approved") == 0) {
        fprintf(out, " (%srevision %lld, %s)",
                json_is_true(json_object_get(c, "auto_approved")) ? "automatically, " : "",
                jint(c, "approved_revision"),
                json_is_true(json_object_get(c, "policy_reloaded")) ? "loaded by the proxy"
                                                                    : "not yet loaded");
    } else if (jstr(c, "decided_by")[0] != '\0') {
        fprintf(out, " (by %s)", jstr(c, "decided_by"));
    }
    fputc('\n', out);
    field(out, "rejection reason:", jstr(c, "rejection_reason"));
    field(out, "suspended:", jstr(c, "suspension_reason"));
    field(out, "rule:", jstr(c, "rule_name"));
    endpoints(out, rule);
    binaries(out, rule);
    if (json_object_get(c, "analysis_mode") != NULL) {
        /* confidence is the proposer's estimate that the rule is wanted (the
         * agent's, or the denial mapper's from what it saw), never a
         * safety score: say so where the number is shown */
        fprintf(out,
                LABEL "%s, confidence %.0f%% (the proposer's estimate, not a safety score), "
                      "seen %lld time(s)\n",
                "proposed by:", jstr(c, "analysis_mode"),
                json_number_value(json_object_get(c, "confidence")) * 100.0, jint(c, "hit_count"));
    }
    field(out, "rationale:", jstr(c, "rationale"));
    field(out, "validation:",
          jstr(c, "validation_result")[0] ? jstr(c, "validation_result")
                                          : "(the prover did not run)");
    findings(out, "prover:", json_object_get(ev, "prover"));
    findings(out, "boundary:", json_object_get(ev, "boundary"));
    field(out, "envelope:", jstr(json_object_get(ev, "envelope"), "note"));
    if (json_is_object(json_object_get(json_object_get(ev, "suggestion"), "rule"))) {
        /* proved approvable by the advisor (docs/advisor.md#suggestion) */
        const json_t *sg = json_object_get(ev, "suggestion");
        char *text = json_dumps(json_object_get(sg, "rule"), JSON_COMPACT | JSON_SORT_KEYS);
        fprintf(out, LABEL "%s (%s)\n", "suggestion:", text != NULL ? text : "?",
                jstr(sg, "validation_result"));
        fprintf(out, LABEL "%s\n", "suggestion token:", jstr(sg, "review_token"));
        free(text);
    }
    field(out,
          "security notes:", jstr(c, "security_notes")[0] ? jstr(c, "security_notes") : "none");
    if (json_is_object(json_object_get(c, "approved_evidence"))) {
        /* a suspended approval: what it rested on, beside the above */
        fprintf(out, "when approved:\n");
        grants(out, json_object_get(json_object_get(c, "approved_evidence"), "prover"));
        findings(out, "prover then:",
                 json_object_get(json_object_get(c, "approved_evidence"), "prover"));
    }
    field(out, "application error:", jstr(c, "application_error"));
    field(out, "review token:", jstr(c, "review_token"));
    if (json_is_false(json_object_get(c, "evaluated_on_current_policy"))) {
        /* docs/advisor.md#review-tokens: the one rule, said where the token is */
        field(out, "",
              "(evaluated against an earlier policy: approving proves it again, and goes\n"
              "through only if what it grants and finds is what is shown here; otherwise the\n"
              "advisor answers 412 with the refreshed evaluation and its new token)");
    }
    diff(out, jstr(ev, "diff"));
}

static void first_line(const char *s, const char **p, int *n)
{
    const char *nl = strchr(s, '\n');

    *p = s;
    *n = nl != NULL ? (int)(nl - s) : (int)strlen(s);
}

void cli_chunk_header(FILE *out)
{
    fprintf(out, "%-8s  %-9s  %-24s  %-28s  %s\n", "ID", "STATUS", "RULE", "ENDPOINT",
            "VALIDATION");
}

void cli_chunk_line(FILE *out, const json_t *c)
{
    const char *vr = jstr(c, "validation_result");
    const char *err = jstr(c, "application_error");
    char ep[300];
    const char *p;
    int n;

    snprintf(ep, sizeof(ep), "%s:%lld", jstr(c, "host"), jint(c, "port"));
    first_line(vr[0] != '\0' ? vr : err, &p, &n);
    fprintf(out, "%-8.8s  %-9s  %-24s  %-28s  %s%.*s%s\n", jstr(c, "chunk_id"), jstr(c, "status"),
            jstr(c, "rule_name"), ep, vr[0] == '\0' && err[0] != '\0' ? "error: " : "", n, p,
            jstr(c, "security_notes")[0] != '\0' ? "  (security notes)" : "");
}
