#include "mcp/http_transport.hpp"

#include <optional>

#include "mcp/jsonrpc.hpp"
#include "mcp/sse_parser.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {
constexpr size_t kErrorExcerpt = 300;
constexpr long kDeleteTimeoutMs = 2000;
}  // namespace

/// One POST in flight: what its reply looked like so far.
struct HttpTransport::Exchange {
  HttpTransport* self;
  std::optional<json> awaited_id;  ///< the id of the request sent, if it was one
  bool answered = false;           ///< its response arrived (the rest of an SSE stream is not awaited)
  bool too_big = false;            ///< the body or an SSE event outgrew jsonrpc::kMaxMessageBytes
  std::string content_type, session_id, body;
  long status = 0;
  SseParser sse;

  Exchange(HttpTransport* t, std::optional<json> id)
      : self(t), awaited_id(std::move(id)),
        sse([this](const SseEvent& e) { on_event(e); }, jsonrpc::kMaxMessageBytes) {}

  void deliver(json message) {
    if (awaited_id && message.is_object() && jsonrpc::classify(message) == jsonrpc::Kind::response &&
        message["id"] == *awaited_id) {
      answered = true;
    }
    self->on_message_(std::move(message));
  }
  void on_event(const SseEvent& e) {
    if (e.event != "message" || e.data.empty()) return;
    std::string problem;
    if (auto message = jsonrpc::parse_message(e.data, problem)) deliver(std::move(*message));
    else self->warn_("skipping an SSE event whose data " + problem);
  }
};

HttpTransport::HttpTransport(const ServerSpec& spec) : spec_(spec), warn_(spec.name, spec.stderr_log) {
  if (spec.url.empty()) throw McpError("server '" + spec.name + "': no url to connect to");
}

HttpTransport::~HttpTransport() { close(); }

void HttpTransport::start(MessageHandler on_message, CloseHandler) { on_message_ = std::move(on_message); }

void HttpTransport::set_protocol_version(const std::string& version) {
  std::lock_guard lock(mu_);
  protocol_version_ = version;
}

CurlEasy HttpTransport::acquire() {
  std::lock_guard lock(mu_);
  if (closed_) throw McpError("server '" + spec_.name + "': connection closed");
  if (idle_.empty()) return make_curl_easy();
  CurlEasy h = std::move(idle_.back());
  idle_.pop_back();
  curl_easy_reset(h.get());  // keeps its live connection
  return h;
}

void HttpTransport::release(CurlEasy handle) {
  std::lock_guard lock(mu_);
  if (!closed_) idle_.push_back(std::move(handle));
}

void HttpTransport::add_common_headers(CurlHeaders& headers) {
  std::lock_guard lock(mu_);
  if (!session_id_.empty()) headers.add("Mcp-Session-Id: " + session_id_);
  if (!protocol_version_.empty()) headers.add("MCP-Protocol-Version: " + protocol_version_);
  for (const auto& [k, v] : spec_.headers) headers.add(k + ": " + v);
}

size_t HttpTransport::on_header(char* data, size_t size, size_t count, void* p) {
  auto& ex = *static_cast<Exchange*>(p);
  std::string name, value;
  if (parse_header_line(data, size * count, name, value)) {
    if (name == "content-type") ex.content_type = value;
    else if (name == "mcp-session-id") ex.session_id = value;
  }
  return size * count;
}

size_t HttpTransport::on_body(char* data, size_t size, size_t count, void* p) {
  auto& ex = *static_cast<Exchange*>(p);
  const size_t n = size * count;
  // Returning less than n ends the transfer: once answered, the server need not close the stream for us.
  if (ex.content_type.starts_with("text/event-stream")) {
    ex.sse.feed(std::string_view(data, n));
    ex.too_big = ex.sse.overflowed();
    return ex.answered || ex.too_big ? 0 : n;
  }
  ex.too_big = ex.body.size() + n > jsonrpc::kMaxMessageBytes;
  if (!ex.too_big) ex.body.append(data, n);
  return ex.too_big ? 0 : n;
}

void HttpTransport::send(const json& message, std::chrono::milliseconds timeout) {
  const bool is_request = jsonrpc::classify(message) == jsonrpc::Kind::request;
  Exchange ex(this, is_request ? std::optional<json>(message["id"]) : std::nullopt);
  const std::string payload = message.dump(-1, ' ', false, json::error_handler_t::replace);
  CurlHeaders headers;
  headers.add("Content-Type: application/json");
  headers.add("Accept: application/json, text/event-stream");
  headers.add("Expect:");  // no 100-continue round trip for larger bodies
  add_common_headers(headers);

  CurlEasy h = acquire();
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h.get(), CURLOPT_URL, spec_.url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h.get(), CURLOPT_HEADERFUNCTION, &HttpTransport::on_header);
  curl_easy_setopt(h.get(), CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, &HttpTransport::on_body);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, errbuf);
  const CURLcode rc = curl_easy_perform(h.get());
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &ex.status);
  release(std::move(h));

  const std::string where = "server '" + spec_.name + "': POST " + spec_.url;
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    throw TimeoutError(where + " timed out after " + std::to_string(timeout.count()) + " ms");
  }
  if (ex.too_big) {
    throw McpError(where + " answered a message larger than " + std::to_string(jsonrpc::kMaxMessageBytes >> 20) +
                   " MiB");
  }
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && ex.answered)) {
    throw McpError(where + " failed: " + (*errbuf ? errbuf : curl_easy_strerror(rc)));
  }
  if (ex.status >= 400 || ex.status < 200) {
    throw McpError(where + " answered HTTP " + std::to_string(ex.status) +
                   (ex.body.empty() ? "" : ": " + ex.body.substr(0, kErrorExcerpt)));
  }
  if (!ex.session_id.empty()) {
    std::lock_guard lock(mu_);
    session_id_ = ex.session_id;
  }
  if (!ex.body.empty()) {
    std::string problem;
    auto reply = jsonrpc::parse_message(ex.body, problem);
    if (!reply) throw McpError(where + " answered a body that " + problem);
    ex.deliver(std::move(*reply));
  }
}

void HttpTransport::close() noexcept {
  CurlEasy h;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    if (session_id_.empty()) {
      idle_.clear();
      return;
    }
    if (!idle_.empty()) h = std::move(idle_.back());
    idle_.clear();
  }
  try {
    if (h) curl_easy_reset(h.get());
    else h = make_curl_easy();
    CurlHeaders headers;
    add_common_headers(headers);
    curl_easy_setopt(h.get(), CURLOPT_URL, spec_.url.c_str());
    curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, "DELETE");
    curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, kDeleteTimeoutMs);
    curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, +[](char*, size_t s, size_t n, void*) { return s * n; });
    curl_easy_perform(h.get());  // a 405 (the server does not let clients end sessions) is fine too
  } catch (...) {
  }
}

}  // namespace mlsb::mcp
