// Round-trip latency of tools/call through our MCP client over stdio.
// Usage: bench_mcp_call WARMUP TOOL ARGS_JSON -- SERVER_ARGV...
// Connects, then follows the batch protocol of latency.hpp (run_batches) as client "mlsysbench", so that
// scripts/bench-mcp can interleave its batches with the SDK client's and the floor's.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "mcp/bench/latency.hpp"
#include "mcp/client.hpp"

int main(int argc, char** argv) {
  if (argc < 6 || std::string(argv[4]) != "--") {
    std::cerr << "usage: bench_mcp_call WARMUP TOOL ARGS_JSON -- SERVER_ARGV...   (timed batches: N per stdin line)\n";
    return 2;
  }
  const int warmup = std::atoi(argv[1]);
  const std::string tool = argv[2];
  const auto arguments = nlohmann::json::parse(argv[3]);
  mlsb::mcp::ServerSpec spec;
  spec.name = "bench";
  spec.command.assign(argv + 5, argv + argc);
  try {
    auto client = mlsb::mcp::Client::connect(spec);
    auto call = [&] {
      const auto start = std::chrono::steady_clock::now();
      const auto result = client->call_tool(tool, arguments);
      const auto stop = std::chrono::steady_clock::now();
      if (result.is_error) throw mlsb::mcp::McpError("tool call failed: " + result.text());
      return std::chrono::duration<double, std::micro>(stop - start).count();
    };
    mlsb::mcp::bench::run_batches("mlsysbench", warmup, call);
    client->close();
  } catch (const std::exception& e) {
    std::cerr << "bench_mcp_call: " << e.what() << "\n";
    return 1;
  }
}
