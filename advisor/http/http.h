/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - the advisor's HTTP face (advisor/http/)
 *
 * The route table and its dispatch (advisor_routes.c), the lifecycle's
 * routes and the one table mapping a refusal to a status
 * (advisor_routes_chunk.c), the sandbox, settings and document routes
 * (advisor_routes_sandbox.c), request parsing (advisor_route_args.c),
 * /openapi.json (advisor_api.c) and /ui/ (advisor_ui.c). Parse the request
 * once, call a room below, map its result to a status and JSON
 * (docs/architecture.md#advisor).
 */
#ifndef ADVISOR_HTTP_H
#define ADVISOR_HTTP_H

#include "advisor/inputs/inputs.h"

/* ===========================================================================
 * HTTP (advisor_routes.c, advisor_api.c, advisor_ui.c)
 * ========================================================================= */

/* The route table for libhttpd and its handler (ctx is the struct advisor). */
const struct httpd_route *advisor_routes(size_t *n);
void advisor_handle(void *ctx, void *worker, const struct httpd_req *rq, struct httpd_reply *r);
/* The embedded OpenAPI document. */
const char *advisor_api_text(size_t *len);
/* GET /ui, /ui/, /ui/app.js, /ui/app.css: the reviewer inbox's embedded
 * files with their content types and Content-Security-Policy; /ui redirects
 * to /ui/ (advisor_ui.c). 'path' is borrowed; the reply points at static
 * data. */
void advisor_ui_reply(const char *path, struct httpd_reply *r);

/* The lifecycle's routes (advisor_routes_chunk.c): parse the request once,
 * call the C API of life.h, map its result (a refusal through one table). */
/* POST /v1/sandboxes/{name}/proposals on advisor_submit (life.h)
 * (advisor_routes_chunk.c): parse once, submit, answer 202 with the
 * outcomes ('mode' is the analysis_mode argument, may be NULL). */
void advisor_route_submit(struct advisor_worker *w, const char *sandbox, const char *mode,
                          const char *body, size_t len, struct httpd_reply *r);
/* The routes of advisor_chunk_get, _wait and _list. */
void advisor_route_chunk_show(struct advisor_worker *w, const char *sandbox, const char *id,
                              bool reviewer, struct httpd_reply *r);
void advisor_route_chunk_wait(struct advisor_worker *w, const char *sandbox, const char *id,
                              unsigned timeout_s, struct advisor_hold *hold, struct httpd_reply *r);
void advisor_route_chunk_list(struct advisor_worker *w, const char *sandbox, const char *status,
                              bool reviewer, struct httpd_reply *r);
/* The routes of advisor_approve, _approve_suggestion, _reject and _undo: parse the body
 * ({"review_token"} or {"reason"}), decide, answer. */
void advisor_route_approve(struct advisor_worker *w, const char *sandbox, const char *id,
                           const char *body, size_t len, struct httpd_reply *r);
void advisor_route_approve_suggestion(struct advisor_worker *w, const char *sandbox, const char *id,
                                      const char *body, size_t len, struct httpd_reply *r);
void advisor_route_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *body, size_t len, struct httpd_reply *r);
void advisor_route_undo(struct advisor_worker *w, const char *sandbox, const char *id,
                        struct httpd_reply *r);
/* A view as an answer, the one mapping of a C API's result to HTTP: 200
 * with v->json (taken) when 'res' is ok, else the refusal's status and
 * error from one table (advisor_routes_chunk.c) with v->detail. Clears 'v'. */
void advisor_reply_view(struct httpd_reply *r, pv_result res, struct advisor_view *v);
/* A store failure as an answer (advisor_view_store_error's refusal): 404
 * "WHAT not found", 409 "WHAT already exists", otherwise 500. */
void advisor_reply_store_error(struct httpd_reply *r, pv_result res, const char *what);
/* The same, answering 'status' (202: taken, not yet acted on) when read. */
void advisor_reply_view_as(struct httpd_reply *r, unsigned status, pv_result res,
                           struct advisor_view *v);
/* A decision as an answer: 200 with advisor_decision_json, or the
 * refusal's status and error. */
void advisor_reply_decision(struct httpd_reply *r, const struct advisor_decision *d);
void advisor_route_edit(struct advisor_worker *w, const char *sandbox, const char *id,
                        const char *body, size_t len, struct httpd_reply *r);
void advisor_route_approve_all(struct advisor_worker *w, const char *sandbox, const char *body,
                               size_t len, struct httpd_reply *r);
void advisor_route_clear(struct advisor_worker *w, const char *sandbox, struct httpd_reply *r);
void advisor_route_history(struct advisor_worker *w, const char *sandbox, bool reviewer,
                           struct httpd_reply *r);
/* PUT .../policy's document text: parsed once, then advisor_base_set. */
void advisor_route_base_set(struct advisor_worker *w, const char *sandbox, const char *text,
                            size_t len, const char *cause, struct httpd_reply *r);

#endif
