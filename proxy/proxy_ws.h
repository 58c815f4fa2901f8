/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_ws.h - WebSocket (RFC 6455) for the proxy: the strict frame parser,
 * the handshake checks, frame writers and the GraphQL-over-WebSocket message
 * classification (proxy/ internal)
 *
 * Everything declared here up to the session section is pure: it reads
 * byte buffers and fills structs, allocates only the reassembly buffer of a
 * text message, and does no I/O, so the unit tests and the fuzz target
 * drive it directly. The session (proxy_wsconn.c) moves the bytes.
 */
#ifndef PROXY_WS_H
#define PROXY_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/proxy_int.h"

/* The largest message (text or binary, either direction, all fragments
 * together) the proxy relays: a larger one closes with 1009. */
#define PROXY_WS_MAX_MESSAGE (1024u * 1024u)
#define PROXY_WS_MAX_CONTROL 125u /* control frame payload (RFC 6455 §5.5) */
#define PROXY_WS_MAX_HEAD 14u     /* 2 + 8 (64-bit length) + 4 (mask key) */

enum proxy_ws_opcode {
    PROXY_WS_OP_CONT = 0x0,
    PROXY_WS_OP_TEXT = 0x1,
    PROXY_WS_OP_BINARY = 0x2,
    PROXY_WS_OP_CLOSE = 0x8,
    PROXY_WS_OP_PING = 0x9,
    PROXY_WS_OP_PONG = 0xA,
};

/* Close codes the proxy sends (RFC 6455 §7.4.1). */
#define PROXY_WS_CLOSE_NORMAL 1000u
#define PROXY_WS_CLOSE_GOING_AWAY 1001u
#define PROXY_WS_CLOSE_PROTOCOL 1002u
#define PROXY_WS_CLOSE_BAD_DATA 1007u /* text that is not UTF-8 */
#define PROXY_WS_CLOSE_POLICY 1008u
#define PROXY_WS_CLOSE_TOO_BIG 1009u
#define PROXY_WS_CLOSE_EXTENSION 1010u
#define PROXY_WS_CLOSE_INTERNAL 1011u

/* Who sent the bytes a parser reads: client frames must be masked, server
 * frames must not be. */
enum proxy_ws_side {
    PROXY_WS_FROM_CLIENT,
    PROXY_WS_FROM_SERVER,
};

enum proxy_ws_kind {
    PROXY_WS_MORE,     /* the next frame is not complete yet: wait for bytes */
    PROXY_WS_FRAGMENT, /* a data frame that does not end a text message */
    PROXY_WS_TEXT,     /* the final frame of a text message */
    PROXY_WS_CONTROL,  /* ping, pong or close */
    PROXY_WS_ERROR,    /* protocol violation: close with 'code' */
};

/* One step of the parser: the frame at the start of the input. */
struct proxy_ws_event {
    enum proxy_ws_kind kind;
    uint8_t opcode;   /* the frame's own opcode (0 for a continuation) */
    bool fin;         /* the frame ends its message */
    bool text;        /* the frame belongs to a text message */
    size_t frame_len; /* bytes of the frame (head + payload) at the start of the input */
    size_t need;      /* MORE with a complete head: the frame's whole length, else 0 */
    /* CONTROL: the unmasked payload (the parser's 'ctl'); TEXT with
     * 'hold_text': the whole unmasked message (the parser's 'msg'); borrowed,
     * valid until the next call */
    const unsigned char *payload;
    size_t payload_len;
    /* ERROR: the close code to send; CONTROL close: the peer's code, 0 if
     * the close frame carries none */
    uint16_t code;
    const char *why; /* ERROR: static reason */
};

/* The state of one direction of a session: a fragmented message in
 * progress, the UTF-8 state of a text message, whether a close was seen. */
struct proxy_ws_parser {
    enum proxy_ws_side side;
    bool hold_text;     /* reassemble text messages into 'msg' (unmasked) */
    size_t max_message; /* PROXY_WS_MAX_MESSAGE unless a test sets less */
    uint8_t msg_op;     /* 0, or TEXT/BINARY: a fragmented message is open */
    uint64_t msg_len;   /* payload bytes of the open message so far */
    uint8_t utf8_need;  /* continuation bytes the open sequence still needs */
    uint8_t utf8_lo;    /* bounds of the next continuation byte */
    uint8_t utf8_hi;
    bool closed;        /* a close frame was read: no frame may follow */
    unsigned char *msg; /* owned; text reassembly */
    size_t msg_cap;
    unsigned char ctl[PROXY_WS_MAX_CONTROL];
};

