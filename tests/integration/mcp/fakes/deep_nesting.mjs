// Answers tools/call "deep" with a result nested 200,000 arrays deep (as raw text: JSON.stringify would
// overflow Node's own stack), then answers every later request normally.
import { initialize, reply, serve } from "./lib.mjs";

serve({
  initialize,
  "tools/call": (request) => {
    if (request.params.name === "deep") {
      const depth = 200000;
      process.stdout.write(`{"jsonrpc":"2.0","id":${request.id},"result":{"content":${"[".repeat(depth)}${"]".repeat(depth)}}}\n`);
    } else {
      reply(request, { content: [{ type: "text", text: "shallow" }] });
    }
  },
});
