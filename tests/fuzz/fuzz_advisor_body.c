/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_advisor_body.c - libFuzzer target: what the advisor reads from a
 * proposal body an agent (or anyone holding a sandbox token) sends
 *
 * The input is parsed as the advisor parses a submission
 * (advisor_proposal_parse: the model's reading and the JSON form, both or
 * neither, one rule per operation). For every accepted
 * body, each operation's rule goes through the advisor's readers (key,
 * security notes, always-blocked check, event text, summary) and the
 * advisor's own re-serialisation of the rule must load again as a proposal
 * with the same rule name - the advisor stores that text and evaluates it
 * later, so a body it accepted must never become one it cannot read back.
 * The settings validator gets the whole input as a JSON value too, and the
 * mapper gets it as a proxy's denial batch: every proposal it makes from an
 * event must load as a proposal and never hold a `**` glob; GraphQL and
 * WebSocket ones (advisor_mapper_proposal_events) name exactly what was seen.
 *   ./tests/fuzz/fuzz_advisor_body -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_rule(const char *name, const json_t *rule)
{
    char host[256];
    char bin[1024];
    char *text;
    char *s;
    int64_t port = 0;
    size_t len = 0;
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr;

    advisor_rule_key(rule, host, sizeof(host), &port, bin, sizeof(bin));
    (void)advisor_rule_blocked_host(rule, false);
    (void)advisor_rule_blocked_host(rule, true);
    free(advisor_rule_security_notes(rule));
    free(advisor_rule_describe(rule));
    s = advisor_rule_summary(rule, name);
    free(s);
    text = advisor_proposal_text(name, rule, &len);
    if (text == NULL || d == NULL) {
        free(text);
        model_diags_free(d);
        return;
    }
    pr = model_proposal_load("stored", text, len, d);
    if (pr == NULL || model_proposal_nops(pr) != 1 ||
        strcmp(model_proposal_rule_name(pr, 0), name) != 0) {
        fprintf(stderr, "fuzz_advisor_body: accepted rule does not read back: %s\n%s\n", text,
                model_diags_count(d) > 0 ? model_diags_line(d, 0) : "");
        abort();
    }
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
}

/* The mapper's GraphQL and WebSocket proposals from the events of the batch
 * that share the kind of 'ev' (advisor_mapper_proposal_events): each must
 * load as a proposal and name exactly what was seen - no `**`, no `*`
 * operation type, no glob character in a field, no method/path rule on a
 * graphql endpoint, and a path equal to the denial's. */
static void check_scoped(const json_t *ev, const json_t *events)
{
    json_t *one = json_array();
    double conf;
    json_t *prop;
    char *text;

    json_array_append(one, PV_UNCONST(ev));
    json_array_extend(one, PV_UNCONST(events));
    prop = advisor_mapper_proposal_events(json_string_value(json_object_get(ev, "host")),
                                          json_integer_value(json_object_get(ev, "port")),
                                          json_string_value(json_object_get(ev, "binary")), one,
                                          json_object_get(ev, "prior"), false, &conf);
    json_decref(one);
    text = prop != NULL ? json_dumps(prop, JSON_COMPACT) : NULL;
    if (text != NULL) {
        struct model_diags *d = model_diags_new();
        struct model_proposal *pr = model_proposal_load("mapper", text, strlen(text), d);
        const json_t *ep = json_array_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_array_get(json_object_get(prop, "operations"), 0),
                                    "addRule"),
                    "rule"),
                "endpoints"),
            0);
        const char *proto = json_string_value(json_object_get(ep, "protocol"));
        bool bad = pr == NULL || strstr(text, "**") != NULL ||
                   strstr(text, "\"operation_type\":\"*\"") != NULL;
        size_t i;
        const json_t *r;

        json_array_foreach(json_object_get(ep, "rules"), i, r)
        {
            const json_t *al = json_object_get(r, "allow");
            size_t k;
            const json_t *f;
            json_array_foreach(json_object_get(al, "fields"), k, f)
            {
                bad = bad || strpbrk(json_string_value(f), "*?[]{}\\") != NULL;
            }
            bad = bad || (proto != NULL && strcmp(proto, "graphql") == 0 &&
                          json_object_get(al, "method") != NULL);
        }
        if (proto != NULL && strcmp(proto, "rest") != 0) {
            const char *path = json_string_value(json_object_get(ev, "path"));
            bad = bad || path == NULL ||
                  strcmp(path, json_string_value(json_object_get(ep, "path"))) != 0;
        }
        if (bad) {
            fprintf(stderr, "fuzz_advisor_body: the mapper proposed %s\n%s\n", text,
                    d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0) : "");
            abort();
        }
        model_proposal_free(pr);
        model_diags_free(d);
    }
    free(text);
    json_decref(prop);
}

