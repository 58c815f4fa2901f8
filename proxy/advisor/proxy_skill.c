/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_skill.c - the agent skill: how to ask policy.local for access
 *
 * In advisor mode, while agent_policy_proposals_enabled is on, the proxy
 * writes a markdown file (mode 0444) that teaches an agent the loop: read
 * the 403, look at the policy and the recent denials, propose the narrowest
 * rule, wait for the decision and for this proxy to enforce it, retry.
 * Every deny body the proxy writes while proposals are on (L4 and L7, see
 * proxy_reply_json and proxy_reply_l7) names its path (next_steps[0],
 * agent_guidance) and carries the rule_missing this text describes; the
 * two must say the same thing (tests/check_proxy_local.c). Default path
 * DATA_DIR/skills/policy_advisor.md; --skill-dir DIR puts it in DIR.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/advisor/proxy_advisor.h"

/* Three literals, each within the 4095 bytes a C compiler must accept in
 * one string; proxy_skill_text() joins them once. */
#define SKILL_API                                                                                  \
    "# Asking for network access through policy.local\n"                                           \
    "\n"                                                                                           \
    "Your network traffic goes through proviso-proxy, which enforces the sandbox's\n"              \
    "network policy. When it refuses a request you need, you can propose a policy\n"               \
    "change. A gateway (proviso-advisor) checks every proposal with a prover: a\n"                 \
    "change that grants no new risky authority may be approved automatically,\n"                   \
    "anything else waits for a human reviewer. Ask only for what the task needs.\n"                \
    "\n"                                                                                           \
    "## The API\n"                                                                                 \
    "\n"                                                                                           \
    "Send plain HTTP through the proxy (your HTTP_PROXY) to `http://policy.local`.\n"              \
    "Answers are JSON; errors are `{\"error\": ..., \"detail\": ...}`.\n"                          \
    "\n"                                                                                           \
    "| request | answer |\n"                                                                       \
    "|---|---|\n"                                                                                  \
    "| `GET /v1/policy/current` | `{\"format\":\"yaml\",\"policy_yaml\":...}`, the policy "        \
    "enforced "                                                                                    \
    "now |\n"                                                                                      \
    "| `GET /v1/denials?last=N` | the N most recent denials (1-100, default 10), newest first, "   \
    "each {line, host, port, binary, method, path, stage, policy, reason}, queries redacted |\n"   \
    "| `POST /v1/proposals` | 202 "                                                                \
    "`{\"status\":\"submitted\"|\"already_allowed\",\"accepted_chunks\",\"rejected_chunks\","      \
    "\"rejection_reasons\",\"accepted_chunk_ids\",\"already_allowed\"}`; when nothing was "        \
    "accepted also `message` and `operations` (each operation's outcome and reason) |\n"           \
    "| `GET /v1/proposals/{id}` | the proposal's current state |\n"                                \
    "| `GET /v1/proposals/{id}/wait?timeout=S` | waits up to S seconds (1-300, default 60) for a " \
    "decision |\n"                                                                                 \
    "\n"                                                                                           \
    "A 404 `feature_disabled` means proposals are switched off for this sandbox:\n"                \
    "tell the user, do not retry.\n"                                                               \
    "\n"

