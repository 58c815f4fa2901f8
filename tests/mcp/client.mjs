// client.mjs - the official MCP TypeScript SDK client (Client over
// StreamableHTTPClientTransport) for tests/e2e/mcp_clients.sh.
//   node client.mjs URL OP...
// OPs, run in order on one session:
//   tools                 tools/list; prints "OK tools NAME,NAME,..."
//   call:TOOL[:JSON]      tools/call; prints "OK call TOOL TEXT" (the first
//                         text content), "RPCERR call TOOL CODE MESSAGE" when
//                         the SDK rejects with a JSON-RPC error (McpError),
//                         "FAIL call TOOL ..." on any other failure
//   ping                  prints "OK ping" or "RPCERR ping CODE MESSAGE"
// It connects (initialize, notifications/initialized), runs the OPs and
// ends the session (DELETE). Through a proxy: run with Node >= 24 and
// NODE_USE_ENV_PROXY=1 so that fetch uses HTTP_PROXY.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const [url, ...ops] = process.argv.slice(2);
const client = new Client({ name: "proviso-mcp-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url));
const oneLine = (s) => String(s).replace(/\s+/g, " ").slice(0, 300);
let status = 0;

async function run(label, fn) {
    try {
        console.log(`OK ${label} ${oneLine(await fn())}`.trimEnd());
    } catch (e) {
        if (e instanceof McpError) console.log(`RPCERR ${label} ${e.code} ${oneLine(e.message)}`);
        else {
            console.log(`FAIL ${label} ${e?.constructor?.name}: ${oneLine(e?.message ?? e)}`);
            status = 1;
        }
    }
}

try {
    await client.connect(transport);
} catch (e) {
    console.log(`FAIL connect ${e?.constructor?.name}: ${oneLine(e?.message ?? e)}`);
    process.exit(1);
}
console.log(`OK connect ${client.getServerVersion()?.name ?? "?"} session=${transport.sessionId ? "yes" : "no"}`);
for (const op of ops) {
    if (op === "tools") {
        await run("tools", async () => (await client.listTools()).tools.map((t) => t.name).join(","));
    } else if (op === "ping") {
        await run("ping", async () => (await client.ping(), ""));
    } else if (op.startsWith("call:")) {
        const [, tool, ...rest] = op.split(":");
        const args = rest.length ? JSON.parse(rest.join(":")) : {};
        await run(`call ${tool}`, async () => {
            const r = await client.callTool({ name: tool, arguments: args });
            const text = (r.content ?? []).find((c) => c.type === "text")?.text ?? "";
            return `${r.isError ? "isError " : ""}${text}`;
        });
    } else {
        console.log(`FAIL unknown op ${op}`);
        status = 1;
    }
}
try {
    await transport.terminateSession();
    console.log("OK end");
} catch (e) {
    console.log(`FAIL end ${oneLine(e?.message ?? e)}`);
    status = 1;
}
await client.close();
process.exit(status);
