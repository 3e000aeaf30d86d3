// Mixes lines that are not JSON into its stdout, also inside a chunk with a real message.
import { initialize, reply, serve } from "./lib.mjs";

process.stdout.write("Starting noisy server...\n\n");
serve({
  initialize: (request) => {
    process.stdout.write("log: got initialize\n{ not json either\n");
    initialize(request);
  },
  "tools/call": (request) => {
    process.stdout.write(
      "before\n" + JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { content: [{ type: "text", text: "ok" }] } }) + "\nafter\n",
    );
  },
});
