/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_rpc.c - JSON-RPC and MCP: the reader and the evaluator
 *
 * The reader (model_rpc_read) on well-formed and adversarial requests:
 * what it reads (kind, method, tool, id) and what it refuses
 * (docs/semantics.md#rpc-read). The evaluator on one call at a time under
 * the policies below (docs/semantics.md#rpc-rules, #rpc-profile,
 * #rpc-deny), and the validator's call-rule messages (#rpc-validation).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_rpc.h"

/* ---------------------------------------------------------------------------
 * The reader
 * ------------------------------------------------------------------------- */

struct read_case {
    const char *name;
    bool mcp, strict;
    const char *method; /* HTTP */
    const char *accept;
    const char *body; /* NULL: none */
    bool ok;
    size_t ncalls;
    const char *first; /* "kind method [tool] id" of the first call, or the error's substring */
};

static const struct read_case read_cases[] = {
    {"request", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", true, 1, "request tools/list - 1"},
    {"tool call", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/"
     "call\",\"params\":{\"name\":\"gh.search\","
     "\"arguments\":{\"q\":1}}}",
     true, 1, "request tools/call gh.search \"a\""},
    {"tool notification", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}", true, 1,
     "notification tools/call x "},
    {"response", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}", true, 1,
     "response rpc.response - 9"},
    {"error response", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-1,\"message\":\"no\"}}", true, 1,
     "response rpc.response - 9"},
    {"batch", true, true, "POST", NULL,
     "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":"
     "\"notifications/initialized\"}]",
     true, 2, "request ping - 1"},
    {"stream", true, true, "GET", "application/json, Text/Event-Stream;q=0.9", NULL, true, 1,
     "stream rpc.stream - "},
    {"end", true, true, "DELETE", NULL, NULL, true, 1, "end rpc.end - "},
    {"stream of weight zero", true, true, "GET", "text/event-stream;q=0", NULL, false, 0,
     "carries no MCP call"},
    {"stream of weight 0.000", true, true, "GET", "text/event-stream; Q=0.000, */*", NULL, false, 0,
     "carries no MCP call"},
    {"stream of weight 0.5", true, true, "GET", "text/event-stream;q=0.5", NULL, true, 1,
     "stream rpc.stream - "},
    /* a tool name a case-folding server would read elsewhere (the scanner,
     * and the tree reader after an escaped member name) */
    {"params NAME beside name", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"gh_search\","
     "\"NAME\":\"drop_db\"}}",
     false, 0, "in other letter case"},
    {"params Name alone", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{\"Name\":\"drop_db\"},\"method\":\"tools/call\"}",
     false, 0, "in other letter case"},
    {"params escaped nAME (tree reader)", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
     "\"n\\u0041ME\":\"b\"}}",
     false, 0, "in other letter case"},
    {"params name and names pass", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
     "\"names\":1,\"arguments\":{\"Name\":2}}}",
     true, 1, "request tools/call a 1"},
    {"json-rpc array params", false, false, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\",\"params\":[1]}", true, 1,
     "request eth_call - 1"},
    {"json-rpc tools/call has no tool", false, false, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", true, 1,
     "request tools/call - 1"},
    /* refused */
    {"duplicate key", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":\"tools/call\"}", false, 0,
     "duplicate"},
    {"nested duplicate key", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"name\":"
     "\"b\"}}",
     false, 0, "duplicate"},
    {"byte order mark", true, true, "POST", NULL,
     "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", false, 0, "invalid JSON"},
    {"trailing", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}x",
     false, 0, "invalid JSON"},
    {"invalid utf-8", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}", false, 0, "invalid JSON"},
    {"NUL escape", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\\u0000x\"}", false, 0, "invalid JSON"},
    {"version", true, true, "POST", NULL, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
     false, 0, "\"2.0\""},
    {"null id", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
     false, 0, "'id'"},
    {"bool id", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
     false, 0, "'id'"},
    {"float id", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}",
     false, 0, "'id'"},
    {"object id", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
     false, 0, "'id'"},
    {"shared id", true, true, "POST", NULL,
     "[{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":\"x\","
     "\"method\":\"tools/list\"}]",
     false, 0, "share the id"},
    {"reserved", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"rpc.response\"}", false, 0, "reserved"},
    {"control char", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\\n\"}", false, 0, "control"},
    {"bidi override", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
     "\"a\\u202eb\"}}",
     false, 0, "control or format"},
    {"zero width space", true, false, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
     "\"a\\u200bb\"}}",
     false, 0, "control or format"},
    {"strict name", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a b\"}}",
     false, 0, "strict_tool_names"},
    {"tool without name", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"tool\":\"x\"}}", false,
     0, "params.name"},
    {"tool name number", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":7}}", false, 0,
     "params.name"},
    {"arguments array", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
     "\"arguments\":[]}}",
     false, 0, "arguments"},
    {"mcp array params", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", false, 0, "'params'"},
    {"string params", false, false, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":\"s\"}", false, 0, "'params'"},
    {"unknown member", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"tool\":\"x\"}", false, 0,
     "unknown member"},
    {"method and result", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"result\":1}", false, 0, "both"},
    {"result and error", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"m\"}}", false,
     0, "both"},
    {"response without id", true, true, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"result\":1}", false,
     0, "without an id"},
    {"bad error", true, true, "POST", NULL,
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"x\",\"message\":\"m\"}}", false, 0,
     "integer code"},
    {"json-rpc response", false, false, "POST", NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}",
     false, 0, "response frames"},
    {"empty batch", true, true, "POST", NULL, "[]", false, 0, "empty batch"},
    {"nested batch", true, true, "POST", NULL, "[[{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}]]",
     false, 0, "batch item 1"},
    {"batch item", true, true, "POST", NULL,
     "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\"}]", false, 0,
     "batch item 2"},
    {"empty body", true, true, "POST", NULL, "", false, 0, "invalid JSON"},
    {"GET without accept", true, true, "GET", "*/*", NULL, false, 0, "text/event-stream"},
    {"GET on json-rpc", false, false, "GET", "text/event-stream", NULL, false, 0, "no JSON-RPC"},
    {"DELETE on json-rpc", false, false, "DELETE", NULL, NULL, false, 0, "no JSON-RPC"},
    {"PUT", true, true, "PUT", NULL, "{}", false, 0, "no JSON-RPC"},
};

