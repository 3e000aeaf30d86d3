// Round-trip latency of tools/call through the official TypeScript SDK client (the peer of bench_mcp_call).
// Usage: node sdk_call.mjs WARMUP CALLS TOOL ARGS_JSON -- SERVER_ARGV...
// Prints one line: "sdk <calls> <median_us> <p95_us>".
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, "..", "servers", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const { Client } = await import(path.join(sdk, "index.js"));
const { StdioClientTransport } = await import(path.join(sdk, "stdio.js"));

const [warmup, calls, tool, argsJson, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node sdk_call.mjs WARMUP CALLS TOOL ARGS_JSON -- SERVER_ARGV...");
  process.exit(2);
}
const toolArgs = JSON.parse(argsJson);

// Nearest rank, as mcp/bench/latency.hpp.
const nearestRank = (sorted, q) => sorted[Math.max(Math.ceil(q * sorted.length), 1) - 1];

const client = new Client({ name: "sdk-bench", version: "0.1.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const us = [];
for (let i = 0; i < Number(warmup) + Number(calls); ++i) {
  const start = process.hrtime.bigint();
  const result = await client.callTool({ name: tool, arguments: toolArgs });
  const stop = process.hrtime.bigint();
  if (result.isError) throw new Error(`tool call failed: ${JSON.stringify(result.content)}`);
  if (i >= Number(warmup)) us.push(Number(stop - start) / 1000);
}
await client.close();
us.sort((a, b) => a - b);
console.log(`sdk ${calls} ${nearestRank(us, 0.5).toFixed(1)} ${nearestRank(us, 0.95).toFixed(1)}`);
