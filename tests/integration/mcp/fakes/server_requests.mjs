// On tools/call, first asks the client `ping` and `roots/list`, then reports the client's answers as the
// tool result. Also answers initialize with the protocol version given as argv[2] (default 2025-11-25).
import { initialize, reply, send, serve } from "./lib.mjs";

const version = process.argv[2] ?? "2025-11-25";
const answers = new Map();
let call = null;
serve({
  initialize: (request) => initialize(request, version),
  "tools/call": (request) => {
    call = request;
    send({ jsonrpc: "2.0", id: "srv-ping", method: "ping" });
    send({ jsonrpc: "2.0", id: "srv-roots", method: "roots/list" });
  },
  response: (message) => {
    answers.set(message.id, message);
    if (answers.size === 2 && call) {
      reply(call, { content: [{ type: "text", text: JSON.stringify(Object.fromEntries(answers)) }] });
    }
  },
});
