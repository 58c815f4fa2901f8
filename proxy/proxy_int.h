/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_int.h - the modules of proxy/ and the server and connection state
 * they share (proxy/ internal; other folders use proxy.h)
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
#include <jansson.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/pv.h"
#include "model/model.h"
#include "proxy/proxy.h"

struct model_gql_op;

struct bufferevent;
struct evbuffer;
struct evconnlistener;
struct evdns_base;
struct evdns_getaddrinfo_request;
struct evhttp;
struct proxy_ws_conn;

/* ===========================================================================
 * Request heads (proxy_http.c)
 * ========================================================================= */

#define PROXY_MAX_HEAD 8192   /* request line + headers + final CRLF CRLF */
#define PROXY_MAX_HEADERS 128 /* more fields -> 431 */

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
    uint8_t version_minor; /* HTTP/1.0 or HTTP/1.1 */
    struct proxy_header hdr[PROXY_MAX_HEADERS];
    size_t nhdr;
    int host; /* index of the Host field, -1 when absent */
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

#define PROXY_MAX_RESP_HEAD 65536 /* one response head, status line to CRLF CRLF */

/* What the proxy needs from a response head. */
struct proxy_response {
    unsigned status; /* 100-599 */
    enum proxy_framing framing;
    uint64_t content_length; /* PROXY_BODY_LENGTH */
    bool event_stream;       /* Content-Type text/event-stream (SSE) */
};

/* Validate the response head at the start of 'buf' (the bytes received so
 * far) as strictly as request heads: status line "HTTP/1.x NNN[ reason]",
 * CRLF line ends only (no bare CR or LF), no obs-fold, token field names,
 * no control bytes in values, Transfer-Encoding exactly "chunked" and not
 * with Content-Length, equal Content-Length values. OK sets '*head_len'
 * (CRLF CRLF included); INCOMPLETE below PROXY_MAX_RESP_HEAD bytes without
 * the end; TOOBIG above; BAD with '*why' (static). Pure. */
enum proxy_head_status proxy_http_response_head(const char *buf, size_t len, size_t *head_len,
                                                struct proxy_response *r, const char **why);

/* Invariants of a successfully parsed head of 'len' bytes: every span lies
 * inside the head, the method is a token, at most PROXY_MAX_HEADERS fields,
 * the Host index is valid, framing is consistent. For tests and fuzzing. */
bool proxy_request_validate(const struct proxy_request *req, const char *buf, size_t len);

/* Is 'name' (of 'len' bytes) the header name 'lit' (case-insensitive)? */
bool proxy_http_name_is(const char *name, size_t len, const char *lit);

