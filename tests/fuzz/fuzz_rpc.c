/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_rpc.c - libFuzzer target: the JSON-RPC / MCP reader
 *
 * The first byte picks the reading: bit 0 mcp (else json-rpc), bit 1
 * strict_tool_names, bits 2-3 the HTTP method (POST, GET with an
 * event-stream Accept, DELETE, GET without it); the rest is the body.
 * Checked (docs/semantics.md#rpc-read): a refusal explains itself and
 * yields no call; every call read has a kind that fits the HTTP method and
 * the protocol, a method of 1..256 bytes without a control byte, a reserved
 * rpc. name only as the name of its transport call, a tool only on an mcp
 * tools/call (strict names when strict), an id exactly for requests and
 * responses, and no two requests of a batch with one id; the escaped
 * description of a call has no byte a log line could be forged with. A
 * POST body is also read by the tree reader alone (jansson): the fast
 * scanner (model_rpc_scan.c) must give the same answer and the same calls.
 *   ./tests/fuzz/fuzz_rpc -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_rpc.h"
#include "model/model_rpc_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n > MODEL_RPC_MAX_NAME) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F) {
            abort();
        }
    }
}

static void check_call(const struct model_rpc_call *c, bool mcp, bool strict, const char *http)
{
    char d[4 * MODEL_RPC_MAX_NAME * 2 + 64];
    size_t spaces = 0;

    check_name(c->method);
    switch (c->kind) {
    case MODEL_RPC_REQUEST:
    case MODEL_RPC_NOTIFICATION:
        if (strcmp(http, "POST") != 0 || strncmp(c->method, "rpc.", 4) == 0 ||
            (c->kind == MODEL_RPC_REQUEST) != (c->id[0] != '\0')) {
            abort();
        }
        break;
    case MODEL_RPC_RESPONSE:
        if (!mcp || strcmp(http, "POST") != 0 || strcmp(c->method, MODEL_RPC_M_RESPONSE) != 0 ||
            c->id[0] == '\0') {
            abort();
        }
        break;
    case MODEL_RPC_STREAM:
    case MODEL_RPC_END:
        if (!mcp || c->id[0] != '\0' || c->tool != NULL ||
            strcmp(c->method, c->kind == MODEL_RPC_STREAM ? MODEL_RPC_M_STREAM : MODEL_RPC_M_END) !=
                0 ||
            strcmp(http, c->kind == MODEL_RPC_STREAM ? "GET" : "DELETE") != 0) {
            abort();
        }
        break;
    default:
        abort();
    }
    if ((c->tool != NULL) != (mcp && strcmp(c->method, "tools/call") == 0)) {
        abort();
    }
    if (c->tool != NULL) {
        check_name(c->tool);
        if (strict && !model_rpc_tool_name_strict(c->tool, strlen(c->tool))) {
            abort();
        }
    }
    model_rpc_call_describe(c, d, sizeof(d));
    for (const char *p = d; *p != '\0'; p++) {
        if (*p == '[' || *p == ']' || *p == '=' || (unsigned char)*p < 0x20 ||
            (unsigned char)*p >= 0x7F) {
            abort();
        }
        spaces += *p == ' ';
    }
    if (spaces != (c->tool != NULL ? 3u : 1u)) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"POST", "GET", "DELETE", "GET"};
    struct model_rpc_http h;
    struct model_rpc_calls out;
    char err[256];
    pv_result r;

    if (size == 0) {
        return 0;
    }
    memset(&h, 0, sizeof(h));
    h.mcp = (data[0] & 1) != 0;
    h.strict_tools = (data[0] & 2) != 0;
    h.method = methods[(data[0] >> 2) & 3];
    h.accept = ((data[0] >> 2) & 3) == 1 ? "application/json, text/event-stream" : "*/*";
    h.body = (const char *)data + 1;
    h.body_len = size - 1;
    h.has_body = size > 1;
    err[0] = '\0';
    r = model_rpc_read(&h, &out, err, sizeof(err));
    if (strcmp(h.method, "POST") == 0) {
        struct model_rpc_calls ref;
        char rerr[256];
        pv_result rr = model_rpc_read_body_tree(h.body, h.body_len, h.mcp, h.strict_tools, &ref,
                                                rerr, sizeof(rerr));
        if (pv_ok(rr) != pv_ok(r) || ref.ncalls != out.ncalls || ref.batch != out.batch) {
            abort();
        }
        for (size_t i = 0; i < ref.ncalls; i++) {
            const struct model_rpc_call *a = &ref.calls[i];
            const struct model_rpc_call *b = &out.calls[i];
            if (a->kind != b->kind || strcmp(a->method, b->method) != 0 ||
                strcmp(a->id, b->id) != 0 || (a->tool == NULL) != (b->tool == NULL) ||
                (a->tool != NULL && strcmp(a->tool, b->tool) != 0)) {
                abort();
            }
        }
        model_rpc_calls_clear(&ref);
    }
    if (!pv_ok(r)) {
        if (err[0] == '\0' || out.ncalls != 0 || out.calls != NULL) {
            abort();
        }
        return 0;
    }
    if (out.ncalls == 0 || out.ncalls > MODEL_RPC_MAX_BATCH || (!out.batch && out.ncalls != 1)) {
        abort();
    }
    for (size_t i = 0; i < out.ncalls; i++) {
        check_call(&out.calls[i], h.mcp, h.strict_tools, h.method);
        for (size_t j = 0; j < i; j++) {
            if (out.calls[i].kind == MODEL_RPC_REQUEST && out.calls[j].kind == MODEL_RPC_REQUEST &&
                strcmp(out.calls[i].id, out.calls[j].id) == 0) {
                abort();
            }
        }
    }
    model_rpc_calls_clear(&out);
    return 0;
}
