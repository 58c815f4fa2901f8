/* SPDX-License-Identifier: Apache-2.0 */
/* proxy.h - proviso-proxy: the enforcing egress proxy (public header of proxy/)
 *
 * proviso-proxy applies a compiled policy to real traffic: forward-proxied
 * http:// requests and CONNECT tunnels, opaque or inspected (TLS terminated
 * with a local CA, every HTTP/1.1 request decided). Every decision is a call
 * to model_decide(); this folder never re-implements matching. The modules:
 *
 *   proxy_http.c    strict request-head parser and validator (pure, fuzzed)
 *   proxy_policy.c  refcounted policy versions, the decision wrappers
 *                   (connection, request, destination), deny bodies
 *   proxy_ident.c   requesting-binary identity from /proc, SHA-256 TOFU pins
 *   proxy_tls.c     local CA, leaf certificates, upstream verification
 *   proxy_splice.c  zero-copy relay of opaque tunnels (splice(2))
 *   proxy_log.c     shorthand decision log and JSON-lines denial stream
 *   proxy_conn.c    the per-connection state machine (libevent)
 *   proxy_server.c  listeners, admin port, DNS, signals, reload
 *   proxy_main.c    command line
 *
 * Invariants: the proxy connects only to addresses that model_decide admitted
 * for the request being served; a request is evaluated against exactly one
 * policy version (the one its connection pinned); any error denies.
 */
#ifndef PROXY_H
#define PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/pv.h"
#include "model/model.h"

/* ===========================================================================
 * Request heads (proxy_http.c)
 * ========================================================================= */

#define PROXY_MAX_HEAD 8192    /* request line + headers + final CRLF CRLF */
#define PROXY_MAX_HEADERS 128  /* more fields -> 431 */

/* A byte range inside the head buffer the request was parsed from. */
struct proxy_span {
    uint32_t off;
    uint32_t len;
};

struct proxy_header {
    struct proxy_span name;
    struct proxy_span value; /* optional whitespace trimmed */
    bool hop;                /* hop-by-hop or Connection-nominated: never forwarded */
};

enum proxy_framing {
    PROXY_BODY_NONE,    /* no Content-Length, no Transfer-Encoding */
    PROXY_BODY_LENGTH,  /* Content-Length: N */
    PROXY_BODY_CHUNKED, /* Transfer-Encoding: chunked */
};

struct proxy_request {
    struct proxy_span method;
    struct proxy_span target;
    uint8_t version_minor;   /* HTTP/1.0 or HTTP/1.1 */
    struct proxy_header hdr[PROXY_MAX_HEADERS];
    size_t nhdr;
    int host;                /* index of the Host field, -1 when absent */
    enum proxy_framing framing;
    uint64_t content_length; /* PROXY_BODY_LENGTH */
    bool conn_close;         /* Connection: close */
    bool conn_keep_alive;    /* Connection: keep-alive */
    bool upgrade;            /* an Upgrade field is present */
};

enum proxy_head_status {
    PROXY_HEAD_OK,
    PROXY_HEAD_INCOMPLETE, /* no CRLF CRLF yet and fewer than PROXY_MAX_HEAD bytes */
    PROXY_HEAD_TOOBIG,     /* 431 */
    PROXY_HEAD_BAD,        /* 400 */
};

/* Find the end of a request head in 'buf' (the bytes received so far).
 * On PROXY_HEAD_OK '*head_len' is the length including the final CRLF CRLF.
 * Leading empty lines are not skipped (a request starts with its method). */
enum proxy_head_status proxy_http_head_end(const char *buf, size_t len, size_t *head_len);

/* Parse and validate a complete head of 'len' bytes (ending in CRLF CRLF),
 * as strictly as the reference (docs/proxy.md "Request validation"): UTF-8,
 * request line shape, RFC token method, target bytes, header syntax, no
 * obs-fold, bare CR/LF, Connection tokens, Content-Length and
 * Transfer-Encoding framing, at most one Host. '*why' (static) explains a
 * failure. No allocation; 'req' refers to 'buf' by offsets. */
enum proxy_head_status proxy_http_parse(const char *buf, size_t len, struct proxy_request *req,
                                        const char **why);