/* An absolute-form request-target "scheme://authority[/path][?query]". */
struct proxy_uri {
    struct proxy_span scheme;
    struct proxy_span host; /* without [brackets] */
    bool host_bracketed;
    uint16_t port; /* explicit, else 80 for http and 443 for https */
    bool port_given;
    struct proxy_span rest; /* path and query ("" when absent) */
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
/* The quarantine reason (borrowed) of a fail-closed version, NULL otherwise. */
const char *proxy_policy_quarantine_reason(const struct proxy_policy *p);
const struct model_policy *proxy_policy_model(const struct proxy_policy *p); /* borrowed */

/* The identity of a requesting binary (exe first, then ancestors). */
struct proxy_identity {
    unsigned refs;
    pid_t pid;
    size_t n;                       /* entries in path[] */
    char *path[MODEL_MAX_IDENTITY]; /* owned */
    bool known;                     /* the socket owner was found */
    char deny[256];                 /* non-empty: identity check failed, deny with this */
};

/* What the proxy needs from one decision. */
struct proxy_verdict {
    bool allow;
    bool grant;              /* policy layer only */
    bool audit;              /* allowed only through an audit-mode endpoint */
    bool loopback_exception; /* allowed by --test-allow-loopback */
    enum model_reason reason;
    enum model_route route;
    bool body_cred_rewrite; /* the endpoint's request_body_credential_rewrite */
    bool ws_cred_rewrite;   /* the endpoint's websocket_credential_rewrite */
    const char *policy;     /* rule key that granted (or last matched), "-" if none; borrowed */
    const char *binary;     /* identity entry that matched, or the exe; borrowed */
    /* the granting (or last matching) endpoint of the pinned version, NULL
     * when none; borrowed (WebSocket sessions read whether it has GraphQL
     * rules) */
    const struct model_endpoint *endpoint;
    size_t gql_max_body; /* the matched endpoint's graphql_max_body_bytes (or default) */
    bool gql_endpoint;   /* the matched endpoint is protocol: graphql */
    /* the GraphQL operation the decision was about: the refused one of a
     * request (the first refusal of a batch), else the first one audit mode
     * let through; NULL when none. Borrowed from the decision's options
     * (proxy_decide_opts.gql / gql_ops): valid while those live. */
    const struct model_gql_op *gql_op;
    /* the matched endpoint is json-rpc or mcp (rpc_mcp: mcp), with its body
     * bound and strict_tool_names (docs/semantics.md#rpc-read) */
    bool rpc_endpoint;
    bool rpc_mcp;
    bool rpc_strict;
    size_t rpc_max_body;
    /* the call the decision was about (the first refused one of a request,
     * else the first one audit mode let through); NULL when none. Borrowed
     * from proxy_decide_opts.rpc_calls. */
    const struct model_rpc_call *rpc_call;
    char detail[256]; /* reason text, reference wording */
};

/* One call's own decision (docs/proxy.md#rpc): what its log line and its
 * JSON-RPC error say. */
struct proxy_rpc_result {
    bool allow;
    bool audit;
    enum model_reason reason;
    const char *policy; /* borrowed from the pinned policy */
    char detail[256];
};

/* Decision options; NULL means none. 'test_allow_loopback' is the
 * evaluator's test switch (model_request.test_loopback). */
struct proxy_decide_opts {
    bool test_allow_loopback;
    bool prefer_opaque; /* a protocol upgrade: model_request.prefer_opaque */
    /* the GraphQL operation the request carries (model_request.gql), NULL =
     * none; borrowed */
    const struct model_gql_op *gql;
    /* the GraphQL operations of an HTTP request (proxy_bodyhold.c), NULL:
     * none; each is decided, the first refusal wins; borrowed */
    const struct model_gql_ops *gql_ops;
    /* the JSON-RPC calls of an HTTP request (proxy_bodyhold.c reads them),
     * NULL: none; each is decided, the first refusal is the request's, and
     * each call's own decision goes to rpc_res[i] (NULL: not kept) */
    const struct model_rpc_calls *rpc_calls;
    struct proxy_rpc_result *rpc_res;
};

/* Connection-level decision for (identity, host, port), destination not yet
 * known (an IP host is its own destination): does the binary reach (h, p) at
 * the policy layer, and by which route. Pure. */
void proxy_decide_connect(const struct proxy_policy *p, const struct proxy_identity *id,
                          const char *host, size_t hlen, uint16_t port,
                          const struct proxy_decide_opts *o, struct proxy_verdict *v);
/* Request-level decision (method, target), destination not yet known. Pure. */
void proxy_decide_request(const struct proxy_policy *p, const struct proxy_identity *id,
                          const char *host, size_t hlen, uint16_t port, const char *method,
                          const char *target, size_t tlen, const struct proxy_decide_opts *o,
                          struct proxy_verdict *v);
/* Destination decision: is 'ip' admitted for the request? 'method' NULL for a
 * connection. Pure. */
void proxy_decide_dest(const struct proxy_policy *p, const struct proxy_identity *id,
                       const char *host, size_t hlen, uint16_t port, const char *method,
                       const char *target, size_t tlen, const struct model_ip *ip,
                       const struct proxy_decide_opts *o, struct proxy_verdict *v);
/* The reference's short SSRF kind for a destination reason ("internal
 * address", "allowed_ips check failed", ...). Static string. */
const char *proxy_ssrf_kind(enum model_reason r);

/* ===========================================================================
 * Replies the proxy writes itself (proxy_reply.c)
 * ========================================================================= */

/* The reason phrase of 'status' ("Error" for one the table lacks; static). */
const char *proxy_reply_status_text(unsigned status);

/* What a refused request lacked, for an agent that may ask for it (the
 * body's "rule_missing", docs/proxy.md "Deny bodies"). All borrowed. */
struct proxy_missing {
    const char *type; /* "endpoint" (no rule reaches host:port for the binary) or
                         * "destination" (a rule does; the resolved address is not admitted) */
    const char *host; /* normalised request host */
    uint16_t port;
    const char *binary; /* NULL or "" when unknown */
    const char *skill;  /* advisor mode with proposals on: the skill's path, else NULL */
};
/* A complete HTTP response (head and body): new, caller frees. The body is
 * {"detail","error"[,"reason"]}; with 'miss' and miss->skill (proposals on)
 * it also carries "rule_missing" {type, layer "l4", host, port, binary},
 * "next_steps" and "agent_guidance" (proxy_reply_advice). 'miss' may be NULL. */
char *proxy_reply_json(unsigned status, const char *error, const char *detail, const char *reason,
                       const struct proxy_missing *miss, size_t *len);
/* A JSON string of 's' for a reply body ("" for NULL, "?" when 's' is not
 * UTF-8). New reference. */
json_t *proxy_reply_jstr(const char *s);
/* The structured L7 deny (docs/proxy.md "Deny bodies"). */
struct proxy_l7_deny {
    const char *error;  /* "policy_denied" or "unsupported_l7_protocol" */
    const char *policy; /* "-" when none */
    const char *method;
    const char *path; /* canonical, no query */
    const char *detail;
    const char *host;
    uint16_t port;
    const char *binary; /* NULL or "" when unknown */
    const char *skill;  /* advisor mode with proposals on: the skill's path, else NULL */
    /* a GraphQL endpoint's denial: the operation refused (NULL when the
     * request carried none it could read) and whether the endpoint is
     * protocol: graphql (docs/proxy.md#graphql-deny) */
    const struct model_gql_op *gql;
    bool gql_endpoint;
};
char *proxy_reply_l7(const struct proxy_l7_deny *d, size_t *len);
/* Bare status line with an empty body ("HTTP/1.1 400 Bad Request\r\n\r\n"). */
const char *proxy_reply_bare(unsigned status);
/* The builders below write a complete reply into 'buf' ('len' bytes) and
 * return its length, 0 when it does not fit (nothing to send). */
/* text/plain: 'detail' and a newline. */
size_t proxy_reply_text(unsigned status, const char *detail, char *buf, size_t len);
/* {"error","message"}, the reference's credential bodies ('error' and
 * 'message' are our constants: not escaped). */
size_t proxy_reply_message(unsigned status, const char *error, const char *message, char *buf,
                           size_t len);
/* 403 request_authority_mismatch (a request in a tunnel names another
 * authority). */
size_t proxy_reply_authority(char *buf, size_t len);
/* The head of a JSON answer whose body is 'body_len' bytes (policy.local's
 * answers, whose status and body are the advisor's). */
size_t proxy_reply_json_head(unsigned status, size_t body_len, char *buf, size_t len);
/* Add "next_steps" (always) and "agent_guidance" (only with a skill path:
 * advisor mode with proposals on) to a deny body 'o' (borrowed). */
void proxy_reply_advice(json_t *o, const char *skill_path);

/* ===========================================================================
 * Binary identity (proxy_ident.c)
 * ========================================================================= */

struct proxy_ident_cache;
struct sockaddr;

/* A new cache finds a socket's holders by reading /proc (every process's fd
 * table) until proxy_ident_use() switches it to the BPF task-file iterator
 * (proxy_taskfiles.c). Both find every holder. */
struct proxy_ident_cache *proxy_ident_cache_new(void);
void proxy_ident_cache_free(struct proxy_ident_cache *c);
/* Choose how holders are found. False only for PROXY_IDENT_BPF when the
 * iterator cannot be used; 'why' then (and for AUTO falling back) says why,
 * else it is empty. */
bool proxy_ident_use(struct proxy_ident_cache *c, enum proxy_ident_scan how, char *why, size_t len);
/* "bpf" or "proc": the way holders are found now. */
const char *proxy_ident_scan_name(const struct proxy_ident_cache *c);
/* Identify the process owning the client end of the TCP connection from
 * 'peer' to 'local' (the proxy's address): socket inode from /proc/net/tcp{,6},
 * owning pid from /proc/PID/fd, exe and ancestors, SHA-256 TOFU pins.
 * Always returns an identity (new reference): unknown owners give an empty
 * one, integrity failures set 'deny'. NULL only on allocation failure. */
struct proxy_identity *proxy_ident_lookup(struct proxy_ident_cache *c, const struct sockaddr *peer,
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
/* The start-up self-check: does the process hold what identifying other
 * processes' binaries needs (CAP_SYS_PTRACE in its effective set; root has
 * it unless dropped)? False with the reason in 'why'. */
bool proxy_ident_privileged(char *why, size_t len);
/* Read identities from the procfs at 'root' instead of /proc (a sandbox's
 * own, proxy_sandbox.c): the scan and every /proc/PID read use it, the
 * proxy's own pid is not skipped (it is not in that namespace), and the
 * socket tables fall back to ROOT/1/net. Before any lookup. */
bool proxy_ident_set_proc(const char *root);
/* The procfs identities are read from ("/proc" unless set). */
const char *proxy_ident_proc(void);
bool proxy_ident_proc_foreign(void);

/* --sandbox-init (proxy_sandbox.c): open the sandbox's network namespace
 * and point identity at its /proc; enter/leave it around the calls that
 * make its sockets (the listener, the sock_diag socket). */
bool proxy_sandbox_open(const struct proxy_config *cfg, char *err, size_t errlen);
bool proxy_sandbox_enter(void);
void proxy_sandbox_leave(void);
/* Executables pinned (worker thread only). */
size_t proxy_ident_pins(const struct proxy_ident_cache *c);
/* Tests: is 'pid' skipped as a live kernel thread? */
bool proxy_ident_skips(const struct proxy_ident_cache *c, pid_t pid);
/* Tests: the last pid the open lap read (0: no lap open, or none read yet). */
pid_t proxy_ident_roll_cursor(const struct proxy_ident_cache *c);
/* Tests only: skip 'pid' as if it were a kernel thread seen alive, so that a
 * test can check that its exit drops it before the next scan. */
void proxy_ident_test_kthread(struct proxy_ident_cache *c, pid_t pid);
/* A socket of proxy_ident_roll_add() is resolved: 'id' as for
 * proxy_ident_lookup() (new reference, NULL on allocation failure). */
typedef void (*proxy_ident_done)(void *tag, struct proxy_identity *id, void *arg);
/* Resolve the socket of 'q' with the rolling scan (proxy_ident.c): 'done'
 * runs with 'tag' from a later proxy_ident_roll_step(), or at once when the
 * socket is no local TCP socket (or no memory). */
void proxy_ident_roll_add(struct proxy_ident_cache *c, const struct proxy_ident_query *q, void *tag,
                          proxy_ident_done done, void *arg);
/* Read the next few processes; resolved sockets go to 'done'. True while
 * sockets remain in flight. */
bool proxy_ident_roll_step(struct proxy_ident_cache *c, proxy_ident_done done, void *arg);
struct proxy_identity *proxy_identity_ref(struct proxy_identity *id);
void proxy_identity_unref(struct proxy_identity *id);

/* ===========================================================================
 * Socket holders in one pass: a BPF task-file iterator (proxy_taskfiles.c)
 * ========================================================================= */

struct proxy_taskfiles;
enum proxy_taskfiles_kind {
    PROXY_TASKFILES_SOCKET = 0, /* a socket: 'ino' is its inode */
    PROXY_TASKFILES_ANON = 1,   /* an anonymous-inode file with an inode of its own (io_uring) */
};
/* One descriptor of a task: the file's inode, the holding process (thread
 * group id), the task (thread id) whose table has it, the descriptor. */
typedef void (*proxy_taskfiles_fn)(unsigned long ino, pid_t tgid, pid_t tid, int fd,
                                   enum proxy_taskfiles_kind kind, void *arg);
/* Load and self-test the iterator (new object, caller frees); NULL with the
 * reason in 'why' when it cannot be used here. */
struct proxy_taskfiles *proxy_taskfiles_open(char *why, size_t len);
/* One pass over every open file of every task of the PID namespace: 'fn'
 * for each socket and each anonymous-inode file of its own. False when the pass failed (the records seen so far were
 * delivered; the list is incomplete). */
bool proxy_taskfiles_pass(struct proxy_taskfiles *t, proxy_taskfiles_fn fn, void *arg);
void proxy_taskfiles_free(struct proxy_taskfiles *t);

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
 * tls), NULL where the reference's field has no meaning (connection cap,
 * internal errors, policy.local): the line then has no engine. 'path' is the canonical path with the query redacted. Denials also go
 * to the JSON-lines stream with 'stage'. */
