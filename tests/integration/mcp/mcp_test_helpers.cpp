#include "integration/mcp/mcp_test_helpers.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "support/test_support.hpp"

namespace mlsb::mcp::test {

namespace fs = std::filesystem;

ServerSpec fake_spec(const std::string& script, std::vector<std::string> args) {
  ServerSpec spec;
  spec.name = script;
  spec.command = {"node", (mlsb::test::source_dir() / "tests/integration/mcp/fakes" / script).string()};
  spec.command.insert(spec.command.end(), args.begin(), args.end());
  return spec;
}

std::string npm_server(const std::string& name) {
  const fs::path p = mlsb::test::npm_bin_dir() / name;
  return fs::exists(p) ? p.string() : "";
}

int open_fd_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

namespace {

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(s);
  return ntohs(addr.sin_port);
}

bool accepts(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(s);
  return ok;
}

}  // namespace

EverythingHttpServer::EverythingHttpServer(const std::string& mode, const fs::path& log) : port_(free_port()) {
  const std::string bin = npm_server("mcp-server-everything");
  process_ = std::make_unique<ChildProcess>(SpawnOptions{
      bin, {bin, mode}, {{"PORT", std::to_string(port_)}}, "", log.string()});
  drain_ = std::thread([fd = process_->stdout_fd(), log] {
    std::ofstream out(log, std::ios::app);
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.write(buf, n).flush();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!accepts(port_)) {
    if (process_->wait_for(std::chrono::milliseconds(0)) || std::chrono::steady_clock::now() > deadline) {
      process_->stop(std::chrono::milliseconds(0));
      drain_.join();
      throw std::runtime_error("mcp-server-everything " + mode + " did not listen on port " +
                               std::to_string(port_) + "; see " + log.string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

EverythingHttpServer::~EverythingHttpServer() {
  process_->stop(std::chrono::milliseconds(0));  // SIGTERM at once: an HTTP server ignores stdin
  drain_.join();
}

std::string EverythingHttpServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

}  // namespace mlsb::mcp::test