#define SKILL_LOOP                                                                      \
    "## The loop\n"                                                                     \
    "\n"                                                                                \
    "1. **Read the 403 body.** Every policy refusal (error `policy_denied` or\n"        \
    "   `ssrf_denied`) of a plain-HTTP request, of a CONNECT, or of a request\n"        \
    "   inside an inspected HTTPS tunnel has a JSON body with `rule_missing`,\n"        \
    "   `next_steps` (read this file, look at the policy and the denials, submit\n"     \
    "   a proposal) and `agent_guidance`.\n"                                            \
    "   `rule_missing` names `host`, `port`, `binary` (when known) and `layer`:\n"      \
    "   - `layer: \"l4\"`, `type: \"endpoint\"`: no rule lets this binary reach this\n" \
    "     host and port at all (the most common refusal). Ask for an endpoint.\n"       \
    "   - `layer: \"l7\"`, `type: \"rest_allow\"`: a rule reaches the host, but not\n"  \
    "     with this `method` and `path` (both in `rule_missing`). Ask for an\n"         \
    "     allow rule.\n"                                                                \
    "   - `layer: \"l7\"`, `type: \"graphql_allow\"` (`protocol: \"graphql\"`): a\n"    \
    "     GraphQL endpoint refused this operation: `operation_type`,\n"                 \
    "     `operation_name` (only when it had one) and its root `fields`, sent to\n"     \
    "     `path`. Ask for a GraphQL allow rule on that endpoint (same host, port\n"     \
    "     and `path`, `protocol: graphql`, `enforcement: enforce`) naming that\n"       \
    "     type and exactly those fields - never `operation_type: \"*\"`, never a\n"     \
    "     field glob, never a `method`/`path` rule.\n"                                  \
    "   - `type: \"graphql_persisted_query\"`: a hash-only persisted query the\n"       \
    "     endpoint does not register: send the full document instead.\n"                \
    "   - a GraphQL refusal without `rule_missing`: the proxy could not read one\n"     \
    "     operation (`detail` says why, e.g. a malformed or oversized body, a\n"        \
    "     mutation sent with GET): fix the request; no rule lifts it.\n"                \
    "   - an MCP or JSON-RPC endpoint answers a refused call with a JSON-RPC\n"         \
    "     error instead of a 403 (your client shows a tool error): code -32001,\n"      \
    "     and its `data` is the body described here. `type: \"mcp_call\"`\n"            \
    "     (`protocol: \"mcp\"`) names the `method` and, for `tools/call`, the\n"        \
    "     `tool`; `type: \"rpc_call\"` (`protocol: \"json-rpc\"`) the `method`.\n"      \
    "     Ask for an allow rule on that endpoint (same host, port and `path`,\n"        \
    "     `protocol: mcp` or `json-rpc`, `enforcement: enforce`):\n"                    \
    "     `{allow: {method: tools/call, tool: NAME}}` for exactly that tool, or\n"      \
    "     `{allow: {method: M}}` for another method - never `*`, never a glob.\n"       \
    "     Code -32002: your call was allowed but not sent because another call\n"       \
    "     of the same batch was refused; code -32600: the proxy could not read\n"       \
    "     the body (`detail` says why): fix the request, no rule lifts it.\n"

#define SKILL_LOOP_REST                                                                \
    "   - `layer: \"l4\"`, `type: \"destination\"` (error `ssrf_denied`): a rule\n"    \
    "     matches, but the address the host resolved to is not admitted. A private\n"  \
    "     address needs `allowed_ips`; link-local, loopback and cloud metadata\n"      \
    "     addresses are never allowed.\n"                                              \
    "   `detail` says why. An HTTPS client often hides the body of a refused\n"        \
    "   CONNECT: `GET /v1/denials?last=5` shows the refusal as well.\n"                \
    "2. **Look before you ask.** `GET /v1/policy/current` shows the rules in force;\n" \
    "   `GET /v1/denials?last=5` shows what else was refused recently. Maybe a rule\n" \
    "   already exists and only your method or path is missing.\n"                     \
    "3. **Draft the narrowest rule.** One `addRule` operation:\n"                      \
    "   - the exact host (never a wildcard such as `*.example.com`) and the exact\n"   \
    "     port;\n"                                                                     \
    "   - the exact binary that made the request (`rule_missing.binary`);\n"           \
    "   - for HTTP APIs, `protocol: rest` with `enforcement: enforce` and one\n"       \
    "     `allow` rule per method and path you need (a `**` suffix only where the\n"   \
    "     path really varies); never `access: full`;\n"                                \
    "   - never link-local, cloud metadata or loopback addresses, and never\n"         \
    "     tokens, keys or other secrets in paths or queries (allow paths cannot\n"     \
    "     hold queries at all).\n"                                                     \
    "4. **Submit** it with `POST /v1/proposals` and keep `accepted_chunk_ids`. A\n"    \
    "   rejected chunk comes back in `rejection_reasons`: fix it and resubmit.\n"      \
    "   `status: already_allowed`: the policy already allows it (`covered_by`);\n"     \
    "   nothing was stored: retry the request, or ask for what is really missing.\n"   \
    "5. **Wait** with `GET /v1/proposals/{id}/wait?timeout=300`:\n"                    \
    "   - `approved` with `policy_reloaded: true`: the proxy enforces the new\n"       \
    "     policy; retry your original request once;\n"                                 \
    "   - `approved` with `policy_reloaded: false`: the proxy has not loaded it\n"     \
    "     yet; wait again (for example `timeout=30`) before retrying;\n"               \
    "   - `timed_out: true`: still pending (a reviewer may be needed); wait again;\n"  \
    "     `envelope_note` says why it is not approved automatically, and a\n"          \
    "     `suggested_rule` is a narrower rule the gateway proved approvable:\n"        \
    "     propose that one instead;\n"                                                 \
    "   - `rejected`: read `rejection_reason` and `validation_result`, redraft a\n"    \
    "     narrower rule or explain to the user why access was refused;\n"              \
    "   - `application_error` set: the gateway could not evaluate the proposal\n"      \
    "     (for example the prover is down); it stays pending, never approved.\n"       \
    "6. **Report** any other non-2xx answer to the user rather than guessing.\n"       \
    "\n"