static void describe(const struct model_rpc_call *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s %s %s", model_rpc_kind_name(c->kind), c->method,
             c->tool != NULL ? c->tool : "-", c->id);
}

START_TEST(test_read)
{
    const struct read_case *t = &read_cases[_i];
    struct model_rpc_http h;
    struct model_rpc_calls out;
    char err[256];
    char got[512];
    pv_result r;

    memset(&h, 0, sizeof(h));
    h.mcp = t->mcp;
    h.strict_tools = t->strict;
    h.method = t->method;
    h.accept = t->accept;
    h.has_body = t->body != NULL && t->body[0] != '\0';
    h.body = t->body;
    h.body_len = t->body != NULL ? strlen(t->body) : 0;
    r = model_rpc_read(&h, &out, err, sizeof(err));
    ck_assert_msg(pv_ok(r) == t->ok, "%s: ok %d, want %d (%s)", t->name, pv_ok(r), t->ok, err);
    if (t->ok) {
        ck_assert_uint_eq(out.ncalls, t->ncalls);
        describe(&out.calls[0], got, sizeof(got));
        if (strncmp(t->first, "notification", 12) == 0 || strncmp(t->first, "stream", 6) == 0 ||
            strncmp(t->first, "end", 3) == 0) {
            /* no id: the expectation ends with the separator */
            ck_assert_msg(strncmp(got, t->first, strlen(t->first)) == 0, "%s: got [%s]", t->name,
                          got);
        } else {
            ck_assert_msg(strcmp(got, t->first) == 0, "%s: got [%s] want [%s]", t->name, got,
                          t->first);
        }
    } else {
        ck_assert_msg(strstr(err, t->first) != NULL, "%s: error [%s] lacks [%s]", t->name, err,
                      t->first);
        ck_assert_uint_eq(out.ncalls, 0);
    }
    model_rpc_calls_clear(&out);
}
END_TEST

