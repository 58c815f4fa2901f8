/* SPDX-License-Identifier: Apache-2.0 */
/* hclient.h - the one HTTP client of proviso (libcurl)
 *
 * Every program that talks HTTP to another proviso service (the CLI to
 * proviso-advisor, `proviso run` to its servers, the advisor to
 * proviso-prover, the proxy to the advisor) describes a request in a
 * struct hclient_req and gets a struct hclient_res back. The client owns
 * the pieces they shared and each wrote on its own: the bearer header
 * (wiped after use), the answer's size cap, the connect and total
 * timeouts, the refused redirects and the error text.
 *
 * A struct hclient keeps one libcurl handle so that consecutive requests
 * reuse the connection. It is not thread-safe: one per thread. With
 * req.stop set, the transfer runs through a multi handle and waits in
 * curl_multi_poll(); hclient_wakeup() (any thread) ends that wait at once,
 * so a long-poll never delays a stop (docs/architecture.md).
 */
#ifndef PV_HCLIENT_H
#define PV_HCLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct hclient;

struct hclient_req {
    const char *url;          /* full URL */
    const char *method;       /* NULL: GET, or POST with a body */
    const char *bearer;       /* token for "Authorization: Bearer"; NULL none */
    const char *body;         /* NULL: no body */
    size_t body_len;          /* bytes of body */
    const char *content_type; /* sent with a body; NULL: none */
    const char *accept;       /* Accept header; NULL: none */
    const char *protocols;    /* CURLOPT_PROTOCOLS_STR; NULL: libcurl's default */
    const char *user_agent;   /* NULL: none */
    size_t max_answer;        /* answer cap in bytes; 0: the answer is discarded */
    long connect_timeout_ms;  /* 0: libcurl's default */
    long timeout_ms;          /* whole transfer; 0: none */
    bool no_proxy;            /* ignore the *_proxy environment */
    bool no_expect;           /* no "Expect: 100-continue" on a POST */
    bool fresh;               /* a new connection: libcurl sends a request again
                               * unasked when a reused one dies before the
                               * answer - a write must not be sent twice */
    const atomic_bool *stop;  /* long-poll: ends the transfer when set */
};

struct hclient_res {
    long status;     /* HTTP status; 0 when no answer came */
    char *body;      /* the answer (NUL-terminated; NULL when discarded) */
    size_t len;      /* its length */
    bool too_large;  /* the answer passed max_answer */
    char error[256]; /* why the transfer failed (empty on success) */
    /* A failed transfer that cannot have reached the server: refused, the
     * name did not resolve, or the connect timed out before a byte of the
     * request went out. A caller may send such a write elsewhere. */
    bool unsent;
    /* The transfer failed because a time limit ran out (connect or total),
     * as libcurl says, not as the caller's clock says. */
    bool timed_out;
};

/* A client with its own connection; NULL when libcurl cannot start. */
struct hclient *hclient_new(void);
void hclient_free(struct hclient *c);

/* Send the request; true when an answer (any status) arrived, false with
 * res->error set otherwise. res->body is the caller's to free
 * (hclient_res_clear). After a failure the connection is dropped. */
bool hclient_perform(struct hclient *c, const struct hclient_req *req, struct hclient_res *res);
void hclient_res_clear(struct hclient_res *res);

/* End the wait of a transfer with req.stop (safe from any thread). */
void hclient_wakeup(struct hclient *c);

#endif
