#include "mcp/http_transport.hpp"

#include <optional>
#include <thread>

#include "mcp/jsonrpc.hpp"
#include "mcp/sse_parser.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {
constexpr size_t kErrorExcerpt = 300;
constexpr long kDeleteTimeoutMs = 2000;
constexpr int64_t kDefaultRetryMs = 1000;  // reconnection wait when the stream set none
constexpr int kMaxResumes = 5;             // GETs to resume one request's stream
constexpr int kMaxListenFailures = 3;      // failed standalone-stream GETs in a row before giving up
constexpr auto kListenStartWait = std::chrono::seconds(5);  // listen() waits this long for the first GET
using Clock = std::chrono::steady_clock;
}  // namespace

/// One HTTP exchange in flight (a POST, a resuming GET, the standalone stream): its reply so far.
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
    if (message.is_object() && jsonrpc::classify(message) == jsonrpc::Kind::response) {
      if (awaited_id && message["id"] == *awaited_id) answered = true;
      std::lock_guard lock(self->mu_);
      self->answered_.insert(message["id"].dump());
    }
    self->on_message_(std::move(message));
  }
  /// Whether the awaited response came, on this exchange or another (the standalone stream, say).
  bool done() {
    if (!answered && awaited_id) {
      std::lock_guard lock(self->mu_);
      answered = self->answered_.count(awaited_id->dump()) > 0;
    }
    return answered;
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

CurlSinks HttpTransport::sinks(Exchange& ex) { return {&HttpTransport::on_header, &HttpTransport::on_body, &ex}; }

CURLcode HttpTransport::perform(Exchange& ex, const CurlHeaders& headers, const std::string* payload,
                                std::chrono::milliseconds timeout, std::string& error) {
  CurlEasy h = acquire();
  curl_bind(h.get(), spec_.url, headers, sinks(ex));
  if (ex.awaited_id) {  // a response that comes on another stream ends the wait (checked about once a second)
    curl_easy_setopt(h.get(), CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h.get(), CURLOPT_XFERINFODATA, &ex);
    curl_easy_setopt(h.get(), CURLOPT_XFERINFOFUNCTION, +[](void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
      return static_cast<Exchange*>(p)->done() ? 1 : 0;
    });
  }
  CurlResult r = curl_perform(h.get(), payload, timeout);
  release(std::move(h));
  ex.status = r.status;
  error = std::move(r.error);
  return r.rc;
}

void HttpTransport::send(const json& message, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const bool is_request = jsonrpc::classify(message) == jsonrpc::Kind::request;
  Exchange ex(this, is_request ? std::optional<json>(message["id"]) : std::nullopt);
  const std::string payload = message.dump(-1, ' ', false, json::error_handler_t::replace);
  CurlHeaders headers;
  headers.add("Content-Type: application/json");
  headers.add("Accept: application/json, text/event-stream");
  headers.add("Expect:");  // no 100-continue round trip for larger bodies
  add_common_headers(headers);

  std::string error;
  const CURLcode rc = perform(ex, headers, &payload, timeout, error);
  const std::string where = "server '" + spec_.name + "': POST " + spec_.url;
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    throw TimeoutError(where + " timed out after " + std::to_string(timeout.count()) + " ms");
  }
  if (ex.too_big) {
    throw McpError(where + " answered a message larger than " + std::to_string(jsonrpc::kMaxMessageBytes >> 20) +
                   " MiB");
  }
  const bool ended_by_us = (rc == CURLE_WRITE_ERROR || rc == CURLE_ABORTED_BY_CALLBACK) && ex.answered;
  if (rc != CURLE_OK && !ended_by_us) {
    throw McpError(where + " failed: " + error);
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
  if (ex.awaited_id && !ex.done() && ex.content_type.starts_with("text/event-stream")) resume(ex, deadline);
  if (ex.awaited_id) {
    std::lock_guard lock(mu_);
    answered_.erase(ex.awaited_id->dump());
  }
}

void HttpTransport::resume(Exchange& posted, Clock::time_point deadline) {
  const std::string where = "server '" + spec_.name + "': the SSE stream of a POST to " + spec_.url +
                            " ended before the response";
  if (posted.done()) return;  // the response came on the standalone stream
  std::string last_id = posted.sse.last_event_id();
  int64_t retry_ms = posted.sse.retry_ms().value_or(kDefaultRetryMs);
  if (last_id.empty()) throw McpError(where + " (no event id to resume it from)");
  for (int attempt = 1; attempt <= kMaxResumes; ++attempt) {
    if (Clock::now() + std::chrono::milliseconds(retry_ms) >= deadline)
      throw TimeoutError(where + "; the request timed out before it could be resumed");
    std::this_thread::sleep_for(std::chrono::milliseconds(retry_ms));  // the server's `retry:`, as SEP-1699 asks
    if (posted.done()) return;
    Exchange ex(this, posted.awaited_id);
    CurlHeaders headers;
    headers.add("Accept: text/event-stream");
    headers.add("Last-Event-ID: " + last_id);
    add_common_headers(headers);
    std::string error;
    const CURLcode rc = perform(ex, headers, nullptr,
                                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()), error);
    if (ex.done()) {
      posted.answered = true;
      return;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) throw TimeoutError(where + "; resuming it with GET timed out");
    if (ex.status >= 400)
      throw McpError(where + "; resuming it with GET (Last-Event-ID " + last_id + ") got HTTP " +
                     std::to_string(ex.status));
    if (rc != CURLE_OK) throw McpError(where + "; resuming it with GET failed: " + error);
    if (!ex.sse.last_event_id().empty()) last_id = ex.sse.last_event_id();
    retry_ms = ex.sse.retry_ms().value_or(retry_ms);
  }
  throw McpError(where + "; " + std::to_string(kMaxResumes) + " GETs did not bring it");
}

