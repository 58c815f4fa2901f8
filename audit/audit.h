/* SPDX-License-Identifier: Apache-2.0 */
/* audit.h - the advisor's tamper-evident decision record (docs/audit.md)
 *
 * One module for both sides of the chain: the advisor seals each event as
 * a record (canonical JSON, SHA-256, Ed25519 over the digest, linked to the
 * previous record) and exports records plus the blobs they reference as
 * JSONL; `proviso audit verify` re-derives every digest and signature from
 * the parsed file. Depends on common/, jansson and OpenSSL (libcrypto) only,
 * so the proviso command links it without the store or the HTTP server.
 *
 * Canonical JSON: json_dumps(JSON_COMPACT | JSON_SORT_KEYS |
 * JSON_ENSURE_ASCII) of the parsed object. A record's "hash" is the
 * SHA-256 of the canonical JSON of the record without "hash" and "sig";
 * "sig" is Ed25519 over "proviso-audit/1 record " + hash (hex); "prev" is
 * the SHA-256 of the canonical JSON of the whole previous record (with its
 * hash and sig), AUDIT_GENESIS for seq 1.
 */
#ifndef AUDIT_AUDIT_H
#define AUDIT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/pv.h"

#define AUDIT_FORMAT "proviso-audit/1"
#define AUDIT_GENESIS "0000000000000000000000000000000000000000000000000000000000000000"
/* base64 of a raw 32-byte Ed25519 public key, with its NUL. */
#define AUDIT_PUB_B64_LEN 45
/* The largest export verify and replay read. */
#define AUDIT_FILE_MAX (1024u * 1024u * 1024u)

/* ---------------------------------------------------------------------------
 * Keys
 * ------------------------------------------------------------------------- */

/* An Ed25519 key: a private (signing) key or a public one. */
struct audit_key;

/* The signing key in file 'path': created with O_CREAT|O_EXCL, mode 0600,
 * PEM, when missing; refused (NULL, reason in 'err') when it is readable or
 * writable by group or others, unreadable, or not an Ed25519 private key.
 * New key; caller frees with audit_key_free. */
struct audit_key *audit_key_open(const char *path, char *err, size_t errlen);
/* A public key from 'text' ('len' bytes, borrowed): a PEM public key or the
 * base64 of the raw 32 bytes (surrounding whitespace ignored). New key or
 * NULL with 'err'. */
struct audit_key *audit_key_public(const char *text, size_t len, char *err, size_t errlen);
/* The private key is wiped by OpenSSL on free. NULL is a no-op. */
void audit_key_free(struct audit_key *k);
/* The base64 of the raw public key into 'out'. */
pv_result audit_key_pub_b64(const struct audit_key *k, char out[AUDIT_PUB_B64_LEN]) PV_WUR;
/* The PEM public key (new string; caller frees), NULL on failure. */
char *audit_key_pub_pem(const struct audit_key *k);

/* ---------------------------------------------------------------------------
 * Records
 * ------------------------------------------------------------------------- */

/* The canonical JSON of 'j' (borrowed); new string, caller frees. */
char *audit_canonical(const json_t *j);
/* Hex SHA-256 of 'len' bytes. */
void audit_sha256_hex(const void *data, size_t len, char out[65]);

/* Seal 'obj' (borrowed, modified): remove any "hash"/"sig", set "hash" to
 * the digest of its canonical form and "sig" to the signature of
 * "proviso-audit/1 <what> <hash>"; the digest of the sealed object's
 * canonical form into 'seal' (the next record's "prev") and, when 'sealed'
 * is not NULL, that canonical form itself (new string, caller frees).
 * 'what' is "record" or "header". PV_ERR_NOMEM, PV_ERR_INTERNAL (signing). */
pv_result audit_seal(const struct audit_key *k, const char *what, json_t *obj, char seal[65],
                     char **sealed) PV_WUR;

/* True when 'text' is a sealed object (a record or a header, as 'what')
 * whose hash matches its content and whose signature key 'k' made. */
bool audit_signed_by(const struct audit_key *k, const char *what, const char *text);

/* The blob digests 'data' (borrowed) references: every string member
 * whose key ends in "_blob" and holds 64 hex digits, anywhere in it. New
 * sorted, duplicate-free array of strings. */
json_t *audit_blob_refs(const json_t *data);