/* The HTTP fields the reader judges besides the body: the Content-Type's
 * charset (a server decodes the body in it) and an Upgrade. */
static const struct {
    const char *ctype;
    bool upgrade;
    bool ok;
    const char *why;
} field_cases[] = {
    {NULL, false, true, NULL},
    {"application/json", false, true, NULL},
    {"application/json; charset=UTF-8", false, true, NULL},
    {"application/json; charset=\"utf8\"", false, true, NULL},
    {"text/plain; charset=us-ascii", false, true, NULL},
    {"application/json; charset=utf-7", false, false, "charset utf-7"},
    {"application/json; charset=UTF-7-IMAP", false, false, "charset utf-7-imap"},
    {"application/json; charset=utf-16le", false, false, "charset utf-16le"},
    {"application/json; charset=utf-8; charset=utf-7", false, false, "names a parameter twice"},
    {"application/json; x=\"charset=utf-8\"; charset=utf-7", false, false, "charset utf-7"},
    {"application/json; charset", false, false, "does not parse"},
    {"json", false, false, "does not parse"},
    {"application/json", true, false, "with Upgrade"},
};

START_TEST(test_http_fields)
{
    static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    struct model_rpc_http h;
    struct model_rpc_calls out;
    char err[256] = "";
    pv_result r;

    memset(&h, 0, sizeof(h));
    h.mcp = true;
    h.strict_tools = true;
    h.method = "POST";
    h.content_type = field_cases[_i].ctype;
    h.upgrade = field_cases[_i].upgrade;
    h.has_body = true;
    h.body = body;
    h.body_len = strlen(body);
    r = model_rpc_read(&h, &out, err, sizeof(err));
    ck_assert_msg(pv_ok(r) == field_cases[_i].ok, "%s: ok %d (%s)",
                  field_cases[_i].ctype != NULL ? field_cases[_i].ctype : "(none)", pv_ok(r), err);
    if (!field_cases[_i].ok) {
        ck_assert_msg(strstr(err, field_cases[_i].why) != NULL, "error [%s] lacks [%s]", err,
                      field_cases[_i].why);
        ck_assert_uint_eq(out.ncalls, 0);
    }
    model_rpc_calls_clear(&out);
}
END_TEST

/* A batch over the limit, and one at it. */
START_TEST(test_batch_limit)
{
    char *body = malloc(64 * 300);
    struct model_rpc_calls out;
    char err[256];
    size_t n = 0;

    ck_assert_ptr_nonnull(body);
    for (int k = 0; k <= 1; k++) {
        size_t count = k == 0 ? MODEL_RPC_MAX_BATCH : MODEL_RPC_MAX_BATCH + 1;
        n = 0;
        body[n++] = '[';
        for (size_t i = 0; i < count; i++) {
            n += (size_t)snprintf(body + n, 64,
                                  "%s{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"p\"}",
                                  i > 0 ? "," : "", i);
        }
        body[n++] = ']';
        ck_assert_int_eq(pv_ok(model_rpc_read_body(body, n, true, true, &out, err, sizeof(err))),
                         k == 0);
        model_rpc_calls_clear(&out);
    }
    /* nesting over the depth bound */
    n = 0;
    n += (size_t)snprintf(body, 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\",\"params\":");
    for (int i = 0; i < 70; i++) {
        n += (size_t)snprintf(body + n, 8, "{\"a\":");
    }
    body[n++] = '1';
    for (int i = 0; i < 70; i++) {
        body[n++] = '}';
    }
    body[n++] = '}';
    ck_assert(!pv_ok(model_rpc_read_body(body, n, true, true, &out, err, sizeof(err))));
    ck_assert_ptr_nonnull(strstr(err, "deeper"));
    free(body);
}
END_TEST

