#include "mcp/sse_transport.hpp"

#include <algorithm>

#include "mcp/jsonrpc.hpp"
#include "mcp/sse_parser.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {

constexpr auto kEndpointWait = std::chrono::seconds(10);
constexpr size_t kPostBodyExcerpt = 300;

/// `ref` resolved against `base` (the endpoint event usually carries a path and query only).
std::optional<std::string> resolve_url(const std::string& base, const std::string& ref) {
  CURLU* u = curl_url();
  std::optional<std::string> out;
  char* full = nullptr;
  if (curl_url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
      curl_url_set(u, CURLUPART_URL, ref.c_str(), 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK) {
    out = full;
  }
  curl_free(full);
  curl_url_cleanup(u);
  return out;
}

/// Keeps the first kPostBodyExcerpt bytes of a POST's reply body (only an error status shows it).
size_t collect(char* data, size_t size, size_t count, void* body) {
  auto& kept = *static_cast<std::string*>(body);
  kept.append(data, std::min(size * count, kPostBodyExcerpt - kept.size()));
  return size * count;
}

}  // namespace

SseTransport::SseTransport(const ServerSpec& spec) : spec_(spec), warn_(spec.name, spec.stderr_log) {
  if (spec.url.empty()) throw McpError("server '" + spec.name + "': no url to connect to");
}

SseTransport::~SseTransport() { close(); }

void SseTransport::start(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  post_ = make_curl_easy();
  multi_ = curl_multi_init();
  if (!multi_) throw McpError("server '" + spec_.name + "': curl_multi_init failed");
  stream_ = std::thread([this] { stream_loop(); });
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, kEndpointWait, [&] { return !endpoint_.empty() || ended_; })) {
    lock.unlock();
    close();
    throw McpError("server '" + spec_.name + "': no `endpoint` event on " + spec_.url + " within 10 s");
  }
  if (endpoint_.empty()) {
    const std::string why = *ended_;
    lock.unlock();
    close();
    throw McpError(why);
  }
}

void SseTransport::on_event(const SseEvent& event) {
  if (event.event == "endpoint") {
    const auto url = resolve_url(spec_.url, event.data);
    std::lock_guard lock(mu_);
    if (url && endpoint_.empty()) endpoint_ = *url;
    cv_.notify_all();
  } else if (event.event == "message") {
    std::string problem;
    if (auto message = jsonrpc::parse_message(event.data, problem)) on_message_(std::move(*message));
    else warn_("skipping an SSE event whose data " + problem);
  }
}

void SseTransport::stream_loop() {
  SseParser parser([this](const SseEvent& e) { on_event(e); }, jsonrpc::kMaxMessageBytes);
  CurlEasy h = make_curl_easy();
  CurlHeaders headers;
  headers.add("Accept: text/event-stream");
  for (const auto& [k, v] : spec_.headers) headers.add(k + ": " + v);
  auto feed = +[](char* data, size_t size, size_t count, void* p) -> size_t {
    auto& parser = *static_cast<SseParser*>(p);
    parser.feed(std::string_view(data, size * count));
    return parser.overflowed() ? 0 : size * count;
  };
  curl_easy_setopt(h.get(), CURLOPT_URL, spec_.url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, feed);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &parser);
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h.get(), CURLOPT_FAILONERROR, 1L);
  curl_multi_add_handle(multi_, h.get());
  int running = 1;
  while (running) {
    if (curl_multi_perform(multi_, &running) != CURLM_OK) break;
    {
      std::lock_guard lock(mu_);
      if (stop_) break;
    }
    if (running) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
  }
  std::string why = "server '" + spec_.name + "': SSE stream " + spec_.url + " ended";
  if (parser.overflowed()) {
    why += ": an event grew past " + std::to_string(jsonrpc::kMaxMessageBytes >> 20) + " MiB";
  }
  int left = 0;
  while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
    if (m->msg == CURLMSG_DONE && m->data.result != CURLE_OK) why += ": " + std::string(curl_easy_strerror(m->data.result));
  }
  curl_multi_remove_handle(multi_, h.get());
  bool report = false;
  {
    std::lock_guard lock(mu_);
    report = !stop_;
    ended_ = why;
    cv_.notify_all();
  }
  if (report) on_close_(why);
}

void SseTransport::send(const json& message, std::chrono::milliseconds timeout) {
  std::string endpoint;
  {
    std::lock_guard lock(mu_);
    if (ended_) throw McpError(*ended_);
    endpoint = endpoint_;
  }
  const std::string payload = message.dump(-1, ' ', false, json::error_handler_t::replace);
  CurlHeaders headers;
  headers.add("Content-Type: application/json");
  headers.add("Expect:");
  for (const auto& [k, v] : spec_.headers) headers.add(k + ": " + v);
  std::string body;
  std::lock_guard lock(post_mu_);
  CURL* h = post_.get();
  curl_easy_reset(h);
  curl_bind(h, endpoint, headers, {nullptr, &collect, &body});
  const CurlResult r = curl_perform(h, &payload, timeout);
  const std::string where = "server '" + spec_.name + "': POST " + endpoint;
  if (r.rc == CURLE_OPERATION_TIMEDOUT)
    throw TimeoutError(where + " timed out after " + std::to_string(timeout.count()) + " ms");
  if (r.rc != CURLE_OK) throw McpError(where + " failed: " + r.error);
  if (r.status >= 400) {
    throw McpError(where + " answered HTTP " + std::to_string(r.status) + (body.empty() ? "" : ": " + body));
  }
}

void SseTransport::close() noexcept {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  if (multi_) curl_multi_wakeup(multi_);
  if (stream_.joinable()) stream_.join();
  if (multi_) curl_multi_cleanup(std::exchange(multi_, nullptr));
}

}  // namespace mlsb::mcp