/* base64 (no line breaks) of 'len' bytes; new string, caller frees. */
char *audit_b64(const void *data, size_t len);
/* Decode base64 'text'; new buffer (NUL-terminated, length in 'len'),
 * NULL when it is not base64. Caller frees. */
unsigned char *audit_unb64(const char *text, size_t *len);

/* ---------------------------------------------------------------------------
 * Verification
 * ------------------------------------------------------------------------- */

enum audit_status { AUDIT_INTACT, AUDIT_TAMPERED, AUDIT_UNREADABLE };

struct audit_report {
    enum audit_status status;
    size_t records;
    size_t blobs;
    int64_t first_seq; /* 0 when there are no records */
    int64_t last_seq;
    char head[65]; /* seal of the last record */
    /* The first bad record (status TAMPERED): its seq (0 for the header or
     * a line that is not a record), its line number and why. */
    int64_t bad_seq;
    size_t bad_line;
    char reason[512];
    /* The header carried the store's state and the records (a whole
     * chain) were compared with it (docs/audit.md#state). */
    bool state_checked;
};

/* Verify the export in 'buf' ('len' bytes, borrowed) against the key the
 * auditor trusts: header, every record's sequence, prev link and hash,
 * every referenced blob's presence and digest, and the signatures: the
 * header's and the last record's (which, through the prev links, cover
 * every earlier record and signature), or every record's with 'every_sig'
 * and whenever anything failed (to name the first bad record). Signatures
 * are checked on up to 'threads' threads. Never fails: the outcome is in
 * 'out'. */
void audit_verify(const char *buf, size_t len, const struct audit_key *trusted, unsigned threads,
                  bool every_sig, struct audit_report *out);

/* Read an export for replay, without verifying it: the record objects in
 * file order into 'records' and the blobs (sha256 -> decoded text, as JSON
 * strings) into 'blobs' (new references). PV_ERR_PARSE with 'err'
 * ("line N: ...") on a malformed line. */
pv_result audit_load(const char *buf, size_t len, json_t **records, json_t **blobs, char *err,
                     size_t errlen) PV_WUR;

/* ---------------------------------------------------------------------------
 * The state a chain implies (audit_state.c, docs/audit.md#state)
 * ------------------------------------------------------------------------- */

/* True when record 'rec' (borrowed) writes an effective revision: a
 * CONFIG:CREATED, APPROVED, REMOVED, MERGED, RESOLVED or SUSPENDED record
 * whose data carries "version" (> 0) and "hash". */
bool audit_record_writes_revision(const json_t *rec);
/* The digest an approved chunk's rule is bound by: SHA-256 of 'name', a
 * newline and the canonical JSON of 'rule' (borrowed); "" when out of
 * memory. The state's "rules" (per sandbox, approved chunk id -> digest)
 * hold it on both sides. */
void audit_rule_digest(const json_t *rule, const char *name, char out[65]);
/* An empty implied state (new reference; NULL when out of memory). */
json_t *audit_state_new(void);
/* Fold record 'rec' (borrowed), the next one in sequence order, into
 * 'state': per sandbox the last revision-writing record's version, hash
 * and seq; per chunk the status its last record implies (PROPOSED
 * pending, APPROVED approved, REJECTED rejected, SUSPENDED suspended,
 * REMOVED by undo pending, REMOVED by clear: every pending chunk
 * "deleted"); DELETED drops the sandbox. PV_ERR_NOMEM. */
pv_result audit_state_fold(json_t *state, const json_t *rec) PV_WUR;
/* One disagreement: 'chunk' NULL for the sandbox's revision or existence;
 * 'seq' the record behind the chain's side (0: none). Strings borrowed. */
typedef void (*audit_disagree_fn)(void *arg, const char *sandbox, const char *chunk,
                                  const char *store_says, const char *chain_says, int64_t seq);
/* Compare 'implied' (from audit_state_fold) with 'actual' (the store's:
 * {"<sandbox>": {"version", "hash", "chunks": {"<id>": "<status>"}}});
 * calls 'fn' (may be NULL) once per disagreement and returns their count.
 * A chunk the chain says was deleted may be absent from the store. */
size_t audit_state_compare(const json_t *implied, const json_t *actual, audit_disagree_fn fn,
                           void *arg);
/* The header (line 1) of export 'buf' ('len' bytes, borrowed), parsed but
 * not verified: new reference, NULL when line 1 is not a JSON object. */
json_t *audit_header(const char *buf, size_t len);

#endif
