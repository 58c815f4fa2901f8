/* SPDX-License-Identifier: Apache-2.0 */
/* cli_replay.h - `proviso audit replay` and the prover it replays on
 *
 * Replay rebuilds, from an export, the exact /v1/prove (and /v1/check)
 * request behind every CONFIG:APPROVED record and asks a prover again.
 * Every question goes through one function, cli_prover_ask() (request JSON
 * in, answer JSON out); its backend today is HTTP, either to --prover URL
 * or to a private proviso-prover child this command starts on a free
 * loopback port. An in-process backend (the prover's request pipeline
 * linked into the command) can replace the child behind the same function.
 */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct cli_replay_opts {
    const char *file;
    const char *prover_url;        /* NULL: start a private proviso-prover */
    const char *prover_token_file; /* with prover_url */
    bool json;
    unsigned threads;              /* parallel questions, >= 1 */
};

/* Run the replay; the exit status (0 all same, 1 differ or violation,
 * 2 unreadable input, 3 no prover). */
int cli_replay(const struct cli_replay_opts *o);

/* The prover a replay asks. */
struct cli_prover;
/* Start a private proviso-prover (next to this executable, else on PATH)
 * on 127.0.0.1 with a fresh token handed over an inherited pipe; NULL and
 * 'err' when it does not become healthy. */
struct cli_prover *cli_prover_child(char *err, size_t errlen);
/* A running prover at 'url' with bearer 'token' (borrowed, copied). */
struct cli_prover *cli_prover_http(const char *url, const char *token);
/* Stops the child, if any. NULL is a no-op. */
void cli_prover_free(struct cli_prover *p);
/* A second connection to the same prover, for another thread (the child,
 * if any, stays owned by 'p'). */
struct cli_prover *cli_prover_clone(const struct cli_prover *p);
/* POST 'request' (borrowed) to 'path' ("/v1/prove", "/v1/check"): the
 * answer object (new reference), or NULL with 'err'. */
json_t *cli_prover_ask(struct cli_prover *p, const char *path, const json_t *request, char *err,
                       size_t errlen);

#endif
