/* SPDX-License-Identifier: Apache-2.0 */
/* cli_yamljson.c - convert a YAML document into a jansson tree (corpus cases)
 *
 * Corpus case files are YAML documents whose parts (baseline, candidate,
 * proposal, credentials, boundary, expect) are handed to libmodel as JSON. The
 * conversion keeps scalars that look like plain integers, booleans and null as
 * JSON numbers, booleans and null when they are unquoted; everything else is a
 * string. Aliases and non-scalar keys are rejected. Depth is bounded.
 */
#include "config.h"

#include <string.h>
#include <yaml.h>

#include "cli/cli.h"
#include "common/pv.h"

#define MAX_DEPTH 64

static json_t *scalar_to_json(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    uint64_t n;

    if (plain) {
        if ((len == 4 && memcmp(v, "true", 4) == 0)) {
            return json_true();
        }
        if ((len == 5 && memcmp(v, "false", 5) == 0)) {
            return json_false();
        }
        if (len == 0 || (len == 4 && memcmp(v, "null", 4) == 0) || (len == 1 && v[0] == '~')) {
            return json_null();
        }
        if (pv_ok(pv_parse_u64(v, len, (uint64_t)INT64_MAX, &n))) {
            return json_integer((json_int_t)n);
        }
    }
    return json_stringn(v, len);
}

/* Parse the node that starts with 'ev' (already consumed). */
static json_t *parse_node(yaml_parser_t *p, yaml_event_t *ev, int depth, char *err, size_t errlen)
{
    json_t *out = NULL;
    yaml_event_t child;

    if (depth > MAX_DEPTH) {
        snprintf(err, errlen, "line %zu: nesting too deep", ev->start_mark.line + 1);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return scalar_to_json(ev);
    case YAML_ALIAS_EVENT:
        snprintf(err, errlen, "line %zu: aliases are not supported", ev->start_mark.line + 1);
        return NULL;
    case YAML_SEQUENCE_START_EVENT:
        out = json_array();
        for (;;) {
            json_t *item;
            if (!yaml_parser_parse(p, &child)) {
                snprintf(err, errlen, "line %zu: %s", p->problem_mark.line + 1,
                         p->problem ? p->problem : "YAML error");
                json_decref(out);
                return NULL;
            }
            if (child.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&child);
                return out;
            }
            item = parse_node(p, &child, depth + 1, err, errlen);
            yaml_event_delete(&child);
            if (item == NULL || json_array_append_new(out, item) != 0) {
                json_decref(out);
                return NULL;
            }
        }
    case YAML_MAPPING_START_EVENT:
        out = json_object();
        for (;;) {
            json_t *val;
            char *key;
            if (!yaml_parser_parse(p, &child)) {
                snprintf(err, errlen, "line %zu: %s", p->problem_mark.line + 1,
                         p->problem ? p->problem : "YAML error");
                json_decref(out);
                return NULL;
            }
            if (child.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&child);
                return out;
            }
            if (child.type != YAML_SCALAR_EVENT) {
                snprintf(err, errlen, "line %zu: keys must be scalars", child.start_mark.line + 1);
                yaml_event_delete(&child);
                json_decref(out);
                return NULL;
            }
            key = pv_strndup((const char *)child.data.scalar.value, child.data.scalar.length);
            yaml_event_delete(&child);
            if (key == NULL || !yaml_parser_parse(p, &child)) {
                snprintf(err, errlen, "YAML error after key '%s'", key ? key : "?");
                free(key);
                json_decref(out);
                return NULL;
            }
            val = parse_node(p, &child, depth + 1, err, errlen);
            yaml_event_delete(&child);
            if (val == NULL || json_object_set_new(out, key, val) != 0) {
                free(key);
                json_decref(out);
                return NULL;
            }
            free(key);
        }
    default:
        snprintf(err, errlen, "line %zu: unexpected YAML event", ev->start_mark.line + 1);
        return NULL;
    }
}

json_t *cli_yaml_to_json(const char *buf, size_t len, char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_event_t ev;
    json_t *root = NULL;
    bool done = false;

    err[0] = '\0';
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, errlen, "line %zu: %s", p.problem_mark.line + 1,
                     p.problem ? p.problem : "YAML error");
            json_decref(root);
            root = NULL;
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            if (root != NULL) {
                snprintf(err, errlen, "more than one document");
                json_decref(root);
                root = NULL;
                done = true;
                break;
            }
            root = parse_node(&p, &ev, 0, err, errlen);
            if (root == NULL) {
                done = true;
            }
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    if (root == NULL && err[0] == '\0') {
        snprintf(err, errlen, "empty document");
    }
    return root;
}

/* ===========================================================================
 * Which kind of document a file holds (for hints)
 * ========================================================================= */

const char *cli_doc_hint(const char *path, const char *buf, size_t len, enum cli_doc want)
{
    static _Thread_local char hint[512];
    char err[128];
    json_t *j = cli_yaml_to_json(buf, len, err, sizeof(err));
    bool proposal = json_is_object(j) && (json_object_get(j, "operations") != NULL ||
                                          json_object_get(j, "intent_summary") != NULL);
    bool policy = json_is_object(j) && (json_object_get(j, "network_policies") != NULL ||
                                        json_object_get(j, "filesystem_policy") != NULL);

    json_decref(j);
    if (want == CLI_DOC_POLICY && proposal && !policy) {
        snprintf(hint, sizeof(hint),
                 "%s: hint: this looks like a proposal (intent_summary/operations), not a "
                 "policy; give it with 'proviso prove --proposal %s'",
                 path, path);
        return hint;
    }
    if (want == CLI_DOC_PROPOSAL && policy && !proposal) {
        snprintf(hint, sizeof(hint),
                 "%s: hint: this looks like a policy (network_policies), not a proposal; "
                 "give it with --candidate or --policy",
                 path);
        return hint;
    }
    return NULL;
}
