#include "mcp/warnings.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <mutex>

namespace mlsb::mcp {

namespace {

std::string line_about(const std::string& server, std::string_view text) {
  return "mlsysbench mcp: server '" + server + "': " + std::string(text) + "\n";
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool append_to_server_log(const std::string& path, const std::string& server, std::string_view bytes) noexcept {
  try {
    // One lock for all logs: the size check and the write must not interleave with another append (the
    // server's stderr reaches the file only through here, so the file's size is the truth).
    static std::mutex mu;
    std::lock_guard lock(mu);
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    struct stat st{};
    bool ok = ::fstat(fd, &st) == 0;
    const auto size = static_cast<std::uintmax_t>(st.st_size);
    if (ok && size <= kMaxServerLogBytes) {  // at the cap exactly, the first byte dropped still gets the note
      const bool fits = bytes.size() <= kMaxServerLogBytes - size;
      ok = write_all(fd, fits ? bytes : bytes.substr(0, kMaxServerLogBytes - size));
      if (ok && !fits) {
        ok = write_all(fd, "\n" + line_about(server, "log reached " + std::to_string(kMaxServerLogBytes >> 20) +
                                                         " MiB; dropping the rest"));
      }
    }
    ::close(fd);
    return ok;
  } catch (...) {
    return false;
  }
}

void WarningSink::operator()(std::string_view text) const noexcept {
  try {
    const std::string line = line_about(server_, text);
    if (!path_.empty() && append_to_server_log(path_, server_, line)) return;
    static std::mutex mu;
    std::lock_guard lock(mu);
    std::cerr << line << std::flush;
  } catch (...) {
  }
}

}  // namespace mlsb::mcp