void proxy_ws_parser_init(struct proxy_ws_parser *p, enum proxy_ws_side side, bool hold_text);
/* Frees the reassembly buffer; the parser may be initialised again. */
void proxy_ws_parser_clear(struct proxy_ws_parser *p);

/* Read the frame at the start of 'buf' ('len' bytes received so far) as
 * strictly as RFC 6455 §5 asks: masking by side, known opcodes, no RSV bits
 * (no extension is ever negotiated), minimal length encodings, 64-bit
 * lengths with the top bit clear, control frames unfragmented and at most
 * 125 bytes, continuation only inside a fragmented message and no new data
 * message inside one, messages at most 'max_message' bytes (1009), text
 * valid UTF-8 across fragments (1007), close payloads of 0 or 2+ bytes with
 * a valid code and a UTF-8 reason, nothing after a close. The caller
 * consumes ev->frame_len bytes unless the kind is MORE or ERROR; an error is
 * final. Allocation failure is an ERROR with 1011. */
enum proxy_ws_kind proxy_ws_parse(struct proxy_ws_parser *p, const unsigned char *buf, size_t len,
                                  struct proxy_ws_event *ev);

/* Is 'code' a close code a peer may send (1000-1003, 1007-1014, 3000-4999)? */
bool proxy_ws_close_code_valid(unsigned code);
/* Is [s, s+n) well-formed UTF-8 (no overlongs, surrogates, > U+10FFFF)? */
bool proxy_ws_utf8_valid(const unsigned char *s, size_t n);

/* ---------------------------------------------------------------------------
 * Handshake
 * ------------------------------------------------------------------------- */

/* Does the request ask for a WebSocket upgrade (an Upgrade field naming
 * "websocket")? Other upgrades (h2c, ...) stay refused. */
bool proxy_ws_is_upgrade(const struct proxy_request *r, const char *head);
/* Is the upgrade request a valid RFC 6455 opening handshake (§4.2.1): GET,
 * HTTP/1.1, Upgrade exactly "websocket", Connection naming "upgrade", one
 * Sec-WebSocket-Key of 16 base64-encoded bytes, Sec-WebSocket-Version 13,
 * no body? NULL when it is, else the static reason. On success 'key'
 * (25 bytes) receives the key. */
const char *proxy_ws_check_upgrade(const struct proxy_request *r, const char *head, char key[25]);
/* The Sec-WebSocket-Accept for 'key': base64(SHA-1(key + GUID)), 28
 * characters and a NUL in 'out'. False only when OpenSSL fails. */
bool proxy_ws_accept_for(const char *key, char out[29]);
/* Check a 101 response head ('len' bytes, already valid HTTP, status 101):
 * Upgrade "websocket", Connection naming "upgrade", exactly one
 * Sec-WebSocket-Accept equal to 'accept'. NULL when valid, else the static
 * reason; '*extension' is set when it fails because the upstream chose an
 * extension (Sec-WebSocket-Extensions), which the proxy never offers. */
const char *proxy_ws_check_101(const char *head, size_t len, const char *accept, bool *extension);

/* ---------------------------------------------------------------------------
 * Frame writers
 * ------------------------------------------------------------------------- */

/* Write a FIN frame head for 'opcode' and 'len' payload bytes into 'out'
 * (at least PROXY_WS_MAX_HEAD bytes); 'mask' NULL for an unmasked (server)
 * frame. Returns the head length. */
size_t proxy_ws_frame_head(unsigned char *out, uint8_t opcode, uint64_t len,
                           const unsigned char *mask);
/* Fresh mask keys for frames the proxy writes towards the upstream (RFC
 * 6455 §5.3: unpredictable, from a strong source): drawn from OpenSSL's
 * RAND_bytes 64 keys at a time, each handed out once. Zero-initialise. */
