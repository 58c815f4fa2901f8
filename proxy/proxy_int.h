/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_int.h - server and connection state shared by proxy_server.c and
 * proxy_conn.c (proxy/ internal; other folders use proxy.h)
 *
 * One event loop (libevent) runs every connection. A connection is a client
 * socket plus at most one upstream; it pins one policy version and one
 * identity for its life. The server keeps every connection on a list so that
 * a reload can close tunnels the new policy no longer reaches and idle
 * keep-alive connections at their request boundary.
 */
#ifndef PROXY_INT_H
#define PROXY_INT_H

#include <event2/event.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "proxy/proxy.h"

struct bufferevent;
struct evconnlistener;
struct evdns_base;
struct evdns_getaddrinfo_request;
struct evhttp;

#define PROXY_MAX_ADDRS 16

/* ===========================================================================
 * Chunked bodies (proxy_chunk.c)
 * ========================================================================= */

#define PROXY_CHUNK_MAX_LINE 4096    /* one size line, extensions included */
#define PROXY_CHUNK_MAX_TRAILER 8192 /* the whole trailer section */
#define PROXY_CHUNK_MAX_DIGITS 15    /* chunk sizes below 2^60 */

enum proxy_chunk_status {
    PROXY_CHUNK_MORE, /* every byte consumed, the body goes on */
    PROXY_CHUNK_DONE, /* the body ended; '*used' stops right after it */
    PROXY_CHUNK_BAD,  /* framing error: 'why' says which; the stream is unusable */
};

/* Decoder state; plain data, initialised by proxy_chunk_init(). */
struct proxy_chunk {
    int st;
    uint64_t left;      /* size being read, then data bytes left in the chunk */
    unsigned ndigits;
    size_t line;        /* bytes of the current size line */
    size_t trailer;     /* bytes of the trailer section */
    const char *why;    /* static; "" unless BAD */
};

/* Receives canonical output bytes (borrowed for the call). */
typedef void (*proxy_chunk_emit)(void *arg, const char *p, size_t n);

void proxy_chunk_init(struct proxy_chunk *d);
/* Decode 'len' bytes of a chunked body strictly (RFC 9112 §7.1) and emit the
 * canonical re-chunked equivalent through 'emit': no extensions, no
 * trailers, lower-case hex sizes. '*used' is the number of input bytes that
 * belong to the body (all of them unless DONE). Pure. */
enum proxy_chunk_status proxy_chunk_feed(struct proxy_chunk *d, const char *buf, size_t len,
                                         size_t *used, proxy_chunk_emit emit, void *arg);

struct proxy_conn;

/* ===========================================================================
 * Outcomes (proxy_outcome.c): one row per refused or failed outcome
 * ========================================================================= */

enum proxy_outcome {
    PROXY_OUT_HEAD_TOOBIG,       /* request head over the limits */
    PROXY_OUT_HEAD_BAD,          /* request head failed validation */
    PROXY_OUT_HEAD_TIMEOUT,      /* no complete head within the header timeout */
    PROXY_OUT_BODY_BAD,          /* chunked body framing failed validation */
    PROXY_OUT_INTERNAL,          /* allocation failure */
    PROXY_OUT_CONN_LIMIT,        /* too many connections from one client address */
    PROXY_OUT_CONNECT_TARGET,    /* malformed CONNECT authority */
    PROXY_OUT_CONNECT_DENIED,    /* CONNECT denied at the policy layer */
    PROXY_OUT_FORWARD_URI,       /* malformed absolute-form target */
    PROXY_OUT_FORWARD_HTTPS,     /* https:// URI on the forward path */
    PROXY_OUT_FORWARD_SCHEME,    /* another scheme */
    PROXY_OUT_POLICY_LOCAL_PORT, /* policy.local off port 80 */
    PROXY_OUT_POLICY_LOCAL,      /* policy.local (advisor not connected) */
    PROXY_OUT_FORWARD_DENIED,    /* forward request denied at the policy layer */
    PROXY_OUT_FORWARD_TARGET,    /* non-canonical target on an inspected route */
    PROXY_OUT_FORWARD_L7_DENIED, /* forward request denied by L7 rules */
    PROXY_OUT_FORWARD_UNSUPPORTED, /* upgrade or uninspectable protocol on an inspected route */
    PROXY_OUT_SSRF,              /* no resolved address admitted */
    PROXY_OUT_DNS,               /* resolution failed */
    PROXY_OUT_UPSTREAM_FAILED,   /* connect failed or closed after an allowed decision */
    PROXY_OUT_TUNNEL_PROTOCOL,   /* inspected tunnel carries neither TLS nor HTTP/1 */
    PROXY_OUT_TUNNEL_HEAD_BAD,   /* malformed target or Host inside a tunnel */
    PROXY_OUT_TUNNEL_AUTHORITY,  /* request names another authority than the tunnel */
    PROXY_OUT_TUNNEL_TARGET,     /* non-canonical target inside a tunnel */
    PROXY_OUT_TUNNEL_SSRF,       /* granted by a unit that does not admit the address */
    PROXY_OUT_TUNNEL_L7_DENIED,  /* request denied by L7 rules */
    PROXY_OUT_TUNNEL_UNSUPPORTED, /* upgrade or uninspectable protocol inside a tunnel */
    PROXY_OUT_TUNNEL_UPSTREAM,   /* the tunnel's upstream failed (TLS verification, ...) */
    PROXY_OUT_RELOAD_CLOSED,     /* a reload changed or removed the tunnel's route */
};

