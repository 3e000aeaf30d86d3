// Round-trip latency of tools/call through our MCP client over stdio.
// Usage: bench_mcp_call WARMUP CALLS TOOL ARGS_JSON -- SERVER_ARGV...
// Prints one line: "mlsysbench <calls> <median_us> <p95_us>".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "mcp/bench/latency.hpp"
#include "mcp/client.hpp"

int main(int argc, char** argv) {
  if (argc < 7 || std::string(argv[5]) != "--") {
    std::cerr << "usage: bench_mcp_call WARMUP CALLS TOOL ARGS_JSON -- SERVER_ARGV...\n";
    return 2;
  }
  const int warmup = std::atoi(argv[1]), calls = std::atoi(argv[2]);
  const std::string tool = argv[3];
  const auto arguments = nlohmann::json::parse(argv[4]);
  mlsb::mcp::ServerSpec spec;
  spec.name = "bench";
  spec.command.assign(argv + 6, argv + argc);
  try {
    auto client = mlsb::mcp::Client::connect(spec);
    std::vector<double> us;
    us.reserve(static_cast<size_t>(calls));
    for (int i = 0; i < warmup + calls; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const auto result = client->call_tool(tool, arguments);
      const auto stop = std::chrono::steady_clock::now();
      if (result.is_error) throw mlsb::mcp::McpError("tool call failed: " + result.text());
      if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
    client->close();
    std::printf("mlsysbench %d %.1f %.1f\n", calls, mlsb::mcp::bench::nearest_rank(us, 0.5),
                mlsb::mcp::bench::nearest_rank(us, 0.95));
  } catch (const std::exception& e) {
    std::cerr << "bench_mcp_call: " << e.what() << "\n";
    return 1;
  }
}