struct proxy_ws_keys {
    unsigned char pool[256];
    size_t used; /* bytes of 'pool' handed out */
    bool filled; /* false on a zeroed struct: the first call fills the pool */
};
/* The next key into 'out'; false only when RAND_bytes fails. */
bool proxy_ws_mask_key(struct proxy_ws_keys *k, unsigned char out[4]);
/* XOR 'n' bytes with the mask key, starting at key offset 'off'. */
void proxy_ws_mask(unsigned char *buf, size_t n, const unsigned char mask[4], size_t off);
/* A whole close frame with 'code' and 'reason' (cut to fit 125 bytes) into
 * 'out' (at least PROXY_WS_MAX_HEAD + PROXY_WS_MAX_CONTROL bytes), masked
 * with 'mask' unless NULL. Returns its length. */
size_t proxy_ws_close_frame(unsigned char *out, uint16_t code, const char *reason,
                            const unsigned char *mask);

/* ---------------------------------------------------------------------------
 * GraphQL over WebSocket (graphql-transport-ws and the legacy graphql-ws)
 * ------------------------------------------------------------------------- */

enum proxy_ws_gql_kind {
    PROXY_WS_GQL_CONTROL,   /* lifecycle message: passes, never payload-logged */
    PROXY_WS_GQL_OPERATION, /* subscribe / start: decided as a GraphQL operation */
    PROXY_WS_GQL_INVALID,   /* anything else: denied */
};

struct proxy_ws_gql {
    enum proxy_ws_gql_kind kind;
    const char *type;     /* static: the message type ("subscribe", "ping", ...) */
    char *query;          /* OPERATION: the document, NULL when hash-only; owned */
    size_t query_len;     /* its length (a JSON string may hold NUL bytes) */
    char *operation_name; /* OPERATION: operationName or NULL; owned */
    char *persisted_id;   /* OPERATION: extensions.persistedQuery.sha256Hash or NULL; owned */
    const char *why;      /* INVALID: static reason */
};

/* Classify one client text message of a GraphQL-over-WebSocket session
 * (docs/semantics.md#graphql-ws):
 * a JSON object whose "type" is a lifecycle type (connection_init,
 * connection_ack, ping, pong, complete, stop, connection_terminate) is
 * CONTROL; "subscribe" or "start" with a string "id" and a "payload" object
 * carrying a string "query" and/or a persisted-query hash (and an optional
 * string or null "operationName") is OPERATION (with both, the query must
 * hash to the SHA-256 it names); anything else INVALID.
 * Returns false only on allocation failure. Free with proxy_ws_gql_clear. */
bool proxy_ws_gql_classify(const char *msg, size_t len, struct proxy_ws_gql *out);
void proxy_ws_gql_clear(struct proxy_ws_gql *g);

/* ---------------------------------------------------------------------------
 * Sessions (proxy_wsconn.c): the hooks the relay calls
 * ------------------------------------------------------------------------- */

struct proxy_ws_conn;

/* The current request (on an inspected route, decided and allowed) is a
 * WebSocket upgrade: check the handshake and remember what the 101 must
 * answer. False with '*why' (static) when the handshake is not valid. */
bool proxy_ws_begin(struct proxy_conn *c, const char **why);
/* The hook of the relay for an upgrade on an inspected route whose GET is
 * allowed ('v' its verdict, 'o' the refusal outcome of the path): true when
 * it is a valid WebSocket handshake that goes upstream; else the upgrade is
 * refused (documented unsupported denial, or the handshake's fault) and
 * false is returned. */
bool proxy_ws_admit(struct proxy_conn *c, struct proxy_verdict *v, enum proxy_outcome o);
/* Called by the response check for a final head of 'len' bytes with status
 * 101 at the start of the upstream input, when proxy_ws_begin ran for the
 * request: validates it and switches the connection to the session, or
 * refuses it (502 to the client, a close to the upstream). */
void proxy_ws_upgraded(struct proxy_conn *c, size_t head_len);
/* Bytes arrived from the client (client_side) or the upstream. */
void proxy_ws_pump(struct proxy_conn *c, bool client_side);
/* A side reached EOF or failed: relay a close and end. */
void proxy_ws_side_closed(struct proxy_conn *c, bool client_side);
/* After a reload (proxy_conn_policy_changed). */
void proxy_ws_policy_changed(struct proxy_conn *c);
void proxy_ws_conn_free(struct proxy_ws_conn *w);

#endif
