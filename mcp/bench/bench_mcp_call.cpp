// Round-trip latency of tools/call through our MCP client over stdio.
// Usage: bench_mcp_call WARMUP TOOL ARGS_JSON -- SERVER_ARGV...
// Connects and makes WARMUP untimed calls, prints "ready"; then, for each line N read from stdin, makes N
// timed calls and prints "done" (so that scripts/bench-mcp can interleave batches with the SDK client's).
// At the end of stdin prints one line: "mlsysbench <calls> <median_us> <p95_us>" over all timed calls.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

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
    for (int i = 0; i < warmup; ++i) call();
    std::cout << "ready" << std::endl;
    std::vector<double> us;
    for (int batch; std::cin >> batch;) {
      for (int i = 0; i < batch; ++i) us.push_back(call());
      std::cout << "done" << std::endl;
    }
    client->close();
    if (us.empty()) throw mlsb::mcp::McpError("no timed calls: stdin asked for none");
    std::printf("mlsysbench %zu %.1f %.1f\n", us.size(), mlsb::mcp::bench::nearest_rank(us, 0.5),
                mlsb::mcp::bench::nearest_rank(us, 0.95));
  } catch (const std::exception& e) {
    std::cerr << "bench_mcp_call: " << e.what() << "\n";
    return 1;
  }
}
