// server-everything's Streamable HTTP transport on 127.0.0.1, port 0, for the e2e tests.
//
// Same as tests/conformance/everything-http.mjs, but it lives beside tests/e2e/node_modules
// (where `make peers` installs server-everything) so the bare import resolves there. Prints
// one line `HARN-LISTENING <url>` on stdout once the socket listens.
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  const callback = typeof args[args.length - 1] === "function" ? args[args.length - 1] : undefined;
  this.once("listening", () => {
    const { port } = this.address();
    process.stdout.write(`HARN-LISTENING http://127.0.0.1:${port}/mcp\n`);
  });
  return callback ? listen.call(this, 0, "127.0.0.1", callback) : listen.call(this, 0, "127.0.0.1");
};

await import("@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js");