struct proxy_log_event {
    enum proxy_log_action action;
    const char *engine;
    const struct proxy_identity *id;
    const char *binary; /* matched entry, else the exe */
    const char *host;
    uint16_t port;
    const char *method; /* NULL for NET:OPEN */
    const char *path;   /* canonical path, no query */
    bool has_query;     /* the request had a query (logged as ?[redacted]) */
    const char *policy; /* "-" when none */
    const char *reason; /* detail for DENIED/AUDIT */
    const char *stage;  /* connect, ssrf, forward, forward-l7-deny, l7, ... */
    bool tunnel;        /* CONNECT_L7 / in-tunnel */
    /* the GraphQL operation decided (proxy_verdict.gql_op), NULL: none */
    const struct model_gql_op *gql;
    bool gql_endpoint; /* the decision's endpoint is protocol: graphql */
    /* the JSON-RPC call of this line, NULL: none (one line per call); its
     * endpoint is mcp (else json-rpc); withheld: an allowed call not sent
     * because another call of its batch was denied (no denial to lift) */
    const struct model_rpc_call *rpc;
    bool rpc_mcp;
    bool rpc_withheld;
};
/* The "graphql" object of a denial record, a deny body and a denial event:
 * {operation_type, operation_name (only when named), fields} or
 * {persisted_id}; NULL for NULL or on allocation failure. New reference. */
