// server-everything's Streamable HTTP transport, bound to 127.0.0.1 on a free port.
//
// The transport listens on process.env.PORT (default 3001) on every interface and logs the
// port it was asked for, not the one it got. This wrapper makes every http.Server listen on
// 127.0.0.1 port 0 instead, then prints one line `HARN-LISTENING <url>` on stdout once the
// socket listens (scripts/conformance.py waits for it), and loads the transport unchanged.
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
