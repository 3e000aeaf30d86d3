// Before each tools/call result, sends a response whose id the client never used.
import { initialize, reply, send, serve } from "./lib.mjs";

serve({
  initialize,
  "tools/call": (request) => {
    send({ jsonrpc: "2.0", id: 424242, result: { content: [{ type: "text", text: "WRONG" }] } });
    reply(request, { content: [{ type: "text", text: "right" }] });
  },
});
