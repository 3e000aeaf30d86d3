// The floor of a tools/call round trip over stdio: what any client pays for the server's own work and the
// two wake-ups, with no client machinery. It writes preformatted request lines and reads the reply line
// with a blocking read(), parsing nothing (it only checks that the line is a success response), so
// scripts/bench-mcp can show how close our client and the SDK's come to what no client can beat.
// Usage: bench_mcp_floor WARMUP TOOL ARGS_JSON -- SERVER_ARGV...   (batch protocol: latency.hpp, client "floor")
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "mcp/bench/latency.hpp"
#include "mcp/child_process.hpp"
#include "mcp/command_lookup.hpp"

namespace {

using mlsb::mcp::ChildProcess;

/// The server's stdout, read line by line with blocking reads.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  /// The next line without its newline. Throws std::runtime_error at the end of stdout.
  std::string next() {
    size_t nl;
    while ((nl = buffer_.find('\n')) == std::string::npos) {
      char chunk[65536];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("the server closed its stdout");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    return line;
  }

 private:
  int fd_;
  std::string buffer_;
};

void write_line(ChildProcess& child, const std::string& line) {
  if (child.write_stdin(line + "\n", std::chrono::seconds(10)) != ChildProcess::WriteResult::ok)
    throw std::runtime_error("cannot write to the server's stdin");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || std::string(argv[4]) != "--") {
    std::cerr << "usage: bench_mcp_floor WARMUP TOOL ARGS_JSON -- SERVER_ARGV...   (timed batches: N per stdin line)\n";
    return 2;
  }
  try {
    const int warmup = std::atoi(argv[1]);
    const nlohmann::json params = {{"name", argv[2]}, {"arguments", nlohmann::json::parse(argv[3])}};
    const char* path = std::getenv("PATH");
    const auto exe = mlsb::mcp::find_executable(argv[5], path ? path : "", "");
    if (!exe) throw std::runtime_error(std::string("command '") + argv[5] + "' not found");
    ChildProcess child({*exe, {argv + 5, argv + argc}, {}, "", "", false});
    LineReader reader(child.stdout_fd());
    const nlohmann::json init = {{"jsonrpc", "2.0"},
                                 {"id", 0},
                                 {"method", "initialize"},
                                 {"params",
                                  {{"protocolVersion", "2025-11-25"},
                                   {"capabilities", nlohmann::json::object()},
                                   {"clientInfo", {{"name", "mlsysbench-floor"}, {"version", "1"}}}}}};
    write_line(child, init.dump());
    reader.next();
    write_line(child, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    // Every request is formatted before its clock starts; only the id differs.
    const std::string head = R"({"jsonrpc":"2.0","method":"tools/call","params":)" + params.dump() + R"(,"id":)";
    int64_t id = 0;
    auto call = [&] {
      const std::string request = head + std::to_string(++id) + "}";
      const auto start = std::chrono::steady_clock::now();
      write_line(child, request);
      const std::string reply = reader.next();
      const auto stop = std::chrono::steady_clock::now();
      if (reply.find(R"("result")") == std::string::npos || reply.find(R"("isError":true)") != std::string::npos)
        throw std::runtime_error("tool call failed: " + reply.substr(0, 300));
      return std::chrono::duration<double, std::micro>(stop - start).count();
    };
    mlsb::mcp::bench::run_batches("floor", warmup, call);
  } catch (const std::exception& e) {
    std::cerr << "bench_mcp_floor: " << e.what() << "\n";
    return 1;
  }
}