enum proxy_reply_kind {
    PROXY_REPLY_NONE,      /* close without a reply */
    PROXY_REPLY_BARE,      /* status line, empty body */
    PROXY_REPLY_JSON,      /* {"detail","error"[,"reason"]} */
    PROXY_REPLY_L7,        /* the structured L7 denial */
    PROXY_REPLY_TEXT,      /* text/plain detail */
    PROXY_REPLY_AUTHORITY, /* the request_authority_mismatch body */
};

struct proxy_outcome_row {
    enum proxy_outcome outcome;
    const char *name;       /* the enumerator's name (tests) */
    unsigned status;        /* 0 for PROXY_REPLY_NONE */
    const char *error;      /* body error code; NULL for bare replies */
    enum proxy_reply_kind kind;
    const char *engine;     /* log engine tag */
    const char *stage;      /* denials.jsonl stage */
    bool log;               /* a decision line (false: a note after an ALLOWED line) */
};

/* The row of 'o' (static), NULL if the table lacks it (a bug the tests catch). */
const struct proxy_outcome_row *proxy_outcome_row(enum proxy_outcome o);
size_t proxy_outcome_count(void);
const struct proxy_outcome_row *proxy_outcome_at(size_t i);

struct proxy_server {
    struct event_base *base;
    struct evdns_base *dns;
    struct evconnlistener *listener;
    struct evhttp *admin;
    const struct proxy_config *cfg;
    struct proxy_decide_opts opts;
    struct proxy_policy *policy; /* current version (one reference) */
    uint64_t generation;
    struct proxy_idq *idq;    /* identity lookups (worker thread) */
    struct proxy_tls *tls;
    struct proxy_log *log;
    struct proxy_conn *conns; /* doubly linked list of live connections */
    size_t nconns;
    bool draining;
    struct event *ev_term;
    struct event *ev_int;
    struct event *ev_hup;
    struct event *ev_stat;    /* periodic policy file check */
    struct event *ev_flush;   /* log flush when the loop goes idle */
    struct event *ev_drain;   /* drain grace period */
    struct event *ev_reap;    /* frees connections closed during callbacks */
    struct proxy_conn *graveyard;
    struct stat policy_st;    /* last seen (dev, ino, size, mtime) */
    bool policy_st_valid;
    uint16_t port;            /* bound ports */
    uint16_t admin_port;
};

enum proxy_conn_mode {
    PROXY_MODE_FORWARD, /* plain proxy requests (absolute-form) */
    PROXY_MODE_RAW,     /* opaque CONNECT tunnel */
    PROXY_MODE_L7,      /* inspected CONNECT tunnel */
};

enum proxy_conn_state {
    PROXY_ST_HEAD,    /* waiting for a request head */
    PROXY_ST_RESOLVE, /* DNS in flight */
    PROXY_ST_CONNECT, /* upstream connect in flight */
    PROXY_ST_SNIFF,   /* inspected tunnel: peeking the first bytes */
    PROXY_ST_RELAY,   /* request body and response flowing */
    PROXY_ST_TUNNEL,  /* opaque bytes flowing */
    PROXY_ST_CLOSING, /* flushing a last response */
    PROXY_ST_LINGER,  /* response sent, write side shut: discarding input */
};

/* The request being served (head copied out of the input buffer). */
struct proxy_cur {
    char *head;               /* owned copy of the head bytes */
    size_t head_len;
    struct proxy_request *req; /* owned */
    char *method;             /* owned, NUL-terminated */
    char *target;             /* request-target as received (path?query), owned */
    size_t target_len;
    char *out_target;         /* canonical path + raw query, owned */
    size_t canon_len;         /* length of the canonical path inside out_target */
    bool has_query;
    bool is_head;
    bool keep_alive;          /* the client allows another request */
};

