#pragma once
// Shared by the MCP integration tests: specs for the fake Node servers and the npm servers, and a
// Streamable-HTTP/SSE server process on a free port.
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "mcp/child_process.hpp"
#include "mcp/client.hpp"

namespace mlsb::mcp::test {

/// A stdio spec running `node tests/integration/mcp/fakes/<script>` with `args`.
ServerSpec fake_spec(const std::string& script, std::vector<std::string> args = {});
/// The npm bin `name` (e.g. "mcp-server-filesystem"), or "" when scripts/setup-deps has not installed it.
std::string npm_server(const std::string& name);
/// Number of open descriptors of this process.
int open_fd_count();

/// `mcp-server-everything MODE` (streamableHttp or sse) listening on a free localhost port; killed at
/// destruction. Its stdout and stderr go to `log`. Throws std::runtime_error when it does not accept connections within 15 s.
class EverythingHttpServer {
 public:
  EverythingHttpServer(const std::string& mode, const std::filesystem::path& log);
  ~EverythingHttpServer();
  std::string url(const std::string& path) const;

 private:
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
  std::thread drain_;  ///< copies the server's stdout (it logs every request there) to the log
};

}  // namespace mlsb::mcp::test
