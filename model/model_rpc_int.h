/* SPDX-License-Identifier: Apache-2.0 */
/* model_rpc_int.h - the JSON-RPC reader's two halves (model/ and its tests only)
 *
 * model_rpc.c holds the tree reader (jansson) and the public entry points;
 * model_rpc_scan.c the fast path that reads a body without building a
 * tree and hands back what it would have to decode. Both apply the rules
 * of docs/semantics.md#rpc-read; tests/fuzz/fuzz_rpc.c compares them.
 */
#ifndef MODEL_RPC_INT_H
#define MODEL_RPC_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model_rpc.h"

enum { SCAN_OK = 0, SCAN_REFUSED = 1, SCAN_FALLBACK = 2, SCAN_NOMEM = 3 };

struct model_rpc_scan_opts {
    bool mcp;    /* the endpoint's protocol is mcp */
    bool strict; /* strict_tool_names */
};

/* Read 'body' into 'out' (cleared first) without a tree: SCAN_OK (the
 * calls; ids not yet checked for uniqueness), SCAN_REFUSED (reason in
 * 'err'), SCAN_FALLBACK (the tree reader must decide: nothing in 'out'),
 * SCAN_NOMEM. */
int model_rpc_scan_body(const char *body, size_t len, const struct model_rpc_scan_opts *o,
                        struct model_rpc_calls *out, char *err, size_t errlen);
/* The tree reader alone (model_rpc_read_body tries the scanner first). */
pv_result model_rpc_read_body_tree(const char *body, size_t len, bool mcp, bool strict,
                                   struct model_rpc_calls *out, char *err, size_t errlen) PV_WUR;
/* A method or tool name policy may read (valid UTF-8 assumed): 1..256
 * bytes, no control or format character. */
bool model_rpc_name_ok(const char *s, size_t len);

#endif