#define SKILL_EXAMPLE                                                                          \
    "## Example\n"                                                                             \
    "\n"                                                                                       \
    "`/usr/bin/curl` was refused `GET /v1/items` on `api.example.com:443`:\n"                  \
    "\n"                                                                                       \
    "```json\n"                                                                                \
    "{\n"                                                                                      \
    "  \"intent_summary\": \"read the item list for the user's report\",\n"                    \
    "  \"operations\": [\n"                                                                    \
    "    {\n"                                                                                  \
    "      \"addRule\": {\n"                                                                   \
    "        \"ruleName\": \"example_items_read\",\n"                                          \
    "        \"rule\": {\n"                                                                    \
    "          \"endpoints\": [\n"                                                             \
    "            {\n"                                                                          \
    "              \"host\": \"api.example.com\",\n"                                           \
    "              \"port\": 443,\n"                                                           \
    "              \"protocol\": \"rest\",\n"                                                  \
    "              \"enforcement\": \"enforce\",\n"                                            \
    "              \"rules\": [{\"allow\": {\"method\": \"GET\", \"path\": \"/v1/items\"}}]\n" \
    "            }\n"                                                                          \
    "          ],\n"                                                                           \
    "          \"binaries\": [{\"path\": \"/usr/bin/curl\"}]\n"                                \
    "        }\n"                                                                              \
    "      }\n"                                                                                \
    "    }\n"                                                                                  \
    "  ]\n"                                                                                    \
    "}\n"                                                                                      \
    "```\n"                                                                                    \
    "\n"                                                                                       \
    "## Approval\n"                                                                            \
    "\n"                                                                                       \
    "In `auto` mode the gateway approves a proposal by itself only when the prover\n"          \
    "finds no new finding (`validation_result: \"prover: no new findings\"`) and\n"            \
    "no security note applies; otherwise, and always in `manual` mode, a human\n"              \
    "decides. Proposals for names starting with `_provider_`, and for internal or\n"           \
    "metadata addresses, are refused outright.\n"

static char
    skill[sizeof(SKILL_API) + sizeof(SKILL_LOOP) + sizeof(SKILL_LOOP_REST) + sizeof(SKILL_EXAMPLE)];
static size_t skill_len;

const char *proxy_skill_text(void)
{
    if (skill_len == 0) {
        /* first use, on the loop thread (or a test): the text never changes */
        int n = snprintf(skill, sizeof(skill), "%s%s%s%s", SKILL_API, SKILL_LOOP, SKILL_LOOP_REST,
                         SKILL_EXAMPLE);
        skill_len = n > 0 && (size_t)n < sizeof(skill) ? (size_t)n : 0;
    }
    return skill;
}

int proxy_skill_write(const char *path, char *err, size_t errlen)
{
    char dir[4200];
    char tmp[4300];
    const char *slash = strrchr(path, '/');
    const char *text = proxy_skill_text();
    size_t n = skill_len;
    size_t off = 0;
    int fd;

    if (slash != NULL && slash != path) {
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    (void)unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
            close(fd);
            (void)unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || chmod(tmp, 0444) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot install %s: %s", path, strerror(errno));
        (void)unlink(tmp);
        return -1;
    }
    return 0;
}
