#include "mcp/curl_handle.hpp"

#include <mutex>
#include <string_view>

#include "util/text.hpp"
#include "mcp/client.hpp"

namespace mlsb::mcp {

CurlEasy make_curl_easy() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CurlEasy h(curl_easy_init());
  if (!h) throw McpError("curl_easy_init failed");
  return h;
}

bool parse_header_line(const char* data, size_t size, std::string& name, std::string& value) {
  const std::string_view line(data, size);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || line.starts_with("HTTP/")) return false;
  name = ascii_lower(line.substr(0, colon));
  std::string_view v = line.substr(colon + 1);
  const size_t first = v.find_first_not_of(" \t");
  const size_t last = v.find_last_not_of(" \t\r\n");
  value = first == std::string_view::npos ? std::string() : std::string(v.substr(first, last - first + 1));
  return true;
}

}  // namespace mlsb::mcp
