// The official TypeScript SDK client against `mlsysbench mcp-serve`: connects over stdio or Streamable
// HTTP, lists the tools, calls list_workloads and list_runs, and prints one JSON line of what it saw.
// Usage: node sdk_client.mjs stdio COMMAND ARGS...  |  node sdk_client.mjs http URL
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, "..", "..", "..", "mcp", "servers", "node_modules", "@modelcontextprotocol", "sdk",
                      "dist", "esm", "client");
const { Client } = await import(path.join(sdk, "index.js"));
const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const { StdioClientTransport } = await import(path.join(sdk, "stdio.js"));
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "ignore" });
} else {
  const { StreamableHTTPClientTransport } = await import(path.join(sdk, "streamableHttp.js"));
  transport = new StreamableHTTPClientTransport(new URL(target));
}
const client = new Client({ name: "sdk-test", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const workloads = await client.callTool({ name: "list_workloads", arguments: {} });
const runs = await client.callTool({ name: "list_runs", arguments: {} });
const missing = await client.callTool({ name: "get_report", arguments: { run: "no-such-run" } });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools,
  workloads: workloads.structuredContent.workloads.map((w) => w.name),
  runs_text: runs.content[0].text,
  missing_is_error: missing.isError === true,
  missing_text: missing.content[0].text,
}));
await client.close();
