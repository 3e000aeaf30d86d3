// Minimal MCP stdio server plumbing for the fake servers (no npm dependencies).
import readline from "node:readline";

export function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

export function reply(request, result) {
  send({ jsonrpc: "2.0", id: request.id, result });
}

export function initialize(request, protocolVersion = "2025-11-25") {
  reply(request, {
    protocolVersion,
    capabilities: { tools: {} },
    serverInfo: { name: "fake", version: "0.0.1" },
  });
}

// Calls handlers[method](message) for each request/notification, handlers.response(message) for responses.
// Unhandled requests get -32601.
export function serve(handlers) {
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    const message = JSON.parse(line);
    if (message.method === undefined) return handlers.response?.(message);
    const handler = handlers[message.method];
    if (handler) return handler(message);
    if (message.id !== undefined) {
      send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `no ${message.method}` } });
    }
  });
}