json_t *proxy_gql_json(const struct model_gql_op *op);
/* "mutation Name {a,b}" ("query {viewer}" when anonymous, "persisted query
 * <id>") into 'buf' ('len' bytes, truncated, NUL-terminated; "" for NULL). */
void proxy_gql_describe(const struct model_gql_op *op, char *buf, size_t len);
void proxy_log_event(struct proxy_log *l, const struct proxy_log_event *e);
/* Advisor mode: 'fn' sees every DENIED line (without its newline) with the
 * record it was written from. */
void proxy_log_set_tap(struct proxy_log *l,
                       void (*fn)(void *, const char *, size_t, const struct proxy_log_event *),
                       void *arg);
/* Advisor mode: 'fn' sees every DENIED outcome as a record (the mapper's
 * denial stream, proxy/advisor/proxy_denials.c). */
void proxy_log_set_sink(struct proxy_log *l, void (*fn)(void *, const struct proxy_log_event *),
                        void *arg);
/* A free-form operational line ("{time} PROXY {message}"). */
void proxy_log_note(struct proxy_log *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ===========================================================================
 * Metrics (proxy_metrics.c): GET /metrics on the admin port
 * ========================================================================= */

#define PROXY_METRICS_BUCKETS 12

struct proxy_metrics_row {
    enum proxy_log_action action;
    const char *stage; /* static */
    uint64_t n;
};

/* Loop-only counters (plain data, zeroed with the server). */
struct proxy_metrics {
    struct proxy_metrics_row rows[64]; /* decisions by (outcome, stage) */
    size_t nrows;
    uint64_t overflow; /* decisions beyond 64 distinct rows */
    uint64_t reloads_ok;
    uint64_t reloads_failed;
    uint64_t upstream_errors;
    uint64_t dns_failures;
    uint64_t advisor_refused;    /* advisor revisions whose text hashed elsewhere */
    int64_t advisor_refused_rev; /* the last refused one while it is the newest; 0: none */
    uint64_t lat[PROXY_METRICS_BUCKETS + 1]; /* last: +Inf */
    uint64_t lat_sum_us;
    uint64_t lat_n;
};

/* Values read when the page is rendered. */
struct proxy_metrics_gauges {
    bool quarantined;
    uint64_t generation;
    uint64_t pins;
    uint64_t conns;
    uint64_t tunnels;
};

/* CLOCK_MONOTONIC in microseconds (never 0 in practice). */
uint64_t proxy_metrics_now_us(void);
/* Count one decision line; 'stage' static (NULL = "-"); 'since_us' the
 * head's completion time, 0 = no latency sample. */
void proxy_metrics_decision(struct proxy_metrics *m, enum proxy_log_action a, const char *stage,
                            uint64_t since_us);
/* The Prometheus text exposition (version 0.0.4) into 'b'. */
void proxy_metrics_render(const struct proxy_metrics *m, const struct proxy_metrics_gauges *g,
                          struct evbuffer *b);

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
    uint64_t left; /* size being read, then data bytes left in the chunk */
    unsigned ndigits;
    size_t line;     /* bytes of the current size line */
    size_t trailer;  /* bytes of the trailer section */
    const char *why; /* static; "" unless BAD */
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

/* ===========================================================================
 * Credential placeholders (proxy_cred.c; docs/proxy.md#credentials)
 * ========================================================================= */

struct pv_dynbuf;
struct proxy_creds;
struct proxy_conn;

#define PROXY_CRED_BODY_MAX (256u * 1024u) /* bodies buffered for rewriting */
#define PROXY_CRED_GROWTH (64u * 1024u)    /* output cap above the input's size */
#define PROXY_CRED_REDACTED "[CREDENTIAL]" /* a placeholder as policy and logs see it */

enum proxy_cred_status {
    PROXY_CRED_NONE,        /* no placeholder: the input is the output */
    PROXY_CRED_REWRITTEN,   /* every placeholder resolved for the host */
    PROXY_CRED_UNAVAILABLE, /* unknown key, malformed or encoded marker: 500 */
    PROXY_CRED_MISMATCH,    /* the key's credential does not target the host: 403 */
    PROXY_CRED_TOOBIG,      /* output over its cap (or out of memory): 500 */
};

/* The outcome of one rewrite: how many placeholders, and why a refusal
 * (names keys and hosts, never a value). */
struct proxy_cred_result {
    enum proxy_cred_status st;
    size_t n;
    char why[200];
};

/* Load the store at 'path' (owned by the effective uid, mode 0600 or
 * stricter; so must every value_file be). New; NULL with the reason in
 * 'err' (which never holds a value). */
struct proxy_creds *proxy_creds_load(const char *path, char *err, size_t errlen);
/* The same from bytes already read; relative value_file paths resolve
 * against 'dir'. For tests and fuzzing. */
struct proxy_creds *proxy_creds_new_from(const char *name, const char *buf, size_t len,
                                         const char *dir, char *err, size_t errlen);
/* Wipes every value. NULL is a no-op. */
void proxy_creds_free(struct proxy_creds *s);
size_t proxy_creds_count(const struct proxy_creds *s);

/* Either marker (openshell:resolve:env: or OPENSHELL-RESOLVE-ENV-) in any
 * case, literally or percent-encoded (nested encodings too). Pure. */
bool proxy_cred_has_marker(const char *p, size_t n);
/* Rewrite 'in' for a request to 'host' (normalised): each canonical
 * placeholder and each alias token replaced by its value ('redact': by
 * PROXY_CRED_REDACTED) into 'out' (caller's dynbuf; its cap bounds the
 * output). 's' NULL: every placeholder is unavailable. Pure. */
enum proxy_cred_status proxy_cred_rewrite(const struct proxy_creds *s, const char *host,
                                          const char *in, size_t len, bool redact,
                                          struct pv_dynbuf *out, struct proxy_cred_result *r);
/* Does a header field hold a marker: in its name, its value, or the
 * decoded credentials of a `Basic` value? Pure. */
bool proxy_cred_header_has_marker(const char *name, size_t nl, const char *v, size_t n);
/* One header field: `Basic base64(user:placeholder)` is decoded, rewritten
 * and encoded again; any other value is rewritten as text (the whole value,
 * `Scheme <placeholder>`). A marker in the name is refused. Pure. */
enum proxy_cred_status proxy_cred_header(const struct proxy_creds *s, const char *host,
                                         const char *name, size_t nl, const char *v, size_t n,
                                         bool redact, struct pv_dynbuf *out,
                                         struct proxy_cred_result *r);
/* A request-target "path?query": each path segment and query value that
 * holds a marker is percent-decoded, rewritten and encoded again, into 'up'
 * (values, for the upstream) and 'red' (PROXY_CRED_REDACTED, for the policy
 * and the logs); other bytes are copied. A marker in a query key is
 * refused. Pure. */
enum proxy_cred_status proxy_cred_target(const struct proxy_creds *s, const char *host,
                                         const char *t, size_t tl, struct pv_dynbuf *up,
                                         struct pv_dynbuf *red, struct proxy_cred_result *r);
/* Is Content-Type 'ct' one whose bodies are rewritten (application/json,
 * application/x-www-form-urlencoded, any text type; a charset must be UTF-8)? */
bool proxy_cred_body_type(const char *ct, size_t n);
/* A complete body (at most PROXY_CRED_BODY_MAX bytes, UTF-8) rewritten
 * into 'out'. A body that is not UTF-8 passes unchanged unless it holds a
 * marker (refused). Pure. */
enum proxy_cred_status proxy_cred_body(const struct proxy_creds *s, const char *host, const char *b,
                                       size_t n, struct pv_dynbuf *out,
                                       struct proxy_cred_result *r);

/* What the upstream gets instead of the client's bytes (one request). */
struct proxy_cred_req {
    char *target;                       /* raw request-target with values; NULL: unchanged */
    char *out_target;                   /* its canonical form, sent upstream */
    struct proxy_cred_result target_st; /* the target's rewrite (a refusal waits for the gate) */
    bool any;                           /* some placeholder or marker in this request */
    char *hdr[PROXY_MAX_HEADERS];       /* rewritten field values; NULL: unchanged */
    size_t hlen[PROXY_MAX_HEADERS];
    bool body;         /* buffer the body before the head goes (rewrite or scan) */
    bool body_rewrite; /* the endpoint's request_body_credential_rewrite */
    /* the allowing decision line, held until the buffered body passed */
    bool line_held;
    bool line_done;
    struct proxy_verdict line_v;
    const char *line_engine;  /* static */
    const char *line_stage;   /* static */
    const char *line_method;  /* borrowed from the request */
    char *line_path;          /* owned; NULL: none */
    struct evbuffer *bodybuf; /* the body so far */
};
/* proxy_credgate.c: the rewriter on a connection's requests.
 * Wipes values. NULL is a no-op. */
void proxy_cred_req_free(struct proxy_cred_req *q);
/* Before the decision: a target holding a marker is replaced by its
 * redacted form (the policy decides and the log shows it); its rewrite
 * (or refusal) waits in c->cur.cred for the gate. */
void proxy_cred_prepare_target(struct proxy_conn *c);
/* After an allowing verdict 'v', before its decision line: rewrite every
 * placeholder of the request (target, header fields) for the upstream, or
 * refuse it (one decision line, the credential body) and return false.
 * Arms the body rewrite when the endpoint asks for it. */
bool proxy_cred_gate(struct proxy_conn *c, const struct proxy_verdict *v);
/* The buffered body is complete: its rewritten form into 'out', or a
 * refusal (false). */
bool proxy_cred_body_ready(struct proxy_conn *c, struct pv_dynbuf *out);
/* The allowing decision line of a request whose body is buffered for
 * credential rewriting is held (true: the caller writes nothing) until the
 * body passed; a refusal then writes the only line. */
bool proxy_cred_defer_line(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                           const char *method, const char *path, const char *stage);
/* A client WebSocket text message of an allowed session ('v' its verdict):
 * with websocket_credential_rewrite its placeholders are rewritten ('*msg'
 * then points at a buffer owned here until the next call); without it a
 * marker refuses the message. False with the reason (never a value) in
 * 'why'. */
bool proxy_cred_ws_text(struct proxy_conn *c, const struct proxy_verdict *v, unsigned char **msg,
                        size_t *len, char *why, size_t wl);

struct proxy_conn;

/* ===========================================================================
 * Outcomes (proxy_outcome.c): one row per refused or failed outcome
 * ========================================================================= */

enum proxy_outcome {
    PROXY_OUT_HEAD_TOOBIG,         /* request head over the limits */
    PROXY_OUT_HEAD_BAD,            /* request head failed validation */
    PROXY_OUT_HEAD_TIMEOUT,        /* no complete head within the header timeout */
    PROXY_OUT_BODY_BAD,            /* chunked body framing failed validation */
    PROXY_OUT_INTERNAL,            /* allocation failure */
    PROXY_OUT_CONN_LIMIT,          /* too many connections from one client address */
    PROXY_OUT_CONNECT_TARGET,      /* malformed CONNECT authority */
    PROXY_OUT_CONNECT_DENIED,      /* CONNECT denied at the policy layer */
    PROXY_OUT_FORWARD_URI,         /* malformed absolute-form target */
    PROXY_OUT_FORWARD_HTTPS,       /* https:// URI on the forward path */
    PROXY_OUT_FORWARD_SCHEME,      /* another scheme */
    PROXY_OUT_POLICY_LOCAL_PORT,   /* policy.local off port 80 */
    PROXY_OUT_POLICY_LOCAL,        /* policy.local (advisor not connected) */
    PROXY_OUT_FORWARD_DENIED,      /* forward request denied at the policy layer */
    PROXY_OUT_FORWARD_TARGET,      /* non-canonical target on an inspected route */
    PROXY_OUT_FORWARD_L7_DENIED,   /* forward request denied by L7 rules */
    PROXY_OUT_FORWARD_UNSUPPORTED, /* upgrade or uninspectable protocol on an inspected route */
    PROXY_OUT_SSRF,                /* no resolved address admitted */
    PROXY_OUT_DNS,                 /* resolution failed */
    PROXY_OUT_UPSTREAM_FAILED,     /* connect failed or closed after an allowed decision */
    PROXY_OUT_TUNNEL_PROTOCOL,     /* inspected tunnel carries neither TLS nor HTTP/1 */
    PROXY_OUT_TUNNEL_HEAD_BAD,     /* malformed target or Host inside a tunnel */
    PROXY_OUT_TUNNEL_AUTHORITY,    /* request names another authority than the tunnel */
    PROXY_OUT_TUNNEL_TARGET,       /* non-canonical target inside a tunnel */
    PROXY_OUT_TUNNEL_SSRF,         /* granted by a unit that does not admit the address */
    PROXY_OUT_TUNNEL_L7_DENIED,    /* request denied by L7 rules */
    PROXY_OUT_TUNNEL_UNSUPPORTED,  /* upgrade or uninspectable protocol inside a tunnel */
    PROXY_OUT_TUNNEL_UPSTREAM,     /* the tunnel's upstream failed (TLS verification, ...) */
    PROXY_OUT_RELOAD_CLOSED,       /* a reload changed or removed the tunnel's route */
    PROXY_OUT_CRED_MISMATCH,       /* a placeholder headed where it may not be rewritten */
    PROXY_OUT_CRED_UNAVAILABLE,    /* a placeholder that cannot be resolved */
};

enum proxy_reply_kind {
    PROXY_REPLY_NONE,      /* close without a reply */
    PROXY_REPLY_BARE,      /* status line, empty body */
    PROXY_REPLY_JSON,      /* {"detail","error"[,"reason"]} */
    PROXY_REPLY_L7,        /* the structured L7 denial */
    PROXY_REPLY_TEXT,      /* text/plain detail */
    PROXY_REPLY_AUTHORITY, /* the request_authority_mismatch body */
    PROXY_REPLY_MESSAGE,   /* {"error","message"}: 'detail' is the fixed message */
};

struct proxy_outcome_row {
    enum proxy_outcome outcome;
    const char *name;  /* the enumerator's name (tests) */
    unsigned status;   /* 0 for PROXY_REPLY_NONE */
    const char *error; /* body error code; NULL for bare replies */
    enum proxy_reply_kind kind;
    const char *engine; /* log engine tag; NULL: none applies */
    const char *stage;  /* denials.jsonl stage */
    bool log;           /* a decision line (false: a note after an ALLOWED line) */
    /* rule_missing.type of a policy denial that a rule could lift (JSON bodies
     * only: the L7 body always names it), NULL for every other outcome */
    const char *missing;
};

/* The row of 'o' (static), NULL if the table lacks it (a bug the tests catch). */
const struct proxy_outcome_row *proxy_outcome_row(enum proxy_outcome o);
size_t proxy_outcome_count(void);
const struct proxy_outcome_row *proxy_outcome_at(size_t i);

/* ===========================================================================
 * Hooks: what a mode adds to the core (proxy_server.c)
 * ========================================================================= */

/* The core never calls a mode by name. A mode that cfg->mode_start starts
 * (advisor mode, proxy/advisor/) registers these, the way its denial
 * tap reaches the decision log (proxy_log_set_tap); every one may be NULL,
 * and the core then does what --policy mode does. All run on the loop
 * thread with 'arg'. */
struct proxy_hooks {
    void *arg;
    /* A forward request to http://policy.local:80, 'rest' its path and query
     * as received: take the client over (its bufferevent and socket leave
     * 'c'; the caller retires 'c') and return true, or return false (the
     * core refuses: policy.local is not served). */
    bool (*local_serve)(void *arg, struct proxy_conn *c, const char *rest, size_t len);
    /* Clients the mode serves from address 'peer' (NULL: any): they count
     * toward the per-address connection cap (proxy_conn.c client_cap). */
    size_t (*local_clients)(void *arg, const struct sockaddr_storage *peer);
    /* The skill path deny bodies point an agent at (borrowed), or NULL:
     * no proposals, no "agent_guidance" (proxy_reply_advice). */
    const char *(*skill)(void *arg);
    /* Stop the mode (its threads, the clients it took); runs first when the
     * server is freed, before any connection or the event base. */
    void (*stop)(void *arg);
};

/* Register 'h' (copied) on 'srv'; a second call replaces the first. */
void proxy_server_set_hooks(struct proxy_server *srv, const struct proxy_hooks *h);
/* The hooks as the core calls them (NULL hook: the default). */
bool proxy_server_local_serve(struct proxy_conn *c, const char *rest, size_t len);
size_t proxy_server_local_clients(const struct proxy_server *srv,
                                  const struct sockaddr_storage *peer);
const char *proxy_server_skill(const struct proxy_server *srv);
/* Reload cfg->policy_path the way SIGHUP does (quarantine on failure): a
 * mode that writes a new policy there calls it (loop thread). */
void proxy_server_reload(struct proxy_server *srv, const char *why);

struct proxy_server {
    struct event_base *base;
    struct evdns_base *dns;
    struct evconnlistener *listener;
    struct evhttp *admin;
    const struct proxy_config *cfg;
    struct proxy_decide_opts opts;
    struct proxy_policy *policy; /* current version (one reference) */
    uint64_t generation;
    struct proxy_idq *idq; /* identity lookups (worker thread) */
    struct proxy_tls *tls;
    struct proxy_log *log;
    struct proxy_conn *conns; /* doubly linked list of live connections */
    size_t nconns;
    bool draining;
    struct event *ev_term;
    struct event *ev_int;
    struct event *ev_hup;
    struct event *ev_stat;  /* periodic policy file check */
    struct event *ev_flush; /* log flush when the loop goes idle */
    struct event *ev_drain; /* drain grace period */
    struct event *ev_reap;  /* frees connections closed during callbacks */
    struct proxy_conn *graveyard;
    struct stat policy_st; /* last seen (dev, ino, size, mtime) */
    bool policy_st_valid;
    uint16_t port; /* bound ports */
    uint16_t admin_port;
    struct proxy_hooks hooks;     /* what a mode added (advisor mode), else all NULL */
    struct proxy_creds *creds;    /* --credentials (proxy_cred.c), else NULL */
    struct proxy_metrics metrics; /* GET /metrics (proxy_metrics.c) */
    bool warned_accept;           /* an accept failure was logged (once until one succeeds) */
    bool warned_ca;               /* the "does the client trust the CA" hint was logged */
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
    PROXY_ST_WS,      /* WebSocket frames flowing after a 101 (proxy_wsconn.c) */
};

/* The request being served (head copied out of the input buffer). */
struct proxy_cur {
    char *head; /* owned copy of the head bytes */
    size_t head_len;
    struct proxy_request *req; /* owned */
    char *method;              /* owned, NUL-terminated */
    char *target;              /* request-target as received (path?query), owned */
    size_t target_len;
    char *out_target; /* canonical path + raw query, owned */
    size_t canon_len; /* length of the canonical path inside out_target */
    bool has_query;
    bool is_head;
    bool keep_alive;             /* the client allows another request */
    struct proxy_cred_req *cred; /* placeholders to put in, or NULL (proxy_cred.c) */
    struct proxy_gql *gql;       /* GraphQL request being read (proxy_bodyhold.c), owned */
};

struct proxy_conn {
    struct proxy_server *srv;
    struct proxy_conn *prev, *next;
    int cfd;               /* client socket; -1 once a bufferevent owns it */
    struct bufferevent *c; /* client side (socket or TLS) */
    struct bufferevent *u; /* upstream side (socket or TLS), NULL when none */
    struct sockaddr_storage peer;
    struct sockaddr_storage local;
    struct proxy_identity *id;
    struct proxy_policy *pol; /* pinned version */
    enum proxy_conn_mode mode;
    enum proxy_conn_state state;

    /* destination of the current upstream (or of the tunnel) */
    char host[256];  /* as received, lower-cased, brackets stripped */
    char nhost[256]; /* normalised (model_host_normalize) */
    bool host_is_ip;
    uint16_t port;
    bool u_tls;           /* upstream speaks TLS */
    bool c_tls;           /* client side TLS terminated here */
    struct model_ip u_ip; /* the address the upstream socket is connected to */
    char u_host_key[256]; /* forward mode: normalised host the upstream serves */
    uint16_t u_port;
    bool dead;                   /* closed; freed by the reaper */
    bool c_eof;                  /* the client shut its write side */
    struct proxy_idq_job *idjob; /* identity lookup in flight */
    uint64_t t_head;             /* the current head completed (metrics), 0 = none */
    struct event *ev_hdr;        /* header timeout: a complete head within the limit */
    bool linger;                 /* CLOSING ends with a lingering close */
    unsigned nreq;               /* requests served on this connection */
    char u_err[160];             /* upstream TLS failure, reported on the next request */
    enum model_route route;
    char policy_key[128]; /* rule that granted the connection (logs) */

    /* resolution and connect */
    struct evdns_getaddrinfo_request *dnsreq;
    struct event *ev_kick; /* continue after DNS, or with pipelined bytes */
    struct event *ev_io;   /* connect completion or sniff readiness */
    struct model_ip addrs[PROXY_MAX_ADDRS];
    size_t naddrs;
    size_t next_addr;
    int ufd; /* connecting socket */
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
    bool resp_eof_framed; /* the response ended at upstream EOF */
    bool resp_started;    /* response bytes reached the client */
    unsigned resp_status;
    bool resp_head_ok;     /* the final response head passed proxy_http_response_head */
    bool resp_chunked;     /* its body is chunked: validated by resp_chunk */
    bool resp_stream;      /* the response is an event stream (text/event-stream) */
    struct event *ev_gone; /* the client's close while an event stream relays, or NULL */
    size_t resp_body_off;  /* where the body starts in the upstream input */
    struct proxy_chunk resp_chunk;
    struct evbuffer *early;   /* client bytes that arrived with the CONNECT head */
    struct proxy_splice *spl; /* opaque tunnel relayed with splice(2) */
    bool splice_pending;      /* start splicing once the 200 is flushed */
    struct proxy_ws_conn *ws; /* a WebSocket upgrade or session (proxy_wsconn.c), else NULL */
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
/* Executables pinned so far (published by the worker; any thread). */
size_t proxy_idq_pins(struct proxy_idq *q);

/* ===========================================================================
 * Connections: proxy_conn.c (lifecycle, callbacks, the one exit),
 * proxy_relay.c (forward requests), proxy_tunnel.c (CONNECT tunnels)
 * ========================================================================= */

#define RELAY_HWM (256u * 1024u)
#define CANON_MAX (3u * 4096u + 64u)

/* proxy_conn.c */
void proxy_conn_accept(struct proxy_server *srv, int fd, const struct sockaddr *sa, int salen);
void proxy_conn_free(struct proxy_conn *c);
/* After a reload: close what the new policy no longer allows. */
void proxy_conn_policy_changed(struct proxy_conn *c);
/* On SIGTERM: close idle connections, let busy ones finish. */
void proxy_conn_drain(struct proxy_conn *c);
/* The identity of 'c' is known ('id' stolen; NULL = no memory: refused). */
void proxy_conn_identified(struct proxy_conn *c, struct proxy_identity *id);
/* Every refused or failed outcome: its log line, then its reply (table of
 * proxy_outcome.c). 'v' the verdict behind it or NULL; 'detail' the body's
 * detail (and the log reason without 'v'); 'reason' the body's reason. */
void proxy_conn_outcome(struct proxy_conn *c, enum proxy_outcome o, const struct proxy_verdict *v,
                        const char *detail, const char *reason);
void proxy_conn_cur_clear(struct proxy_cur *cur);
void proxy_conn_drop_upstream(struct proxy_conn *c);
/* Close now as far as the peers can tell; freed later by the reaper. */
void proxy_conn_kill(struct proxy_conn *c);
/* The connection pinned an older policy version than the current one. */
bool proxy_conn_stale(const struct proxy_conn *c);
/* Queue 'buf' (copied) to the client and close once it is flushed. */
void proxy_conn_reply_close(struct proxy_conn *c, const char *buf, size_t len);
void proxy_conn_reply_bare(struct proxy_conn *c, unsigned status);
/* The decision line of an allowed (or audited) request or connection. */
void proxy_conn_log_verdict(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                            const char *method, const char *path, const char *stage);
/* The current request's canonical path without query, in 'buf'. */
const char *proxy_conn_cur_path(struct proxy_conn *c, char *buf, size_t len);
bool proxy_conn_reason_is_l4(enum model_reason r);
/* Same client address (ports ignored)? */
bool proxy_conn_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* bufferevent callbacks of the client and upstream sides ('arg': the connection) */
void proxy_conn_client_read(struct bufferevent *bev, void *arg);
void proxy_conn_client_write(struct bufferevent *bev, void *arg);
void proxy_conn_client_event(struct bufferevent *bev, short what, void *arg);
void proxy_conn_up_read(struct bufferevent *bev, void *arg);
void proxy_conn_up_write(struct bufferevent *bev, void *arg);
void proxy_conn_up_event(struct bufferevent *bev, short what, void *arg);

/* proxy_relay.c */
void proxy_relay_set_host(struct proxy_conn *c, const char *h, size_t hl, uint16_t port);
bool proxy_relay_canonicalise(struct proxy_conn *c, const char *t, size_t tl);
bool proxy_relay_reason_is_target(enum model_reason r);
void proxy_relay_after_resolve(struct proxy_conn *c);
void proxy_relay_resolve(struct proxy_conn *c);
void proxy_relay_set_nodelay(int fd);
void proxy_relay_bulk_sizes(struct bufferevent *bev);
bool proxy_relay_wrap_upstream(struct proxy_conn *c);
void proxy_relay_send_request(struct proxy_conn *c);
void proxy_relay_pump_req_body(struct proxy_conn *c);
void proxy_relay_pump_resp(struct proxy_conn *c);
void proxy_relay_resp_eof(struct proxy_conn *c);
void proxy_relay_forward(struct proxy_conn *c);

/* The rest of proxy_relay_forward() once the target is origin-form: decide
 * and go on (re-entered by proxy_bodyhold.c once the operations are read). */
void proxy_relay_forward_decide(struct proxy_conn *c);

/* proxy_bodyhold.c: a request body held and read (GraphQL operations, JSON-RPC calls). */
struct proxy_gql;
/* Verdict 'v' asks for the request's GraphQL operations (reason
 * graphql_no_operation), or came from a graphql endpoint in audit mode
 * (whose parse errors still deny), and none were read yet: read them (GET target, or
 * the POST body, waiting for it while the state stays HEAD), then re-enter
 * 'resume'. True when it took the request over (the caller returns); false
 * to go on with 'v'. A body over the endpoint's bound and unreadable
 * requests are refused (403, one decision line). */
bool proxy_bodyhold_hold(struct proxy_conn *c, struct proxy_verdict *v,
                         void (*resume)(struct proxy_conn *c));
/* More body bytes arrived (or the client half-closed) while held. True when
 * the request is held: the caller does nothing else with the input. */
bool proxy_bodyhold_pending(struct proxy_conn *c);
/* The operations read for the current request (NULL: none). Borrowed. */
const struct model_gql_ops *proxy_bodyhold_gql_ops(const struct proxy_conn *c);
/* The JSON-RPC calls read for the current request (NULL: none), and the
 * array their decisions go to (one per call). Borrowed. */
const struct model_rpc_calls *proxy_rpc_calls(const struct proxy_conn *c);
struct proxy_rpc_result *proxy_rpc_results(const struct proxy_conn *c);

/* proxy_rpc.c: replies and lines of JSON-RPC / MCP requests. */
/* The reply to a refused request on a json-rpc or mcp endpoint: JSON-RPC
 * errors (docs/semantics.md#rpc-replies), 'detail' when no call was read. */
void proxy_rpc_deny(struct proxy_conn *c, const struct proxy_verdict *v, const char *detail);
/* One decision line per call of the current request ('v' is the
 * request's verdict). False when the request has no calls read: the
 * caller writes its one line. */
bool proxy_rpc_log(struct proxy_conn *c, const struct proxy_verdict *v, const char *engine,
                   const char *method, const char *path, const char *stage);
void proxy_bodyhold_free(struct proxy_gql *g);

/* proxy_tunnel.c */
/* The decision part of proxy_tunnel_request() (re-entered by proxy_bodyhold.c). */
void proxy_tunnel_request_decide(struct proxy_conn *c);
void proxy_tunnel_deny_upgrade(struct proxy_conn *c, struct proxy_verdict *v, enum proxy_outcome o);
void proxy_tunnel_request(struct proxy_conn *c);
void proxy_tunnel_connect(struct proxy_conn *c);
void proxy_tunnel_start_splice(struct proxy_conn *c);
void proxy_tunnel_sniff(struct proxy_conn *c);
/* After a reload: re-pin the tunnel if the current version reaches it by
 * the same route; otherwise close it (logged). True when it lives on. */
bool proxy_tunnel_still_routed(struct proxy_conn *c);
void proxy_tunnel_upstream_connected(struct proxy_conn *c);
void proxy_tunnel_relay_chunk(struct bufferevent *from, struct bufferevent *to);
void proxy_tunnel_side_closed(struct proxy_conn *c, bool client_side);

/* Arm the log flush for the end of this loop iteration. */
void proxy_server_log_touch(struct proxy_server *srv);
/* The connection list became empty while draining. */
void proxy_server_conn_gone(struct proxy_server *srv);

#endif