START_TEST(test_escape)
{
    char buf[128];
    struct model_rpc_call c;

    memset(&c, 0, sizeof(c));
    c.kind = MODEL_RPC_REQUEST;
    c.method = "tools/call";
    c.tool = "a b=[c]\"\\";
    model_rpc_call_describe(&c, buf, sizeof(buf));
    ck_assert_str_eq(buf, "request tools/call tool a\\x20b\\x3D\\x5Bc\\x5D\\x22\\x5C");
    ck_assert(model_rpc_tool_name_strict("gh.search-1_x", 13));
    ck_assert(!model_rpc_tool_name_strict("a b", 3));
    ck_assert(!model_rpc_tool_name_strict("", 0));
    ck_assert(model_rpc_mcp_known("tools/call"));
    ck_assert(model_rpc_mcp_known("rpc.stream"));
    ck_assert(!model_rpc_mcp_known("sampling/createMessage"));
    ck_assert(!model_rpc_mcp_known("x/ext"));
}
END_TEST

/* ---------------------------------------------------------------------------
 * The evaluator
 * ------------------------------------------------------------------------- */

static const char pol[] = "version: 1\n"
                          "network_policies:\n"
                          "  m:\n"
                          "    endpoints:\n"
                          "      - host: profile.example.com\n"
                          "        port: 443\n"
                          "        path: /mcp\n"
                          "        protocol: mcp\n"
                          "        enforcement: enforce\n"
                          "        mcp: {allow_all_known_mcp_methods: true}\n"
                          "        rules:\n"
                          "          - allow: {tool: 'gh_*'}\n"
                          "          - allow: {params: {name: {any: [create_issue, 'x.*']}}}\n"
                          "        deny_rules:\n"
                          "          - {tool: 'gh_delete*'}\n"
                          "          - {method: rpc.end}\n"
                          "      - host: plain.example.com\n"
                          "        port: 443\n"
                          "        protocol: mcp\n"
                          "        enforcement: enforce\n"
                          "        rules:\n"
                          "          - allow: {method: initialize}\n"
                          "          - allow: {method: 'tools/*'}\n"
                          "          - allow: {method: x/ext}\n"
                          "      - host: open.example.com\n"
                          "        port: 443\n"
                          "        protocol: mcp\n"
                          "        enforcement: enforce\n"
                          "        mcp: {allow_all_known_mcp_methods: true}\n"
                          "        rules:\n"
                          "          - allow: {}\n"
                          "        deny_rules:\n"
                          "          - {method: tools/call, tool: '*'}\n"
                          "      - host: rpc.example.com\n"
                          "        port: 443\n"
                          "        protocol: json-rpc\n"
                          "        enforcement: enforce\n"
                          "        rules:\n"
                          "          - allow: {method: eth_call}\n"
                          "        deny_rules:\n"
                          "          - {method: eth_sign}\n"
                          "      - host: star.example.com\n"
                          "        port: 443\n"
                          "        protocol: json-rpc\n"
                          "        enforcement: enforce\n"
                          "        rules:\n"
                          "          - allow: {method: '*'}\n"
                          "        deny_rules:\n"
                          "          - {method: eth_sign}\n"
                          "      - host: audit.example.com\n"
                          "        port: 443\n"
                          "        protocol: mcp\n"
                          "        enforcement: audit\n"
                          "        rules:\n"
                          "          - allow: {method: tools/list}\n"
                          "    binaries:\n"
                          "      - path: /usr/bin/node\n";

