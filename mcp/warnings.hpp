#pragma once
// Where the client reports recoverable oddities (non-JSON lines, unknown response ids): appended to the
// server's stderr log when it has one, else written to std::cerr.
#include <string>
#include <string_view>

namespace mlsb::mcp {

class WarningSink {
 public:
  WarningSink(std::string server_name, std::string log_path)
      : server_(std::move(server_name)), path_(std::move(log_path)) {}
  /// Writes one line "mlsysbench mcp: server 'NAME': TEXT". Thread-safe; never throws.
  void operator()(std::string_view text) const noexcept;
  const std::string& server() const { return server_; }

 private:
  std::string server_, path_;
};

}  // namespace mlsb::mcp