/* Invariants of a successfully parsed head of 'len' bytes: every span lies
 * inside the head, the method is a token, at most PROXY_MAX_HEADERS fields,
 * the Host index is valid, framing is consistent. For tests and fuzzing. */
bool proxy_request_validate(const struct proxy_request *req, const char *buf, size_t len);

/* Is 'name' (of 'len' bytes) the header name 'lit' (case-insensitive)? */
bool proxy_http_name_is(const char *name, size_t len, const char *lit);

/* An absolute-form request-target "scheme://authority[/path][?query]". */
struct proxy_uri {
    struct proxy_span scheme;
    struct proxy_span host;  /* without [brackets] */
    bool host_bracketed;
    uint16_t port;           /* explicit, else 80 for http and 443 for https */
    bool port_given;
    struct proxy_span rest;  /* path and query ("" when absent) */
};

/* Parse an absolute-form target (offsets relative to 't'). Rejects a missing
 * scheme, '#', userinfo, an empty host, a bad port. */
pv_result proxy_http_parse_uri(const char *t, size_t len, struct proxy_uri *u) PV_WUR;

/* Parse an authority "host:port" or "[v6]:port" (CONNECT target, or a Host
 * field when 'port_optional'; then '*port' is 0 when absent). */
pv_result proxy_http_parse_authority(const char *t, size_t len, bool port_optional,
                                     struct proxy_span *host, bool *bracketed,
                                     uint16_t *port) PV_WUR;

/* Classify the first bytes of a tunnel (docs/proxy.md "Tunnels"). */
enum proxy_sniff {
    PROXY_SNIFF_MORE, /* a strict prefix of a known form: wait for more bytes */
    PROXY_SNIFF_TLS,  /* a TLS handshake record */
    PROXY_SNIFF_HTTP, /* an HTTP/1.x request line */
    PROXY_SNIFF_H2C,  /* the HTTP/2 prior-knowledge preface */
    PROXY_SNIFF_OTHER,
};
enum proxy_sniff proxy_http_sniff(const unsigned char *buf, size_t len);

/* ===========================================================================
 * Policy versions and decisions (proxy_policy.c)
 * ========================================================================= */

/* One loaded policy. Refcounted: the server holds one reference to the
 * current version, every connection holds one to the version it pinned. */
struct proxy_policy;

/* Load and compile 'path'. On failure returns NULL and writes the first
 * diagnostics (FILE:LINE:COL: message) into 'err'. New reference. */
struct proxy_policy *proxy_policy_load(const char *path, uint64_t generation, char *err,
                                       size_t errlen);
/* A policy that denies everything with 'reason' (fail-closed quarantine after
 * a failed reload). New reference. */
struct proxy_policy *proxy_policy_quarantine(uint64_t generation, const char *reason);
struct proxy_policy *proxy_policy_ref(struct proxy_policy *p);
void proxy_policy_unref(struct proxy_policy *p);
uint64_t proxy_policy_generation(const struct proxy_policy *p);
const struct model_policy *proxy_policy_model(const struct proxy_policy *p); /* borrowed */

/* The identity of a requesting binary (exe first, then ancestors). */
struct proxy_identity {
    unsigned refs;
    pid_t pid;
    size_t n;                          /* entries in path[] */
    char *path[MODEL_MAX_IDENTITY];    /* owned */
    bool known;                        /* the socket owner was found */
    char deny[256];                    /* non-empty: identity check failed, deny with this */
};

/* What the proxy needs from one decision. */
struct proxy_verdict {
    bool allow;
    bool grant;              /* policy layer only */
    bool audit;              /* allowed only through an audit-mode endpoint */
    bool loopback_exception; /* allowed by --test-allow-loopback */
    enum model_reason reason;
    enum model_route route;
    const char *policy;      /* rule key that granted (or last matched), "-" if none; borrowed */
    const char *binary;      /* identity entry that matched, or the exe; borrowed */
    char detail[256];        /* reason text, reference wording */
};

struct proxy_decide_opts {
    bool test_allow_loopback;
};