struct eval_case {
    const char *name;
    const char *host;
    const char *http; /* HTTP method */
    const char *path;
    const char *kind; /* NULL: no call */
    const char *method;
    const char *tool;
    bool allow;
    enum model_reason reason;
};

static const struct eval_case eval_cases[] = {
    {"profile method", "profile.example.com", "POST", "/mcp", "request", "tools/list", NULL, true,
     MODEL_REASON_ALLOWED},
    {"profile notification", "profile.example.com", "POST", "/mcp", "notification",
     "notifications/initialized", NULL, true, MODEL_REASON_ALLOWED},
    {"profile excludes extensions", "profile.example.com", "POST", "/mcp", "request", "x/ext", NULL,
     false, MODEL_REASON_L7_NOT_PERMITTED},
    {"profile excludes server methods", "profile.example.com", "POST", "/mcp", "request",
     "sampling/createMessage", NULL, false, MODEL_REASON_L7_NOT_PERMITTED},
    {"narrowed: rule tool", "profile.example.com", "POST", "/mcp", "request", "tools/call",
     "gh_search", true, MODEL_REASON_ALLOWED},
    {"narrowed: glob crosses dots", "profile.example.com", "POST", "/mcp", "request", "tools/call",
     "x.y.z", true, MODEL_REASON_ALLOWED},
    {"narrowed: any", "profile.example.com", "POST", "/mcp", "request", "tools/call",
     "create_issue", true, MODEL_REASON_ALLOWED},
    {"narrowed: other tool", "profile.example.com", "POST", "/mcp", "request", "tools/call", "drop",
     false, MODEL_REASON_L7_NOT_PERMITTED},
    {"narrowed: notification too", "profile.example.com", "POST", "/mcp", "notification",
     "tools/call", "drop", false, MODEL_REASON_L7_NOT_PERMITTED},
    {"deny tool wins", "profile.example.com", "POST", "/mcp", "request", "tools/call",
     "gh_delete_repo", false, MODEL_REASON_L7_DENY_RULE},
    {"profile response", "profile.example.com", "POST", "/mcp", "response", NULL, NULL, true,
     MODEL_REASON_ALLOWED},
    {"profile stream", "profile.example.com", "GET", "/mcp", "stream", NULL, NULL, true,
     MODEL_REASON_ALLOWED},
    {"deny rpc.end", "profile.example.com", "DELETE", "/mcp", "end", NULL, NULL, false,
     MODEL_REASON_L7_DENY_RULE},
    {"stream by POST", "profile.example.com", "POST", "/mcp", "stream", NULL, NULL, false,
     MODEL_REASON_RPC_BAD_METHOD},
    {"request by GET", "profile.example.com", "GET", "/mcp", "request", "tools/list", NULL, false,
     MODEL_REASON_RPC_BAD_METHOD},
    {"no call", "profile.example.com", "POST", "/mcp", NULL, NULL, NULL, false,
     MODEL_REASON_RPC_NO_CALL},
    {"outside the path scope", "profile.example.com", "POST", "/other", "request", "tools/list",
     NULL, false, MODEL_REASON_NO_L7_PATH},
    {"plain: exact", "plain.example.com", "POST", "/", "request", "initialize", NULL, true,
     MODEL_REASON_ALLOWED},
    {"plain: tools glob", "plain.example.com", "POST", "/", "request", "tools/call", "anything",
     true, MODEL_REASON_ALLOWED},
    {"plain: extension by rule", "plain.example.com", "POST", "/", "request", "x/ext", NULL, true,
     MODEL_REASON_ALLOWED},
    {"plain: ping needs a rule", "plain.example.com", "POST", "/", "request", "ping", NULL, false,
     MODEL_REASON_L7_NOT_PERMITTED},
    {"plain: no response without rule", "plain.example.com", "POST", "/", "response", NULL, NULL,
     false, MODEL_REASON_L7_NOT_PERMITTED},
    {"plain: no stream without rule", "plain.example.com", "GET", "/", "stream", NULL, NULL, false,
     MODEL_REASON_L7_NOT_PERMITTED},
    {"open: empty rule is the profile", "open.example.com", "POST", "/", "request",
     "resources/read", NULL, true, MODEL_REASON_ALLOWED},
    {"open: not an extension", "open.example.com", "POST", "/", "request", "x/ext", NULL, false,
     MODEL_REASON_L7_NOT_PERMITTED},
    {"open: deny any tool", "open.example.com", "POST", "/", "request", "tools/call", "a.b", false,
     MODEL_REASON_L7_DENY_RULE},
    {"json-rpc exact", "rpc.example.com", "POST", "/", "request", "eth_call", NULL, true,
     MODEL_REASON_ALLOWED},
    {"json-rpc exact is case-sensitive", "rpc.example.com", "POST", "/", "request", "Eth_call",
     NULL, false, MODEL_REASON_L7_NOT_PERMITTED},
    {"json-rpc no response", "rpc.example.com", "POST", "/", "response", NULL, NULL, false,
     MODEL_REASON_RPC_BAD_METHOD},
    {"json-rpc star", "star.example.com", "POST", "/", "notification", "anything", NULL, true,
     MODEL_REASON_ALLOWED},
    {"json-rpc deny beside star", "star.example.com", "POST", "/", "request", "eth_sign", NULL,
     false, MODEL_REASON_L7_DENY_RULE},
    {"audit grants every call", "audit.example.com", "POST", "/", "request", "tools/call", "x",
     true, MODEL_REASON_AUDIT},
};

