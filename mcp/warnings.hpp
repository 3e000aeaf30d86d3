#pragma once
// A server's log file (its stderr, pumped through us, plus our warnings about it), kept to its first
// kMaxServerLogBytes, and where the client reports recoverable oddities (non-JSON lines, unknown response
// ids): appended to that log when the server has one, else written to std::cerr.
#include <cstdint>
#include <string>
#include <string_view>

namespace mlsb::mcp {

/// Most bytes kept of one server log; a server flooding its stderr cannot fill the disk.
inline constexpr std::uintmax_t kMaxServerLogBytes = 4u << 20;

/// Appends `bytes` to the server log at `path` (created when missing) unless it already holds
/// kMaxServerLogBytes: the append that reaches the cap writes what fits, then one line
/// "mlsysbench mcp: server 'SERVER': log reached N MiB; dropping the rest"; later appends are dropped.
/// Returns false only when the file cannot be opened or written. Thread-safe; never throws.
bool append_to_server_log(const std::string& path, const std::string& server, std::string_view bytes) noexcept;

class WarningSink {
 public:
  WarningSink(std::string server_name, std::string log_path)
      : server_(std::move(server_name)), path_(std::move(log_path)) {}
  /// Writes one line "mlsysbench mcp: server 'NAME': TEXT" (with append_to_server_log; to std::cerr when
  /// there is no log or it cannot be written). Thread-safe; never throws.
  void operator()(std::string_view text) const noexcept;
  const std::string& server() const { return server_; }

 private:
  std::string server_, path_;
};

}  // namespace mlsb::mcp
