// loopback.mjs - preloaded with node --import: a server that listens without
// naming a host (express's app.listen(port), the conformance suite's
// listen(0)) listens on 127.0.0.1 only, so nothing a test starts is
// reachable from elsewhere. With MCP_PORT_FILE set, the first server that
// listens writes its port there (PORT=0 picks a free one).
//
// A listen without a host binds at once (callers read server.address()
// right after listen(0)); one with a host resolves it first, through
// dns.lookup, and binds a tick later. So while a listen is being set up
// here, dns.lookup of the literal 127.0.0.1 answers synchronously: the
// bind happens inside listen() as it did before.
import dns from "node:dns";
import net from "node:net";
import { writeFileSync } from "node:fs";

const lookup = dns.lookup;
let inListen = false;
dns.lookup = function (host, ...rest) {
    const cb = rest[rest.length - 1];
    if (inListen && host === "127.0.0.1" && typeof cb === "function") {
        const opts = rest.length > 1 ? rest[0] : {};
        if (opts && typeof opts === "object" && opts.all) return cb(null, [{ address: host, family: 4 }]);
        return cb(null, host, 4);
    }
    return lookup.call(this, host, ...rest);
};

const listen = net.Server.prototype.listen;
let reported = false;
net.Server.prototype.listen = function (...args) {
    const a0 = args[0];
    if (typeof a0 === "number" || (typeof a0 === "string" && /^\d+$/.test(a0))) {
        if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
    } else if (a0 && typeof a0 === "object" && a0.path === undefined && a0.fd === undefined &&
               a0.handle === undefined && a0._handle === undefined && a0.host === undefined) {
        args[0] = { ...a0, host: "127.0.0.1" };
    } else if (a0 === undefined || typeof a0 === "function") {
        args.unshift(0, "127.0.0.1");
    }
    if (process.env.MCP_PORT_FILE && !reported) {
        reported = true;
        this.once("listening", () => {
            writeFileSync(process.env.MCP_PORT_FILE, `${this.address().port}\n`);
        });
    }
    inListen = true;
    try {
        return listen.apply(this, args);
    } finally {
        inListen = false;
    }
};