void HttpTransport::listen() {
  std::unique_lock lock(mu_);
  if (closed_ || listener_.joinable()) return;
  multi_ = curl_multi_init();
  if (!multi_) throw McpError("server '" + spec_.name + "': curl_multi_init failed");
  listener_ = std::thread([this] { listen_loop(); });
  // Wait until the server has answered the first GET (or it failed), so the stream is open before the
  // requests that follow: a server may send on it what concerns them.
  stop_cv_.wait_for(lock, kListenStartWait, [this] { return listening_ || stop_listening_; });
}

void HttpTransport::listen_loop() {
  std::string last_id, problem;
  int64_t retry_ms = kDefaultRetryMs;
  for (int failures = 0; !stop_listening_;) {
    Exchange ex(this, std::nullopt);
    CurlHeaders headers;
    headers.add("Accept: text/event-stream");
    if (!last_id.empty()) headers.add("Last-Event-ID: " + last_id);
    add_common_headers(headers);
    CurlEasy h = make_curl_easy();
    curl_bind(h.get(), spec_.url, headers, sinks(ex));
    curl_multi_add_handle(multi_, h.get());
    int running = 1;
    while (running && !stop_listening_) {
      curl_multi_perform(multi_, &running);
      long status = 0;
      curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
      if ((status != 0 || !running) && !listening_) {
        std::lock_guard lock(mu_);
        listening_ = true;
        stop_cv_.notify_all();
      }
      if (running) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);  // close() wakes it
    }
    CURLcode rc = CURLE_OK;
    int queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &queued))
      if (m->msg == CURLMSG_DONE) rc = m->data.result;
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &ex.status);
    curl_multi_remove_handle(multi_, h.get());
    if (stop_listening_ || ex.status == 405) return;  // closing, or the server offers no standalone stream
    const bool got_events = !ex.sse.last_event_id().empty();
    if (got_events) last_id = ex.sse.last_event_id();
    retry_ms = ex.sse.retry_ms().value_or(retry_ms);
    if (ex.status >= 400 || (rc != CURLE_OK && !got_events)) {
      problem = ex.status >= 400 ? "HTTP " + std::to_string(ex.status) : curl_easy_strerror(rc);
      if (++failures >= kMaxListenFailures) {
        warn_("the standalone SSE stream (GET " + spec_.url + ") failed " + std::to_string(failures) +
              " times; server requests outside our own requests will not arrive: " + problem);
        return;
      }
    } else {
      failures = 0;
    }
    std::unique_lock lock(mu_);
    stop_cv_.wait_for(lock, std::chrono::milliseconds(retry_ms), [this] { return stop_listening_.load(); });
  }
}

void HttpTransport::stop_listening() noexcept {
  {
    std::lock_guard lock(mu_);
    stop_listening_ = true;
    if (multi_) curl_multi_wakeup(multi_);
  }
  stop_cv_.notify_all();
  if (listener_.joinable()) listener_.join();
  if (multi_) curl_multi_cleanup(multi_);
  multi_ = nullptr;
}

void HttpTransport::close() noexcept {
  stop_listening();
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
