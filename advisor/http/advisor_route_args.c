/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_route_args.c - reading a request: query arguments, the JSON
 * body, document members
 *
 * What the route files share (advisor_int.h): advisor_routes.c dispatches
 * to advisor_routes_sandbox.c and advisor_routes_chunk.c, and all three
 * parse with these, so no route file calls back into the dispatcher.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/http/http.h"
#include "advisor/http/http_int.h"
#include "common/pv_text.h"

unsigned advisor_route_arg_uint(const struct httpd_req *rq, const char *name, unsigned dflt,
                                unsigned lo, unsigned hi)
{
    const char *v = httpd_req_arg(rq, name);
    uint64_t n = 0;

    if (v == NULL || !pv_ok(pv_parse_u64(v, strlen(v), UINT64_MAX, &n))) {
        return dflt;
    }
    return n < lo ? lo : n > hi ? hi : (unsigned)n;
}

json_t *advisor_route_body(const struct httpd_req *rq, struct httpd_reply *r)
{
    json_error_t je;
    json_t *j = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);

    if (!json_is_object(j)) {
        char detail[256];
        snprintf(detail, sizeof(detail), "body:%d:%d: %s", je.line, je.column,
                 j == NULL ? je.text : "expected a JSON object");
        json_decref(j);
        httpd_reply_error(r, 400, "invalid_json", detail);
        return NULL;
    }
    return j;
}

/* A document member: a string (YAML or JSON text) as is, an object or
 * array serialised. NULL when absent or of another type. New string. */
char *advisor_route_doc_text(const json_t *v)
{
    if (json_is_string(v)) {
        return pv_strdup(json_string_value(v));
    }
    if (json_is_object(v) || json_is_array(v)) {
        return json_dumps(v, JSON_COMPACT);
    }
    return NULL;
}