/* Connection-level decision for (identity, host, port), destination not yet
 * known: does the binary reach (h, p) at the policy layer, and by which route.
 * Pure. */
void proxy_decide_connect(const struct proxy_policy *p, const struct proxy_identity *id,
                          const char *host, size_t hlen, uint16_t port, struct proxy_verdict *v);
/* Request-level decision on an inspected route (method, target). Pure. */
void proxy_decide_request(const struct proxy_policy *p, const struct proxy_identity *id,
                          const char *host, size_t hlen, uint16_t port, const char *method,
                          const char *target, size_t tlen, struct proxy_verdict *v);
/* Destination decision: is 'ip' admitted for the request? 'method' NULL for a
 * connection. Applies the --test-allow-loopback exception (only loopback
 * addresses an endpoint names literally). Pure. */
void proxy_decide_dest(const struct proxy_policy *p, const struct proxy_identity *id,
                       const char *host, size_t hlen, uint16_t port, const char *method,
                       const char *target, size_t tlen, const struct model_ip *ip,
                       const struct proxy_decide_opts *o, struct proxy_verdict *v);
/* The reference's short SSRF kind for a destination reason ("internal
 * address", "allowed_ips check failed", ...). Static string. */
const char *proxy_ssrf_kind(enum model_reason r);

/* ===========================================================================
 * Response bodies (proxy_policy.c)
 * ========================================================================= */

/* A complete HTTP response (head and body): new, caller frees. */
char *proxy_reply_json(unsigned status, const char *error, const char *detail,
                       const char *reason, size_t *len);
/* The structured L7 deny (docs/proxy.md "Deny bodies"). */
struct proxy_l7_deny {
    const char *error;   /* "policy_denied" or "unsupported_l7_protocol" */
    const char *policy;  /* "-" when none */
    const char *method;
    const char *path;    /* canonical, no query */
    const char *detail;
    const char *host;
    uint16_t port;
    const char *binary;  /* NULL or "" when unknown */
};
char *proxy_reply_l7(const struct proxy_l7_deny *d, size_t *len);
/* Bare status line with an empty body ("HTTP/1.1 400 Bad Request\r\n\r\n"). */
const char *proxy_reply_bare(unsigned status);

/* ===========================================================================
 * Binary identity (proxy_ident.c)
 * ========================================================================= */

struct proxy_ident_cache;
struct sockaddr;

struct proxy_ident_cache *proxy_ident_cache_new(void);
void proxy_ident_cache_free(struct proxy_ident_cache *c);
/* Identify the process owning the client end of the TCP connection from
 * 'peer' to 'local' (the proxy's address): socket inode from /proc/net/tcp{,6},
 * owning pid from /proc/PID/fd, exe and ancestors, SHA-256 TOFU pins.
 * Always returns an identity (new reference): unknown owners give an empty
 * one, integrity failures set 'deny'. NULL only on allocation failure. */
struct proxy_identity *proxy_ident_lookup(struct proxy_ident_cache *c,
                                          const struct sockaddr *peer,
                                          const struct sockaddr *local);
/* One identity request: the client's and the proxy's address of a socket. */
struct proxy_ident_query {
    struct sockaddr_storage peer;
    struct sockaddr_storage local;
    struct proxy_identity *id; /* out: new reference; NULL on allocation failure */
};
/* proxy_ident_lookup() for 'n' sockets at once: one /proc scan finds every
 * holder of every socket (never a subset: a list that cannot be completed
 * denies as ambiguous), so a burst of connections costs one scan. */
void proxy_ident_lookup_batch(struct proxy_ident_cache *c, struct proxy_ident_query *q, size_t n);
struct proxy_identity *proxy_identity_ref(struct proxy_identity *id);
void proxy_identity_unref(struct proxy_identity *id);

/* ===========================================================================
 * TLS (proxy_tls.c)
 * ========================================================================= */

struct proxy_tls;
struct ssl_st;

/* Load the CA from 'data_dir'/ca.crt and ca.key, creating it on first start;
 * build the upstream verification context (system store, or 'upstream_ca'
 * when not NULL). New; NULL and a message in 'err' on failure. */