/* The mapper's view of the input: a denial batch from a proxy. */
static void read_denials(const char *buf, size_t size, const json_t *root)
{
    struct advisor a;
    struct advisor_mapper *m;
    struct advisor_view v;
    const json_t *events = json_object_get(root, "events");

    memset(&a, 0, sizeof(a));
    m = advisor_mapper_new(&a, 1000, false);
    if (m == NULL) {
        return;
    }
    (void)advisor_mapper_ingest(m, "fuzz", buf, size, &v);
    advisor_view_clear(&v);
    advisor_mapper_free(m);
    for (size_t i = 0; i < json_array_size(events) && i < 64; i++) {
        const json_t *ev = json_array_get(events, i);
        const char *method = json_string_value(json_object_get(ev, "method"));
        const char *path = json_string_value(json_object_get(ev, "path"));
        double conf;
        json_t *prop = advisor_mapper_proposal(
            json_string_value(json_object_get(ev, "host")),
            json_integer_value(json_object_get(ev, "port")),
            json_string_value(json_object_get(ev, "binary")), 1, false, &method, &path,
            method != NULL && path != NULL ? 1 : 0, json_object_get(ev, "prior"), false, &conf);
        char *text = prop != NULL ? json_dumps(prop, JSON_COMPACT) : NULL;
        if (text != NULL) {
            struct model_diags *d = model_diags_new();
            struct model_proposal *pr = model_proposal_load("mapper", text, strlen(text), d);
            if (pr == NULL || strstr(text, "**") != NULL) {
                fprintf(stderr, "fuzz_advisor_body: the mapper proposed %s\n%s\n", text,
                        d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0) : "");
                abort();
            }
            model_proposal_free(pr);
            model_diags_free(d);
        }
        free(text);
        json_decref(prop);
        check_scoped(ev, events);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size == 0 ? 1 : size);
    struct model_diags *d = model_diags_new();
    struct advisor_proposal p;
    json_t *root;
    char msg[512];

    if (buf == NULL || d == NULL) {
        free(buf);
        model_diags_free(d);
        return 0;
    }
    if (size > 0) {
        memcpy(buf, data, size);
    }
    root = json_loadb(buf, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
    if (root != NULL) {
        (void)advisor_setting_check("proposal_approval_mode", root, msg, sizeof(msg));
        (void)advisor_setting_check("agent_policy_proposals_enabled", root, msg, sizeof(msg));
        (void)advisor_setting_check("peer_address_ranges", root, msg, sizeof(msg));
        read_denials(buf, size, root);
    }
    /* The submission's one parse (advisor_proposal_parse, the route's):
     * either both readings, with one JSON rule per operation the model
     * read, or neither. */
    if (pv_ok(advisor_proposal_parse(buf, size, &p, d))) {
        const json_t *ops = json_object_get(p.doc, "operations");
        if (p.model == NULL || json_array_size(ops) != model_proposal_nops(p.model)) {
            fprintf(stderr, "fuzz_advisor_body: a parsed proposal lost its operations\n");
            abort();
        }
        for (size_t i = 0; i < model_proposal_nops(p.model); i++) {
            const json_t *rule =
                json_object_get(json_object_get(json_array_get(ops, i), "addRule"), "rule");
            const char *name = model_proposal_rule_name(p.model, i);
            if (json_is_object(rule) && name != NULL && name[0] != '\0') {
                read_rule(name, rule);
            }
        }
        advisor_proposal_clear(&p);
    } else if (p.model != NULL || p.doc != NULL) {
        fprintf(stderr, "fuzz_advisor_body: a refused proposal kept a reading\n");
        abort();
    }
    model_diags_free(d);
    json_decref(root);
    free(buf);
    return 0;
}
