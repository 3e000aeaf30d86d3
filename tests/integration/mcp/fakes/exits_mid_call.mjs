// Answers initialize, then exits with status 3 when a tool is called.
import { initialize, serve } from "./lib.mjs";

serve({ initialize, "tools/call": () => process.exit(3) });
