/* SPDX-License-Identifier: Apache-2.0 */
/* cli_replay.h - `proviso audit replay` and the prover it replays on
 *
 * Replay rebuilds, from an export, the exact /v1/prove (and /v1/check)
 * request behind every CONFIG:APPROVED record and asks a prover again.
 * Every question goes through one function, cli_prover_ask() (request JSON
 * in, answer JSON out): in process by default - the prover service's own
 * request pipeline, prover_job_answer(), linked into the command, so the
 * answer is exactly what proviso-prover would say - or over HTTP to
 * --prover URL.
 */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct cli_replay_opts {
    const char *file;
    const char *prover_url;        /* NULL: the prover in process */
    const char *prover_token_file; /* with prover_url */
    bool json;
    unsigned threads; /* parallel questions, >= 1 */
};

/* Run the replay; the exit status (0 all same, 1 differ or violation,
 * 2 unreadable input, 3 no prover). */
int cli_replay(const struct cli_replay_opts *o);

/* The prover a replay asks. */
struct cli_prover;
/* The prover in process (a Z3 session of its own; one per thread). */
struct cli_prover *cli_prover_inprocess(void);
/* A running prover at 'url' with bearer 'token' (borrowed, copied). */
struct cli_prover *cli_prover_http(const char *url, const char *token);
/* NULL is a no-op. */
void cli_prover_free(struct cli_prover *p);
/* A second prover client for another thread: another connection to the
 * same URL, or another in-process session. */
struct cli_prover *cli_prover_clone(const struct cli_prover *p);
/* POST 'request' (borrowed) to 'path' ("/v1/prove", "/v1/check"): the
 * answer object (new reference), or NULL with 'err'. */
json_t *cli_prover_ask(struct cli_prover *p, const char *path, const json_t *request, char *err,
                       size_t errlen);

/* What `proviso audit verify` found recomputing the effective revisions
 * of an export (cli_recompute.c, docs/audit.md#state). */
struct cli_recompute {
    size_t recomputed; /* revision records whose hash the composition gives */
    size_t legacy;     /* revision records that cannot be recomputed: written
                        * before records named their base and chunks, or
                        * resting on records before a partial export */
    bool bad;          /* a record whose composition gives another hash */
    int64_t bad_seq;
    size_t bad_line;
    char reason[512];
};
/* Recompute every effective revision 'records' (the records of an export,
 * in order, borrowed) write, from the records and 'blobs' (sha256 -> text,
 * borrowed); 'partial': the export starts after record 1. Never fails:
 * the outcome is in 'out'. */
void cli_recompute(const json_t *records, const json_t *blobs, bool partial,
                   struct cli_recompute *out);

#endif