struct proxy_conn {
    struct proxy_server *srv;
    struct proxy_conn *prev, *next;
    int cfd;                  /* client socket; -1 once a bufferevent owns it */
    struct bufferevent *c;    /* client side (socket or TLS) */
    struct bufferevent *u;    /* upstream side (socket or TLS), NULL when none */
    struct sockaddr_storage peer;
    struct sockaddr_storage local;
    struct proxy_identity *id;
    struct proxy_policy *pol; /* pinned version */
    enum proxy_conn_mode mode;
    enum proxy_conn_state state;

    /* destination of the current upstream (or of the tunnel) */
    char host[256];           /* as received, lower-cased, brackets stripped */
    char nhost[256];          /* normalised (model_host_normalize) */
    bool host_is_ip;
    uint16_t port;
    bool u_tls;               /* upstream speaks TLS */
    bool c_tls;               /* client side TLS terminated here */
    struct model_ip u_ip;     /* the address the upstream socket is connected to */
    char u_host_key[256];     /* forward mode: normalised host the upstream serves */
    uint16_t u_port;
    bool dead;                /* closed; freed by the reaper */
    bool c_eof;               /* the client shut its write side */
    struct proxy_idq_job *idjob; /* identity lookup in flight */
    struct event *ev_hdr;     /* header timeout: a complete head within the limit */
    bool linger;              /* CLOSING ends with a lingering close */
    unsigned nreq;            /* requests served on this connection */
    char u_err[160];          /* upstream TLS failure, reported on the next request */
    enum model_route route;
    char policy_key[128];     /* rule that granted the connection (logs) */

    /* resolution and connect */
    struct evdns_getaddrinfo_request *dnsreq;
    struct event *ev_kick;    /* continue after DNS, or with pipelined bytes */
    struct event *ev_io;      /* connect completion or sniff readiness */
    struct model_ip addrs[PROXY_MAX_ADDRS];
    size_t naddrs;
    size_t next_addr;
    int ufd;                  /* connecting socket */
    int dns_err;
    bool dns_done;
    unsigned sniff_ms;

    /* the request being relayed */
    struct proxy_cur cur;
    uint64_t body_left;       /* Content-Length body bytes still to forward */
    struct proxy_chunk chunk; /* chunked body decoder */
    http_parser resp;
    bool req_done;
    bool resp_done;
    bool resp_eof_framed;     /* the response ended at upstream EOF */
    bool resp_started;        /* response bytes reached the client */
    unsigned resp_status;
    struct evbuffer *early;   /* client bytes that arrived with the CONNECT head */
    struct proxy_splice *spl; /* opaque tunnel relayed with splice(2) */
    bool splice_pending;      /* start splicing once the 200 is flushed */
};

/* ===========================================================================
 * Identity off the loop (proxy_idq.c)
 * ========================================================================= */

struct proxy_idq;
struct proxy_idq_job;

/* Start the worker; it owns 'cache' (steals, also on failure). New; NULL on
 * failure. */
struct proxy_idq *proxy_idq_new(struct event_base *base, struct proxy_ident_cache *cache);
/* Stop and join the worker; pending jobs are dropped. NULL is a no-op. */
void proxy_idq_free(struct proxy_idq *q);
/* Identify the socket (peer, local) of 'c' (borrowed): proxy_conn_identified
 * runs later on the loop, unless proxy_idq_cancel() ran first. The job is
 * owned by the queue. NULL on allocation failure. */
struct proxy_idq_job *proxy_idq_submit(struct proxy_idq *q, struct proxy_conn *c,
                                       const struct sockaddr_storage *peer,
                                       const struct sockaddr_storage *local);
/* The connection is going away: its result will be dropped. */
void proxy_idq_cancel(struct proxy_idq_job *j);

/* proxy_conn.c */
/* The identity of 'c' is known ('id' stolen; NULL = no memory: refused). */
void proxy_conn_identified(struct proxy_conn *c, struct proxy_identity *id);
void proxy_conn_accept(struct proxy_server *srv, int fd, const struct sockaddr *sa, int salen);
void proxy_conn_free(struct proxy_conn *c);
/* After a reload: close what the new policy no longer allows. */
void proxy_conn_policy_changed(struct proxy_conn *c);
/* On SIGTERM: close idle connections, let busy ones finish. */
void proxy_conn_drain(struct proxy_conn *c);
/* Arm the log flush for the end of this loop iteration. */
void proxy_server_log_touch(struct proxy_server *srv);
/* The connection list became empty while draining. */
void proxy_server_conn_gone(struct proxy_server *srv);

#endif
