// Round-trip latency of tools/call through the official TypeScript SDK client (the peer of bench_mcp_call).
// Usage: node sdk_call.mjs WARMUP TOOL ARGS_JSON -- SERVER_ARGV...
// Connects and makes WARMUP untimed calls, prints "ready"; then, for each line N read from stdin, makes N
// timed calls and prints "done". At the end of stdin prints one line: "sdk <calls> <median_us> <p95_us>".
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, "..", "servers", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const { Client } = await import(path.join(sdk, "index.js"));
const { StdioClientTransport } = await import(path.join(sdk, "stdio.js"));

const [warmup, tool, argsJson, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
  console.error("usage: node sdk_call.mjs WARMUP TOOL ARGS_JSON -- SERVER_ARGV...   (timed batches: N per stdin line)");
  process.exit(2);
}
const toolArgs = JSON.parse(argsJson);

// Nearest rank, as mcp/bench/latency.hpp.
const nearestRank = (sorted, q) => sorted[Math.max(Math.ceil(q * sorted.length), 1) - 1];

const client = new Client({ name: "sdk-bench", version: "0.1.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const call = async () => {
  const start = process.hrtime.bigint();
  const result = await client.callTool({ name: tool, arguments: toolArgs });
  const stop = process.hrtime.bigint();
  if (result.isError) throw new Error(`tool call failed: ${JSON.stringify(result.content)}`);
  return Number(stop - start) / 1000;
};
for (let i = 0; i < Number(warmup); ++i) await call();
console.log("ready");
const us = [];
for await (const line of readline.createInterface({ input: process.stdin })) {
  for (let i = 0; i < Number(line); ++i) us.push(await call());
  console.log("done");
}
await client.close();
if (us.length === 0) throw new Error("no timed calls: stdin asked for none");
us.sort((a, b) => a - b);
console.log(`sdk ${us.length} ${nearestRank(us, 0.5).toFixed(1)} ${nearestRank(us, 0.95).toFixed(1)}`);
