/* SPDX-License-Identifier: Apache-2.0 */
/* gql_driver.c - print what the GraphQL reader makes of documents
 *
 * Test driver for tests/graphql_diff.sh: reads JSON lines
 * {"doc": "...", "op": "name" or null} from stdin and prints one JSON line
 * per input: {"ok": true, "type", "name", "fields"} or {"ok": false,
 * "error"} (model_gql_read).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_graphql.h"

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        json_error_t je;
        json_t *in = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, &je);
        json_t *doc = json_object_get(in, "doc");
        json_t *opj = json_object_get(in, "op");
        if (!json_is_string(doc)) {
            fprintf(stderr, "gql_driver: bad input line: %s\n", je.text);
            json_decref(in);
            free(line);
            return 2;
        }
        struct model_gql_op op;
        char err[256];
        pv_result r = model_gql_read(json_string_value(doc), json_string_length(doc),
                                     json_is_string(opj) ? json_string_value(opj) : NULL, &op, err,
                                     sizeof(err));
        json_t *out = json_object();
        json_object_set_new(out, "ok", json_boolean(pv_ok(r)));
        if (pv_ok(r)) {
            json_t *fields = json_array();
            for (size_t i = 0; i < op.nfields; i++) {
                json_array_append_new(fields, json_string(op.fields[i]));
            }
            json_object_set_new(out, "type", json_string(model_gql_optype_name(op.type)));
            json_object_set_new(out, "name", op.name ? json_string(op.name) : json_null());
            json_object_set_new(out, "fields", fields);
        } else {
            json_object_set_new(out, "error", json_string(err));
        }
        char *s = json_dumps(out, JSON_COMPACT);
        puts(s != NULL ? s : "{}");
        free(s);
        json_decref(out);
        json_decref(in);
        model_gql_op_clear(&op);
    }
    free(line);
    return 0;
}
