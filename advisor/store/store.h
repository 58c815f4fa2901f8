/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - the advisor's durable state, behind a narrow interface
 *
 * Everything the advisor knows lives here: sandboxes, their base policy
 * revisions, credentials and settings, proposal chunks, effective policy
 * revisions, proxy load acknowledgements, content-addressed blobs and the
 * event log. The embedded backend is SQLite (store_sqlite.c): WAL,
 * synchronous=FULL, so a committed transaction is on disk before the
 * caller answers. The PostgreSQL backend (store_pg.c) implements the same
 * calls with the same guarantees (docs/operations.md#postgresql): plain
 * records in, plain records out, and explicit transactions.
 *
 * Threads: a struct store is one handle; open one per thread
 * (store_open on the same directory) - the advisor's worker threads each own
 * one. On SQLite a handle is a connection; on PostgreSQL handles borrow
 * connections from a bounded pool (store_set_connections). Writes happen
 * inside store_begin()/store_commit(): BEGIN IMMEDIATE (on PostgreSQL a
 * transaction-scoped advisory lock), so a transaction that
 * read something and then writes it is never interleaved with another
 * writer. A state change and the event that records
 * it are always written in the same transaction.
 *
 * Ownership: records returned by store_*_get are filled into caller storage;
 * their strings are heap copies released by the matching *_clear function.
 */
#ifndef ADVISOR_STORE_H
#define ADVISOR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pv.h"

struct store;

/* The schema version this build writes (migrations run on open). */
#define STORE_SCHEMA_VERSION 5

/* Open (creating when missing) the store at 'dir': a directory (its
 * advisor.db), sqlite:FILE, or a libpq URI postgresql://... or
 * postgres://... (store_pg.c; the schema is created in that database). A
 * newer schema than STORE_SCHEMA_VERSION is refused. Message in 'err' on
 * failure. */
pv_result store_open(const char *dir, struct store **out, char *err, size_t errlen) PV_WUR;

/* PostgreSQL: the handles a process opens on one location share at most
 * 'max' connections (store_pg_pool.c): a handle holds one only for a call,
 * a transaction or a session lock. A call that finds them all in use waits
 * up to 'wait_ms' for one, then fails. For pools made after the call
 * (before the first store_open of the location). */
#define STORE_PG_POOL_MAX 16
#define STORE_PG_POOL_WAIT_MS 30000
void store_set_connections(unsigned max, unsigned wait_ms);
/* store_open, but on PostgreSQL the handle has a connection of its own,
 * outside the pool and its bound: for a handle that others wait on while
 * they hold pooled connections (the group writer; the mapper's session
 * lock, held through a flush), so that no circle of waits can form. On
 * SQLite the same as store_open. */
pv_result store_open_own(const char *dir, struct store **out, char *err, size_t errlen) PV_WUR;
void store_close(struct store *s);
/* Where a store location points, for logs: never a password. */
void store_describe(const char *loc, char *buf, size_t len);
/* The last error message of this connection (for logs). */
const char *store_errmsg(const struct store *s);

/* Transactions. store_begin fails with PV_ERR_IO when the database is busy
 * past the busy timeout. store_rollback is a no-op outside a transaction. */
pv_result store_begin(struct store *s) PV_WUR;
pv_result store_commit(struct store *s) PV_WUR;
void store_rollback(struct store *s);
/* A read transaction: one consistent snapshot until store_commit or
 * store_rollback, without holding the write lock. */
pv_result store_begin_read(struct store *s) PV_WUR;

/* ---------------------------------------------------------------------------
 * Group commit
 *
 * With synchronous=FULL each commit waits for the disk; writes that arrive
 * together share one. store_group_write runs fn(st, arg) on the group's
 * writer thread, inside the group's next transaction and inside a
 * savepoint of its own: when fn fails its writes are undone and the others'
 * kept; when it succeeds its writes are durable once the call returns (the
 * group committed). fn must not begin or commit transactions itself. The
 * result is fn's, or the commit's failure.
 * ------------------------------------------------------------------------- */

struct store_group;
struct store_group *store_group_open(const char *dir, char *err, size_t errlen);
void store_group_close(struct store_group *g);
pv_result store_group_write(struct store_group *g, pv_result (*fn)(struct store *st, void *arg),
                            void *arg) PV_WUR;

/* ---------------------------------------------------------------------------
 * Blobs: content-addressed by the hex SHA-256 of their bytes
 * ------------------------------------------------------------------------- */

/* Store 'data' (idempotent); its digest into 'sha' (65 bytes). */
pv_result store_blob_put(struct store *s, const void *data, size_t len, char sha[65]) PV_WUR;
/* A new NUL-terminated copy of blob 'sha' (caller frees); NULL when absent. */
char *store_blob_get(struct store *s, const char *sha, size_t *len);

/* ---------------------------------------------------------------------------
 * Sandboxes
 * ------------------------------------------------------------------------- */

struct store_sandbox {
    int64_t id;
    char *name;
    char *token_sha256; /* hex SHA-256 of the sandbox's bearer token */
    char *credentials;  /* the credentials document (YAML/JSON text); "" none */
    char *boundary;     /* the auto-approval boundary policy; "" none */
    char *addresses;    /* JSON array of the proxy's registered addresses */
    int64_t created_ms;
};
void store_sandbox_clear(struct store_sandbox *sb);

/* PV_ERR_EXISTS when the name is taken. */
pv_result store_sandbox_create(struct store *s, struct store_sandbox *sb) PV_WUR;
/* PV_ERR_NOTFOUND when absent. */
pv_result store_sandbox_get(struct store *s, const char *name, struct store_sandbox *out) PV_WUR;
pv_result store_sandbox_get_id(struct store *s, int64_t id, struct store_sandbox *out) PV_WUR;
pv_result store_sandbox_update(struct store *s, const struct store_sandbox *sb) PV_WUR;
/* Removes the sandbox and everything it owns (its events stay). */
pv_result store_sandbox_delete(struct store *s, int64_t id) PV_WUR;
/* Calls 'fn' for each sandbox in name order. */
pv_result store_sandbox_each(struct store *s, void (*fn)(void *arg, const struct store_sandbox *sb),
                             void *arg) PV_WUR;

/* ---------------------------------------------------------------------------
 * Tool servers: host-side API servers registered for a sandbox (name, base
 * URL, the blob of their OpenAPI document); docs/advisor.md#tools
 * ------------------------------------------------------------------------- */

struct store_server {
    char *name;
    char *base_url;
    char *openapi_blob; /* sha256 of the OpenAPI document in blobs */
    int64_t created_ms;
};
void store_server_clear(struct store_server *sv);
/* Insert, or replace the server of the same name. */
pv_result store_server_put(struct store *s, int64_t sandbox, const struct store_server *sv) PV_WUR;
/* PV_ERR_NOTFOUND when absent. */
pv_result store_server_delete(struct store *s, int64_t sandbox, const char *name) PV_WUR;
/* Calls 'fn' for each server of the sandbox in name order. */
pv_result store_server_each(struct store *s, int64_t sandbox,
                            void (*fn)(void *arg, const struct store_server *sv), void *arg) PV_WUR;

/* ---------------------------------------------------------------------------
 * Settings: scope "" is global, otherwise a sandbox name
 * ------------------------------------------------------------------------- */

/* The JSON text of the value (caller frees), NULL when unset - or when the
 * read failed: a caller that must not take a failure for "unset" uses
 * store_setting_read. */
char *store_setting_get(struct store *s, const char *scope, const char *key);
/* The JSON text of the value in '*out' (caller frees; NULL when unset).
 * PV_ERR_IO when the store failed, with '*out' NULL. */
pv_result store_setting_read(struct store *s, const char *scope, const char *key,
                             char **out) PV_WUR;
pv_result store_setting_put(struct store *s, const char *scope, const char *key,
                            const char *json) PV_WUR;
/* PV_ERR_NOTFOUND when it was not set. */
pv_result store_setting_delete(struct store *s, const char *scope, const char *key) PV_WUR;

/* ---------------------------------------------------------------------------
 * Policy revisions
 *
 * A sandbox has base revisions (the operator's policy, numbered from 1) and
 * effective revisions (base + approved chunks, numbered from 1). Each holds
 * the blob digest of its canonical YAML and that YAML's policy hash.
 * ------------------------------------------------------------------------- */

struct store_revision {
    int64_t rev;
    int64_t base_rev; /* effective revisions: the base revision they build on */
    char *blob;       /* digest of the canonical YAML */
    char *hash;       /* model_policy_sha256 of the policy */
    char *cause;      /* what made it ("base", "approve <chunk>", ...) */
    int64_t created_ms;
};
void store_revision_clear(struct store_revision *r);

pv_result store_base_put(struct store *s, int64_t sandbox, struct store_revision *r) PV_WUR;
/* The newest base revision; PV_ERR_NOTFOUND when none. */
pv_result store_base_latest(struct store *s, int64_t sandbox, struct store_revision *out) PV_WUR;
/* Appends revision latest+1 (r->rev is set). */
pv_result store_rev_put(struct store *s, int64_t sandbox, struct store_revision *r) PV_WUR;
pv_result store_rev_latest(struct store *s, int64_t sandbox, struct store_revision *out) PV_WUR;
pv_result store_rev_get(struct store *s, int64_t sandbox, int64_t rev,
                        struct store_revision *out) PV_WUR;

/* A proxy reported it loaded (rev, hash). */
pv_result store_loaded_put(struct store *s, int64_t sandbox, int64_t rev, const char *hash,
                           int64_t at_ms) PV_WUR;
/* The newest loaded revision (0 when none). */
int64_t store_loaded_latest(struct store *s, int64_t sandbox);

/* ---------------------------------------------------------------------------
 * Proposal chunks
 * ------------------------------------------------------------------------- */

struct store_chunk {
    char *id;
    int64_t sandbox;
    int64_t draft_version;
    char *status; /* pending | approved | rejected | suspended */
    char *rule_name;
    char *proposed_rule; /* canonical JSON of the rule */
    char *rationale;
    char *security_notes;
    double confidence;
    int64_t created_ms;
    int64_t decided_ms; /* 0: undecided */
    char *host;
    int64_t port;
    char *binary;
    int64_t hit_count;
    int64_t first_seen_ms;
    int64_t last_seen_ms;
    char *validation_result;
    char *rejection_reason;
    char *application_error;
    char *review_token;
    char *current_hash;
    char *candidate_hash;
    char *analysis_mode; /* agent_authored | mechanistic */
    char *dedup_key;     /* mechanistic only: host|port|binary; "" otherwise */
    char *stage;
    char *evidence;       /* blob digest of the evidence document; "" none */
    int64_t approved_seq; /* approval order (0 when not approved) */
    int64_t approved_rev; /* the effective revision that first held it */
    bool auto_approved;
    char *decided_by; /* "" | reviewer | auto | supersede | reconcile | ... */
    /* The blob digest of the evidence the approval rested on ("" when
     * never approved); 'evidence' is the latest evaluation. A re-proof in a
     * new context is held against this one (docs/advisor.md#reproof). */
    char *approved_evidence;
    char *suspension_reason; /* why the chunk is suspended; "" otherwise */
};
void store_chunk_clear(struct store_chunk *c);

pv_result store_chunk_insert(struct store *s, const struct store_chunk *c) PV_WUR;
pv_result store_chunk_get(struct store *s, int64_t sandbox, const char *id,
                          struct store_chunk *out) PV_WUR;
/* Write every mutable field of 'c' when the stored status is still
 * 'expect_status' (compare-and-set); PV_ERR_CONFLICT when it is not. */
pv_result store_chunk_update(struct store *s, const struct store_chunk *c,
                             const char *expect_status) PV_WUR;
/* Chunks of a sandbox, oldest first; 'status' NULL for all. Calls 'fn' for
 * each; the record is only valid during the call. */
pv_result store_chunk_each(struct store *s, int64_t sandbox, const char *status,
                           void (*fn)(void *arg, const struct store_chunk *c), void *arg) PV_WUR;
/* Approved chunks in approval order. */
pv_result store_chunk_each_approved(struct store *s, int64_t sandbox,
                                    void (*fn)(void *arg, const struct store_chunk *c),
                                    void *arg) PV_WUR;
/* Chunks of a sandbox with this status, host, port and binary (indexed). */
pv_result store_chunk_each_key(struct store *s, int64_t sandbox, const char *status,
                               const char *host, int64_t port, const char *binary,
                               void (*fn)(void *arg, const struct store_chunk *c),
                               void *arg) PV_WUR;
/* The newest chunk with this dedup key (any status); PV_ERR_NOTFOUND. */
pv_result store_chunk_by_dedup(struct store *s, int64_t sandbox, const char *key,
                               struct store_chunk *out) PV_WUR;
int64_t store_chunk_max_draft(struct store *s, int64_t sandbox);
int64_t store_chunk_max_seq(struct store *s, int64_t sandbox);
/* Deletes the pending chunks of a sandbox; the count into *n. */
pv_result store_chunk_clear_pending(struct store *s, int64_t sandbox, int64_t *n) PV_WUR;

/* ---------------------------------------------------------------------------
 * Events: the decision log, append-only, numbered from 1
 * ------------------------------------------------------------------------- */

struct store_event {
    int64_t seq;
    int64_t ts_ms;
    char *sandbox; /* name; "" for global events */
    char *kind;    /* CONFIG:PROPOSED, CONFIG:APPROVED, ... */
    char *line;    /* the OCSF shorthand line */
    char *json;    /* the JSON form (with the inputs a replay needs) */
    char *record;  /* the sealed audit record (canonical JSON, docs/audit.md) */
    char *seal;    /* hex SHA-256 of 'record' (the next record's prev) */
};
void store_event_clear(struct store_event *e);

/* Appends as the next seq (MAX + 1 in this transaction); e->seq is set. */
pv_result store_event_append(struct store *s, struct store_event *e) PV_WUR;
/* The newest event's seq (0 when none) and seal into 'seal' (AUDIT_GENESIS
 * digits when none). Read inside the writing transaction, so a rolled-back
 * savepoint never leaves a stale head behind. */
pv_result store_event_head(struct store *s, int64_t *seq, char seal[65]) PV_WUR;
/* Seal event 'seq' written without a record (before schema 2): sets its
 * record and seal when it has none; PV_ERR_CONFLICT when it has one. */
pv_result store_event_set_record(struct store *s, int64_t seq, const char *record,
                                 const char *seal) PV_WUR;
/* The seal of event 'seq'; PV_ERR_NOTFOUND when absent. */
pv_result store_event_seal(struct store *s, int64_t seq, char seal[65]) PV_WUR;
/* Events with seq > 'after', oldest first, at most 'limit'. */
pv_result store_event_each(struct store *s, int64_t after, size_t limit,
                           void (*fn)(void *arg, const struct store_event *e), void *arg) PV_WUR;

/* ---------------------------------------------------------------------------
 * Replicas: several advisors on one PostgreSQL database (store_pg_repl.c,
 * docs/scale-out.md#replicas)
 *
 * Every write transaction's COMMIT sends NOTIFY STORE_CHANNEL with a
 * payload naming what changed: space-separated words, "state" always, then
 * "settings" when a setting changed, "sandbox:ID" for each sandbox
 * created, changed or deleted (its token, credentials, boundary) and
 * "sandboxes" when more changed than a payload names. A listener reports
 * "*" after it reconnected: notes may have been missed, anything may have
 * changed. On SQLite one process owns the store and nothing is sent.
 * ------------------------------------------------------------------------- */

#define STORE_CHANNEL "proviso_changed"
/* Session lock keys (store_try_lock); the writer and migration locks are
 * 7076001 and 7076002 (store_pg.c). */
#define STORE_LOCK_MAPPER 7076003

struct store_listener;
/* A LISTEN connection to the store at 'loc'; NULL with 'err' set on
 * failure, NULL with err "" when the store is not PostgreSQL. */
struct store_listener *store_listener_open(const char *loc, char *err, size_t errlen);
/* Wait up to 'timeout_ms' for notes; fn(arg, payload) for each that
 * arrived. A lost connection is opened again on the next call (fn then
 * gets "*"); PV_ERR_IO while the database cannot be reached. */
pv_result store_listener_wait(struct store_listener *l, int timeout_ms,
                              void (*fn)(void *arg, const char *payload), void *arg) PV_WUR;
void store_listener_close(struct store_listener *l);

/* Try to take session lock 'key' on this connection, without waiting:
 * '*got' says whether it is held now (until store_unlock or the end of
 * the session). SQLite: always got (one process owns the store). */
pv_result store_try_lock(struct store *s, int64_t key, bool *got) PV_WUR;
void store_unlock(struct store *s, int64_t key);

#endif
