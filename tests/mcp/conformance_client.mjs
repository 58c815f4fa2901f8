// conformance_client.mjs - an MCP TypeScript SDK client for the client mode
// of @modelcontextprotocol/conformance (tests/e2e/mcp_clients.sh). The
// suite runs it with the URL of the scenario's server as last argument and
// the scenario in MCP_CONFORMANCE_SCENARIO:
//   initialize   connect (initialize, notifications/initialized) and close
//   tools_call   tools/list, then add_numbers {a: 5, b: 3}
//   sse-retry    tools/list, then test_reconnection (the server closes the
//                stream; the SDK resumes it with a GET and Last-Event-ID)
// The suite names its server "localhost"; the client dials 127.0.0.1, the
// address the server listens on (tests/mcp/loopback.mjs) and an IP literal a
// proxy policy can name.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[process.argv.length - 1]);
if (url.hostname === "localhost") url.hostname = "127.0.0.1";
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize";
const client = new Client({ name: "proviso-conformance-client", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(url);
try {
    await client.connect(transport);
    if (scenario === "tools_call") {
        await client.listTools();
        const r = await client.callTool({ name: "add_numbers", arguments: { a: 5, b: 3 } });
        console.log(JSON.stringify(r));
    } else if (scenario === "sse-retry") {
        await client.listTools();
        const r = await client.callTool({ name: "test_reconnection", arguments: {} });
        console.log(JSON.stringify(r));
    }
    await transport.close();
    process.exit(0);
} catch (e) {
    console.error(`conformance client (${scenario}): ${e?.constructor?.name}: ${e?.message ?? e}`);
    process.exit(1);
}
