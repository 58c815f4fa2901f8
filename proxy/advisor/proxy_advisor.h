/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_advisor.h - advisor mode: policy from proviso-advisor, policy.local
 * (proxy/ internal; other folders use proxy.h)
 *
 * With --advisor the proxy takes its policy from proviso-advisor over HTTP
 * (libcurl; never the advisor's code). Threads never touch the event loop's
 * state: a sync thread long-polls the sandbox's policy and hands each new
 * revision to the loop through a mutex-protected slot and a pipe; the loop
 * loads it through the same reload path a policy file takes
 * (proxy_server_reload) and a worker reports it loaded. A small pool of
 * worker threads makes every other advisor call (policy.local proposals,
 * waits, loaded reports) so that the loop never blocks on HTTP.
 *
 * Modules (proxy/advisor/): proxy_advisor.c (sync, workers, state, the
 * hooks it registers with the core), proxy_advisor_args.c (the options),
 * proxy_local.c (the policy.local API,
 * recent denials), proxy_denials.c (the denial stream), proxy_skill.c (the
 * agent skill file). Advisor mode uses the core (proxy_int.h); the core
 * reaches advisor mode only through struct proxy_hooks and never includes
 * this header (tests/check-layering.sh).
 */
#ifndef PROXY_ADVISOR_H
#define PROXY_ADVISOR_H

#include <jansson.h>

#include "proxy/proxy_int.h"

struct proxy_advisor;
struct proxy_server;
struct proxy_conn;

/* ===========================================================================
 * Sync and workers (proxy_advisor.c)
 * ========================================================================= */

/* proxy_advisor_args() (proxy_advisor_args.c) is declared in proxy.h
 * (proxy_main.c needs it); it sets cfg->mode_start to this. */
/* Start advisor mode on the server's loop: proxy_advisor_new() and its
 * hooks registered with the core (proxy_server_set_hooks). 0, or -1 after a
 * logged message. */
int proxy_advisor_start(struct proxy_server *srv);

/* Start advisor mode for 'srv' (reads the token file, starts the threads).
 * New; NULL after a logged message. proxy_advisor_free(NULL) is a no-op. */
struct proxy_advisor *proxy_advisor_new(struct proxy_server *srv);
/* Stops the threads (aborting their transfers), frees pending policy.local
 * requests. Runs before the event base is freed. */
void proxy_advisor_free(struct proxy_advisor *a);

/* The policy.local state of 'a' (borrowed). */
struct proxy_local *proxy_advisor_local(const struct proxy_advisor *a);
/* Loop thread: is agent_policy_proposals_enabled on (last value seen)? */
bool proxy_advisor_enabled(const struct proxy_advisor *a);
/* Loop thread: the skill file path (borrowed). */
const char *proxy_advisor_skill_path(const struct proxy_advisor *a);
/* Loop thread: YAML of the revision this proxy enforces, NULL when none
 * (borrowed; quarantine and start-up have none). */
const char *proxy_advisor_policy_yaml(const struct proxy_advisor *a);

/* Any thread: wait until this proxy has loaded a revision >= 'rev' or
 * 'deadline_ms' (CLOCK_MONOTONIC ms) passes; true when it has. */
bool proxy_advisor_wait_loaded(struct proxy_advisor *a, int64_t rev, int64_t deadline_ms);
int64_t proxy_advisor_now_ms(void);
/* Loop thread: the revision this proxy enforces (0: none yet). */
int64_t proxy_advisor_applied_rev(const struct proxy_advisor *a);

/* One call to the advisor from a worker thread. 'path' is appended to
 * /v1/sandboxes/NAME ("" for the sandbox itself); 'body' (may be NULL) is
 * sent as application/json. On a transfer failure returns false with a
 * message in 'err'; otherwise true with the status and the body (new,
 * caller frees, NUL-terminated). */
struct proxy_advisor_resp {
    long status;
    char *body;
    size_t len;
    char err[256];
    bool unsent; /* the failed transfer cannot have reached the replica */
};
bool proxy_advisor_call(struct proxy_advisor *a, const char *method, const char *path,
                        const char *body, size_t blen, long timeout_s,
                        struct proxy_advisor_resp *r);

/* With several --advisor URLs: may a call that got this be made again on
 * the next replica ('answered': an HTTP answer with 'status' came; else
 * the transfer failed, and 'unsent' says it cannot have reached the
 * replica)? Reads and the
 * idempotent writes (PUT, POST /loaded) may after any failed transfer and
 * after 502, 503 or 504 (a replica stopping, a load balancer without a
 * healthy one). Other writes (a proposal, denials) only when the first
 * replica cannot have acted on them: the connection was refused, the
 * name did not resolve or the connect timed out (a host that is down),
 * or it answered 503 (busy or stopping, before any work). Pure (tests/check_proxy_local.c). */
bool proxy_advisor_may_fail_over(const char *method, const char *path, bool answered, long status,
                                 bool unsent);

/* A job for the worker pool: 'run' on a worker, then 'done' on the loop. */
struct proxy_advisor_job {
    struct proxy_advisor_job *next;
    void (*run)(struct proxy_advisor *a, struct proxy_advisor_job *j);
    void (*done)(struct proxy_advisor *a, struct proxy_advisor_job *j); /* frees j */
};
/* Queue 'j' (not owned until accepted). False when the queue is full. */
bool proxy_advisor_submit(struct proxy_advisor *a, struct proxy_advisor_job *j);

/* ===========================================================================
 * policy.local (proxy_local.c)
 * ========================================================================= */

struct proxy_local;

struct proxy_local *proxy_local_new(struct proxy_server *srv, struct proxy_advisor *a);
/* Closes every policy.local client still being served. */
void proxy_local_free(struct proxy_local *l);

/* The local_serve hook (proxy_int.h): a forward request to
 * http://policy.local:80 with 'rest' (path and query, as received). The
 * client's bufferevent and socket move to 'l' (c->c and c->cfd become
 * empty) and true is returned: the caller retires 'c'. False when they
 * cannot be taken. */
bool proxy_local_serve(struct proxy_local *l, struct proxy_conn *c, const char *rest, size_t len);
/* The local_clients hook: policy.local clients being served from address
 * 'peer' (NULL: from any address). */
size_t proxy_local_clients(const struct proxy_local *l, const struct sockaddr_storage *peer);

/* Every DENIED decision line and its record 'e' (may be NULL: the line
 * only) from the proxy_log tap: kept in a ring for GET /v1/denials as an
 * object {line, host, port, binary, method, path, stage, policy, reason},
 * queries and fragments redacted (docs/proxy.md#policy-local). */
void proxy_local_denial(void *arg, const char *line, size_t len, const struct proxy_log_event *e);

/* ---------------------------------------------------------------------------
 * The denial stream to the advisor's mapper (proxy_denials.c)
 * ------------------------------------------------------------------------- */

struct proxy_denials;

/* Starts streaming this proxy's denials (loop thread); NULL on failure. */
struct proxy_denials *proxy_denials_new(struct proxy_server *srv, struct proxy_advisor *a);
/* After the advisor's jobs have completed (proxy_advisor_free). */
void proxy_denials_free(struct proxy_denials *d);

/* Pure helpers (tested by tests/check_proxy_local.c). */
/* Copy 'in' to 'out' (always NUL-terminated) with each query ('?' up to
 * whitespace or ']') and fragment ('#' likewise) replaced by "?[redacted]"
 * or "#[redacted]"; an already redacted one is kept. */
void proxy_local_redact(const char *in, size_t len, char *out, size_t outlen);
/* 'name'=N from a query string: default 'dflt', clamped to [lo, hi], an
 * unparsable value gives 'dflt'. */
unsigned proxy_local_query_uint(const char *query, const char *name, unsigned dflt, unsigned lo,
                                unsigned hi);

/* ===========================================================================
 * The agent skill (proxy_skill.c)
 * ========================================================================= */

/* The skill's markdown text (static). */
const char *proxy_skill_text(void);
/* Write the skill to 'path' (mode 0444, atomically; directories created).
 * Returns 0, or -1 with a message in 'err'. */
int proxy_skill_write(const char *path, char *err, size_t errlen);

#endif
