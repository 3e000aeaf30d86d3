// Answers initialize, then ignores every tools/call.
import { initialize, serve } from "./lib.mjs";

serve({ initialize, "tools/call": () => {} });
