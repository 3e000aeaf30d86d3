// tools/call returns this process's working directory and $MLSB_FAKE_VALUE; writes a line to stderr.
import { initialize, reply, serve } from "./lib.mjs";

process.stderr.write("fake server stderr line\n");
serve({
  initialize,
  "tools/call": (request) =>
    reply(request, { content: [{ type: "text", text: `${process.cwd()}|${process.env.MLSB_FAKE_VALUE}` }] }),
});
