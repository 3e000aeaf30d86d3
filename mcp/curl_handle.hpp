#pragma once
// RAII for libcurl easy handles and header lists, libcurl's one-time global initialisation, and the one
// way our HTTP clients (mcp's transports, toolbench's model requests) set up and perform a request.
#include <chrono>
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

/// Where a transfer's reply goes: libcurl's header and write callbacks (CURLOPT_HEADERFUNCTION,
/// CURLOPT_WRITEFUNCTION: returning less than they were given ends the transfer), both called with
/// `data`; a null on_header leaves the header lines unread.
struct CurlSinks {
  curl_write_callback on_header = nullptr;
  curl_write_callback on_body = nullptr;
  void* data = nullptr;
};

/// Points `h` at `url` with the request header lines `headers` (alive until the transfer ends), the reply
/// into `sinks`, without signals (CURLOPT_NOSIGNAL: timeouts in any thread). A GET until curl_perform is
/// given a body; easy handles added to a multi handle are bound this way too.
void curl_bind(CURL* h, const std::string& url, const CurlHeaders& headers, const CurlSinks& sinks);

/// How a transfer ended: libcurl's code, the HTTP status (0 when no response came), and libcurl's
/// message (its error buffer, else curl_easy_strerror) when rc != CURLE_OK.
struct CurlResult {
  CURLcode rc = CURLE_OK;
  long status = 0;
  std::string error;
};

/// Performs the transfer `h` was bound for (curl_bind), a POST of `body` when it is not null (put
/// "Expect:" among the headers to skip the 100-continue round trip), within `timeout` (at least 1 ms)
/// in all. Blocking; never throws for a failed transfer (see CurlResult).
CurlResult curl_perform(CURL* h, const std::string* body, std::chrono::milliseconds timeout);

/// Splits a response header line "Name: value\r\n"; returns false for status lines and the blank line.
/// The name is lower-cased; the value is trimmed.
bool parse_header_line(const char* data, size_t size, std::string& name, std::string& value);

}  // namespace mlsb::mcp
