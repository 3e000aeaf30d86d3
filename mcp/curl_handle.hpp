#pragma once
// RAII for libcurl easy handles and header lists, and libcurl's one-time global initialisation.
#include <memory>
#include <string>

#include <curl/curl.h>

namespace mlsb::mcp {

struct CurlEasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;

/// A new easy handle (curl_global_init runs once, thread-safely, before the first). Throws McpError.
CurlEasy make_curl_easy();

/// A curl_slist of "Name: value" lines, freed at destruction.
class CurlHeaders {
 public:
  CurlHeaders() = default;
  ~CurlHeaders() { curl_slist_free_all(list_); }
  CurlHeaders(const CurlHeaders&) = delete;
  CurlHeaders& operator=(const CurlHeaders&) = delete;
  void add(const std::string& line) { list_ = curl_slist_append(list_, line.c_str()); }
  curl_slist* get() const { return list_; }

 private:
  curl_slist* list_ = nullptr;
};

/// Splits a response header line "Name: value\r\n"; returns false for status lines and the blank line.
/// The name is lower-cased; the value is trimmed.
bool parse_header_line(const char* data, size_t size, std::string& name, std::string& value);

}  // namespace mlsb::mcp
