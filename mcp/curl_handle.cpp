#include "mcp/curl_handle.hpp"

#include <algorithm>
#include <cstdint>
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

void curl_bind(CURL* h, const std::string& url, const CurlHeaders& headers, const CurlSinks& sinks) {
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);  // a body set afterwards makes it a POST
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  if (sinks.on_header) {
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, sinks.on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, sinks.data);
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sinks.on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, sinks.data);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
}

CurlResult curl_perform(CURL* h, const std::string* body, std::chrono::milliseconds timeout) {
  if (body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  CurlResult r;
  r.rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);  // errbuf goes out of scope; the handle may be reused
  if (r.rc != CURLE_OK) r.error = *errbuf ? errbuf : curl_easy_strerror(r.rc);
  return r;
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
