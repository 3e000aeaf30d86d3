#include "mcp/warnings.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <mutex>

namespace mlsb::mcp {

void WarningSink::operator()(std::string_view text) const noexcept {
  try {
    const std::string line = "mlsysbench mcp: server '" + server_ + "': " + std::string(text) + "\n";
    if (!path_.empty()) {
      // O_APPEND: one write() per line, so lines never interleave with the server's own stderr.
      const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) {
        const ssize_t n = ::write(fd, line.data(), line.size());
        ::close(fd);
        if (n == static_cast<ssize_t>(line.size())) return;
      }
    }
    static std::mutex mu;
    std::lock_guard lock(mu);
    std::cerr << line << std::flush;
  } catch (...) {
  }
}

}  // namespace mlsb::mcp
