// On tools/call {n}: first a log notification and a ping request to the client, then, after 0-2 ms, the
// result "n" (so replies to concurrent calls come out of order, between the server's own messages).
// tools/call {arm: true} answers at once and pings the client 50 ms later, between calls; tools/call
// {report: true} answers "answered" or "not answered": whether that ping's answer has arrived.
import { initialize, reply, send, serve } from "./lib.mjs";

let idlePingAnswered = false;
serve({
  initialize,
  "tools/call": (request) => {
    const args = request.params.arguments;
    if (args.arm) {
      reply(request, { content: [{ type: "text", text: "armed" }] });
      setTimeout(() => send({ jsonrpc: "2.0", id: "idle-ping", method: "ping" }), 50);
      return;
    }
    if (args.report) {
      reply(request, { content: [{ type: "text", text: idlePingAnswered ? "answered" : "not answered" }] });
      return;
    }
    send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `call ${args.n}` } });
    send({ jsonrpc: "2.0", id: `ping-${args.n}`, method: "ping" });
    setTimeout(() => reply(request, { content: [{ type: "text", text: String(args.n) }] }), Math.random() * 2);
  },
  response: (message) => {
    if (message.id === "idle-ping" && message.result) idlePingAnswered = true;
  },
});