struct proxy_tls *proxy_tls_new(const char *data_dir, const char *upstream_ca, char *err,
                                size_t errlen);
void proxy_tls_free(struct proxy_tls *t);
/* A server-side SSL for 'host' (leaf certificate cached per host). New. */
struct ssl_st *proxy_tls_server(struct proxy_tls *t, const char *host);
/* A client-side SSL to the upstream 'host' (SNI unless an IP; verification
 * of the name or address against the trust store). New. */
struct ssl_st *proxy_tls_client(struct proxy_tls *t, const char *host, bool is_ip);

/* ===========================================================================
 * Opaque tunnels (proxy_splice.c)
 * ========================================================================= */

struct proxy_splice;
struct event_base;

/* Relay bytes both ways between connected non-blocking sockets 'a' and 'b'
 * with splice(2) (no copy through user space), propagating half-closes.
 * 'done' runs once, when both directions have ended ('error' false) or on
 * the first error; the relay does nothing after calling it. The sockets stay
 * owned by the caller. New; NULL on failure. */
struct proxy_splice *proxy_splice_new(struct event_base *base, int a, int b,
                                      void (*done)(void *arg, bool error), void *arg);
void proxy_splice_free(struct proxy_splice *s);

/* ===========================================================================
 * Logs (proxy_log.c)
 * ========================================================================= */

struct proxy_log;

/* 'path' NULL = stderr. 'denials_path' NULL = no JSON-lines stream. New. */
struct proxy_log *proxy_log_new(const char *path, const char *denials_path);
void proxy_log_free(struct proxy_log *l);
void proxy_log_flush(struct proxy_log *l);
/* True when lines are buffered (the caller schedules a flush). */
bool proxy_log_pending(const struct proxy_log *l);

enum proxy_log_action { PROXY_LOG_ALLOWED, PROXY_LOG_DENIED, PROXY_LOG_AUDIT };

/* One decision. 'method' NULL = a connection (NET:OPEN line), else an HTTP
 * line. 'engine' is the reference engine tag (opa, ssrf, l7, http-parser,
 * tls). 'path' is the canonical path with the query redacted. Denials also go
 * to the JSON-lines stream with 'stage'. */
struct proxy_log_event {
    enum proxy_log_action action;
    const char *engine;
    const struct proxy_identity *id;
    const char *binary;  /* matched entry, else the exe */
    const char *host;
    uint16_t port;
    const char *method;  /* NULL for NET:OPEN */
    const char *path;    /* canonical path, no query */
    bool has_query;      /* the request had a query (logged as ?[redacted]) */
    const char *policy;  /* "-" when none */
    const char *reason;  /* detail for DENIED/AUDIT */
    const char *stage;   /* connect, ssrf, forward, forward-l7-deny, l7, ... */
    bool tunnel;         /* CONNECT_L7 / in-tunnel */
};
void proxy_log_event(struct proxy_log *l, const struct proxy_log_event *e);
/* A free-form operational line ("{time} PROXY {message}"). */
void proxy_log_note(struct proxy_log *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ===========================================================================
 * The server (proxy_server.c, proxy_conn.c)
 * ========================================================================= */

struct proxy_config {
    const char *policy_path;
    const char *bind_addr;     /* default 127.0.0.1 */
    uint16_t port;             /* default 3128; 0 = any free port */
    uint16_t admin_port;       /* default 0 = port + 1 when port != 0 */
    bool admin_given;
    const char *data_dir;      /* default ./proviso-proxy-data */
    const char *log_path;      /* NULL = stderr */
    const char *upstream_ca;
    const char *hosts_file;    /* extra hosts entries (tests) */
    const char *port_file;     /* write "PORT ADMIN_PORT\n" here when ready */
    bool test_allow_loopback;
    unsigned connect_timeout_ms;
    unsigned idle_timeout_ms;
    unsigned header_timeout_ms; /* a complete request head within this (0 = off) */
    unsigned max_client_conns;  /* per client address; above it the oldest idle one goes */
    unsigned reload_check_ms;  /* policy file stat period */
};

/* Run the proxy until SIGTERM/SIGINT; returns the process exit status. */
int proxy_server_run(const struct proxy_config *cfg);

#endif