static struct model_policy *load(const char *yaml)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("p.yaml", yaml, strlen(yaml), MODEL_FMT_AUTO, d);

    ck_assert_msg(p != NULL, "%s", model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?");
    model_diags_free(d);
    return p;
}

/* The request line of row 't' (its host, HTTP method and path; no call),
 * by /usr/bin/node. */
static struct model_request case_request(const struct eval_case *t)
{
    static const char *const bins[] = {"/usr/bin/node"};
    struct model_request r;

    memset(&r, 0, sizeof(r));
    r.binaries = bins;
    r.nbinaries = 1;
    r.host = t->host;
    r.host_len = strlen(t->host);
    r.port = 443;
    r.method = t->http;
    r.target = t->path;
    r.target_len = strlen(t->path);
    return r;
}

/* The call of row 't' (t->kind non-NULL); transport kinds take their
 * reserved method names. */
static struct model_rpc_call case_call(const struct eval_case *t)
{
    struct model_rpc_call call;

    memset(&call, 0, sizeof(call));
    ck_assert(model_rpc_kind_parse(t->kind, &call.kind));
    call.method = call.kind == MODEL_RPC_RESPONSE ? MODEL_RPC_M_RESPONSE
                  : call.kind == MODEL_RPC_STREAM ? MODEL_RPC_M_STREAM
                  : call.kind == MODEL_RPC_END    ? MODEL_RPC_M_END
                                                  : t->method;
    call.tool = t->tool;
    return call;
}

START_TEST(test_eval)
{
    const struct eval_case *t = &eval_cases[_i];
    static struct model_policy *p;
    struct model_rpc_call call;
    struct model_request r = case_request(t);
    struct model_decision d;

    if (p == NULL) {
        p = load(pol);
    }
    if (t->kind != NULL) {
        call = case_call(t);
        r.rpc = &call;
    }
    model_decide(p, &r, &d);
    ck_assert_msg(d.allow == t->allow && d.reason == t->reason,
                  "%s: allow %d reason %s, want %d %s (%s)", t->name, d.allow,
                  model_reason_name(d.reason), t->allow, model_reason_name(t->reason), d.detail);
}
END_TEST

