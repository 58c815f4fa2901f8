/* SPDX-License-Identifier: Apache-2.0 */
/* http_int.h - what the route files share (advisor/http/)
 *
 * advisor_routes.c dispatches to advisor_routes_sandbox.c and
 * advisor_routes_chunk.c; all three read requests with
 * advisor_route_args.c. Not for use outside http/.
 */
#ifndef ADVISOR_HTTP_INT_H
#define ADVISOR_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "advisor/http/http.h"

/* ===========================================================================
 * The HTTP routes' shared pieces (advisor_routes.c) and the sandbox routes
 * (advisor_routes_sandbox.c)
 * ========================================================================= */

#define ADVISOR_LONGPOLL_MAX_S 300u

/* Query argument 'name' as an unsigned in [lo, hi] ('dflt' when absent or
 * not a number). */
unsigned advisor_route_arg_uint(const struct httpd_req *rq, const char *name, unsigned dflt,
                                unsigned lo, unsigned hi);
/* The request body as a JSON object, or NULL with a 400 in 'r'. */
json_t *advisor_route_body(const struct httpd_req *rq, struct httpd_reply *r);
/* A document member: a string as is, an object or array serialised; NULL
 * when absent or of another type. New string. */
char *advisor_route_doc_text(const json_t *v);
struct store_sandbox;
json_t *advisor_route_sandbox_json(struct advisor_worker *w, const struct store_sandbox *sb);
void advisor_route_sandboxes(struct advisor_worker *w, struct httpd_reply *r);
void advisor_route_sandbox_create(struct advisor_worker *w, const struct httpd_req *rq,
                                  struct httpd_reply *r);
void advisor_route_sandbox_delete(struct advisor_worker *w, const char *name,
                                  struct httpd_reply *r);
/* GET .../policy, a long-poll when 'hold' is not NULL (?after=REV). */
void advisor_route_policy(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                          struct advisor_hold *hold, struct httpd_reply *r);
/* PUT .../credentials ('credentials') or .../boundary; 'name' NULL: the
 * global boundary. */
void advisor_route_sandbox_doc(struct advisor_worker *w, const struct httpd_req *rq,
                               const char *name, bool credentials, struct httpd_reply *r);
void advisor_route_loaded(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                          struct httpd_reply *r);
/* PUT or DELETE ('del') setting 'key' of 'sandbox' (NULL: global). */
void advisor_route_setting(struct advisor_worker *w, const struct httpd_req *rq,
                           const char *sandbox, const char *key, bool del, struct httpd_reply *r);

#endif
