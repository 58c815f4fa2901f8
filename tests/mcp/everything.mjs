// everything.mjs - @modelcontextprotocol/server-everything in streamable
// HTTP mode (its "streamableHttp" transport, path /mcp) for
// tests/e2e/mcp_clients.sh: run with node --import ./loopback.mjs so that it
// listens on 127.0.0.1 (PORT=0: a free port, written to MCP_PORT_FILE).
// With MCP_CALL_LOG set, every tool the server actually executes appends
// one line "CALL <tool>" to that file: the server's own side of "was it
// called", independent of what the proxy says.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

const log = process.env.MCP_CALL_LOG;
if (log) {
    const register = McpServer.prototype.registerTool;
    McpServer.prototype.registerTool = function (name, config, cb) {
        return register.call(this, name, config, async (...a) => {
            appendFileSync(log, `CALL ${name}\n`);
            return cb(...a);
        });
    };
}
process.env.PORT ??= "0";
await import("@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js");
