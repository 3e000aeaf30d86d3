#include "mcp/tool_server/stdio_server.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "util/json_parse.hpp"
#include "mcp/jsonrpc.hpp"

namespace mlsb::mcp {

namespace {

// Writes all of `text` to `fd`; false when the reader is gone.
bool write_reply(int fd, const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int serve_stdio(ToolServer& server, const std::atomic<bool>& stop) {
  // The protocol keeps the real stdout; fd 1 (std::cout, printf) now points at stderr.
  std::fflush(stdout);
  const int out = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  std::string line;
  while (!stop && std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::optional<nlohmann::json> reply;
    std::string problem;
    if (line.size() > jsonrpc::kMaxMessageBytes) {
      reply = jsonrpc::error(nullptr, jsonrpc::kParseError, "message larger than the limit");
    } else if (auto message = jsonrpc::parse_message(line, problem)) {
      reply = server.handle(*message);
    } else {
      reply = jsonrpc::error(nullptr, jsonrpc::kParseError, "Parse error: the line " + problem);
    }
    if (reply && !write_reply(out, dump_json(*reply) + "\n")) break;
  }
  ::close(out);
  return stop ? 130 : 0;
}

}  // namespace mlsb::mcp
