/* SPDX-License-Identifier: Apache-2.0 */
/* model_yamljson.c - a YAML document as JSON, through the policy reader
 *
 * The CLI's corpus cases and rule files are YAML handed on as JSON. They
 * are read by the same reader as policies (model_yaml.c), so they share
 * its limits, its refusals and its FILE:LINE:COL errors; this file only
 * turns the node tree into jansson values (model.h, model_yaml_json).
 */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "common/pv.h"
#include "model/model_int.h"

static json_t *scalar_json(const struct model_node *n)
{
    const char *s = n->scalar;
    size_t len = n->scalar_len;
    uint64_t v;

    if (!n->quoted) {
        if (len == 4 && memcmp(s, "true", 4) == 0) {
            return json_true();
        }
        if (len == 5 && memcmp(s, "false", 5) == 0) {
            return json_false();
        }
        if (pv_ok(pv_parse_u64(s, len, (uint64_t)INT64_MAX, &v))) {
            return json_integer((json_int_t)v);
        }
    }
    return json_stringn(s, len);
}

/* The reader bounds the depth of the tree, so recursion is bounded too. */
static json_t *node_json(const struct model_node *n)
{
    json_t *out;

    switch (n->kind) {
    case MODEL_NODE_NULL:
        return json_null();
    case MODEL_NODE_SCALAR:
        return scalar_json(n);
    case MODEL_NODE_SEQ:
        out = json_array();
        for (size_t i = 0; out != NULL && i < n->nitems; i++) {
            if (json_array_append_new(out, node_json(n->items[i])) != 0) {
                json_decref(out);
                out = NULL;
            }
        }
        return out;
    case MODEL_NODE_MAP:
        out = json_object();
        for (size_t i = 0; out != NULL && i + 1 < n->nitems; i += 2) {
            const struct model_node *k = n->items[i];
            if (k->kind != MODEL_NODE_SCALAR ||
                json_object_setn_new(out, k->scalar, k->scalar_len, node_json(n->items[i + 1])) !=
                    0) {
                json_decref(out);
                out = NULL;
            }
        }
        return out;
    }
    return NULL;
}

struct json_t *model_yaml_json(const char *file, const char *buf, size_t len, bool dup_ok,
                               struct model_diags *diags)
{
    struct model_node *root = model_yaml_read_dup(file, buf, len, dup_ok, diags);
    json_t *out;

    if (root == NULL) {
        return NULL;
    }
    out = node_json(root);
    if (out == NULL) {
        pv_result rc = model_diag_add(diags, file, root->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        (void)rc; /* without room for the diagnostic NULL still says it */
    }
    model_node_free(root);
    return out;
}