/* model_decide_calls, which reads the request once for all its calls,
 * gives each call the decision model_decide gives it alone: every call of
 * the table is decided under each request line of the table. */
struct calls_seen {
    const struct model_decision *want;
    size_t n;
};

static void calls_each(void *arg, size_t i, const struct model_decision *d)
{
    struct calls_seen *x = arg;
    const struct model_decision *w = &x->want[i];

    ck_assert_uint_eq(i, x->n);
    x->n++;
    ck_assert_msg(d->allow == w->allow && d->grant == w->grant && d->reason == w->reason &&
                      d->route == w->route && d->rule == w->rule && d->endpoint == w->endpoint &&
                      d->binary == w->binary && strcmp(d->detail, w->detail) == 0,
                  "call %zu: %d %s '%s', alone %d %s '%s'", i, d->allow,
                  model_reason_name(d->reason), d->detail, w->allow, model_reason_name(w->reason),
                  w->detail);
}

START_TEST(test_decide_calls)
{
    enum { N = sizeof(eval_cases) / sizeof(eval_cases[0]) };
    struct model_policy *p = load(pol);
    struct model_rpc_call calls[N];
    struct model_decision want[N];
    size_t n = 0;

    memset(calls, 0, sizeof(calls));
    for (size_t i = 0; i < N; i++) {
        if (eval_cases[i].kind != NULL) {
            calls[n++] = case_call(&eval_cases[i]);
        }
    }
    ck_assert_uint_gt(n, 10);
    for (size_t j = 0; j < N; j++) {
        struct model_request r = case_request(&eval_cases[j]);
        struct calls_seen seen = {want, 0};
        for (size_t i = 0; i < n; i++) {
            r.rpc = &calls[i];
            model_decide(p, &r, &want[i]);
        }
        r.rpc = NULL;
        model_decide_calls(p, &r, calls, n, calls_each, &seen);
        ck_assert_uint_eq(seen.n, n);
    }
    /* a request the policy does not reach: every call gets its denial */
    {
        struct model_request r = case_request(&eval_cases[0]);
        struct calls_seen seen = {want, 0};
        r.host = "bad host";
        r.host_len = strlen(r.host);
        for (size_t i = 0; i < n; i++) {
            r.rpc = &calls[i];
            model_decide(p, &r, &want[i]);
            ck_assert(!want[i].allow);
        }
        model_decide_calls(p, &r, calls, n, calls_each, &seen);
        ck_assert_uint_eq(seen.n, n);
    }
    model_policy_free(p);
}
END_TEST

/* ---------------------------------------------------------------------------
 * The validator
 * ------------------------------------------------------------------------- */

struct val_case {
    const char *name;
    const char *endpoint; /* YAML lines after "      - " at endpoint indent */
    const char *want;     /* substring of the first message; NULL: loads */
};

static const struct val_case val_cases[] = {
    {"mcp star method", "protocol: mcp\n        rules: [{allow: {method: '*'}}]",
     "only valid for the tools/ method family"},
    {"mcp method required", "protocol: mcp\n        rules: [{allow: {}}]",
     "required when mcp.allow_all_known_mcp_methods is false"},
    {"mcp empty allow under the profile",
     "protocol: mcp\n        mcp: {allow_all_known_mcp_methods: true}\n        rules: [{allow: "
     "{}}]",
     NULL},
    {"mcp tool needs tools/call",
     "protocol: mcp\n        rules: [{allow: {method: ping, tool: x}}]", "must be tools/call"},
    {"mcp tool and params.name",
     "protocol: mcp\n        rules: [{allow: {tool: x, params: {name: y}}}]", "not both"},
    {"mcp params key", "protocol: mcp\n        rules: [{allow: {tool: x, params: {q: 1}}}]",
     "params.q: MCP tool argument matching"},
    {"mcp params.name any empty",
     "protocol: mcp\n        rules: [{allow: {params: {name: {any: []}}}}]",
     "list must not be empty"},
    {"mcp wildcard needs strict",
     "protocol: mcp\n        mcp: {strict_tool_names: false}\n        rules: [{allow: {tool: "
     "'a*'}}]",
     "require mcp.strict_tool_names"},
    {"mcp conflict brace",
     "protocol: mcp\n        rules: [{allow: {tool: x}}, {allow: {method: 'tools/{call,list}'}}]",
     "allows every tool call"},
    {"mcp conflict deny",
     "protocol: mcp\n        rules: [{allow: {tool: x}}]\n        deny_rules: [{method: "
     "tools/call}]",
     "denies every tool call"},
    {"mcp reserved", "protocol: mcp\n        rules: [{allow: {method: rpc.other}}]", "reserved"},
    {"mcp transport call by rule", "protocol: mcp\n        rules: [{allow: {method: rpc.stream}}]",
     NULL},
    {"mcp path in rule", "protocol: mcp\n        rules: [{allow: {method: ping, path: /x}}]",
     "not path/query"},
    {"mcp bad tool glob", "protocol: mcp\n        rules: [{allow: {tool: 'a[b'}}]", "invalid"},
    {"mcp body ceiling",
     "protocol: mcp\n        mcp: {max_body_bytes: 99999999}\n        rules: [{allow: {method: "
     "ping}}]",
     "at most 16777216"},
    {"json-rpc glob", "protocol: json-rpc\n        rules: [{allow: {method: 'eth_*'}}]",
     "do not support glob"},
    {"json-rpc tool", "protocol: json-rpc\n        rules: [{allow: {method: x, tool: y}}]",
     "only valid for protocol mcp"},
    {"json-rpc params", "protocol: json-rpc\n        rules: [{allow: {method: x, params: {a: 1}}}]",
     "params matchers"},
    {"json-rpc star", "protocol: json-rpc\n        rules: [{allow: {method: '*'}}]", NULL},
};

START_TEST(test_validate)
{
    const struct val_case *t = &val_cases[_i];
    char yaml[2048];
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    snprintf(yaml, sizeof(yaml),
             "version: 1\nnetwork_policies:\n  m:\n    endpoints:\n      - host: h.example.com\n"
             "        port: 443\n        enforcement: enforce\n        %s\n"
             "    binaries: [{path: /usr/bin/node}]\n",
             t->endpoint);
    p = model_policy_load("p.yaml", yaml, strlen(yaml), MODEL_FMT_AUTO, d);
    if (t->want == NULL) {
        ck_assert_msg(p != NULL, "%s: %s", t->name,
                      model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?");
    } else {
        bool found = false;
        ck_assert_msg(p == NULL, "%s: loaded", t->name);
        for (size_t i = 0; i < model_diags_count(d); i++) {
            found = found || strstr(model_diags_line(d, i), t->want) != NULL;
        }
        ck_assert_msg(found, "%s: no message with [%s]; first [%s]", t->name, t->want,
                      model_diags_count(d) > 0 ? model_diags_line(d, 0) : "none");
        ck_assert_ptr_nonnull(strstr(model_diags_line(d, 0), "p.yaml:"));
    }
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("model_rpc");
    TCase *tc = tcase_create("rpc");

    tcase_add_loop_test(tc, test_read, 0, (int)(sizeof(read_cases) / sizeof(read_cases[0])));
    tcase_add_test(tc, test_batch_limit);
    tcase_add_loop_test(tc, test_http_fields, 0,
                        (int)(sizeof(field_cases) / sizeof(field_cases[0])));
    tcase_add_test(tc, test_escape);
    tcase_add_loop_test(tc, test_eval, 0, (int)(sizeof(eval_cases) / sizeof(eval_cases[0])));
    tcase_add_test(tc, test_decide_calls);
    tcase_add_loop_test(tc, test_validate, 0, (int)(sizeof(val_cases) / sizeof(val_cases[0])));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
