#include "workloads/toolbench/agents/model_request.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "util/json_parse.hpp"
#include "util/text.hpp"
#include "mcp/curl_handle.hpp"
#include "workloads/toolbench/agent.hpp"

namespace mlsb::toolbench {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kMaxReplyBytes = std::size_t{64} << 20;
constexpr std::size_t kExcerpt = 300;

struct HttpReply {
  long status = 0;
  std::string body;
  std::optional<double> retry_after_s;
  CURLcode rc = CURLE_OK;
  std::string error;  // curl's message when rc != CURLE_OK
  bool too_big = false;
};

size_t on_header(char* data, size_t size, size_t count, void* p) {
  auto& r = *static_cast<HttpReply*>(p);
  std::string name, value;
  if (mcp::parse_header_line(data, size * count, name, value)) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = end && *end == '\0' && !value.empty() && std::isfinite(v) && v >= 0;
    if (name == "retry-after-ms" && number) r.retry_after_s = v / 1000;
    else if (name == "retry-after" && number && !r.retry_after_s) r.retry_after_s = v;
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* p) {
  auto& r = *static_cast<HttpReply*>(p);
  const size_t n = size * count;
  r.too_big = r.body.size() + n > kMaxReplyBytes;
  if (r.too_big) return 0;
  r.body.append(data, n);
  return n;
}

HttpReply post(const std::string& url, const std::vector<std::string>& header_lines, const std::string& payload,
               std::chrono::milliseconds timeout) {
  HttpReply r;
  mcp::CurlEasy h = mcp::make_curl_easy();
  mcp::CurlHeaders headers;
  for (const auto& line : header_lines) headers.add(line);
  headers.add("Expect:");
  mcp::curl_bind(h.get(), url, headers, {&on_header, &on_body, &r});
  curl_easy_setopt(h.get(), CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  mcp::CurlResult done = mcp::curl_perform(h.get(), &payload, timeout);
  r.rc = done.rc;
  r.status = done.status;
  r.error = std::move(done.error);
  return r;
}

bool connect_failure(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 10))
    text.replace(at, secret.size(), "[redacted]");
  return text;
}

bool retryable_status(long status) {
  return status == 408 || status == 409 || status == 425 || status == 429 || (status >= 500 && status <= 599);
}

std::chrono::milliseconds backoff(int retry, std::chrono::milliseconds base, std::optional<double> retry_after_s,
                                  std::mt19937_64& rng) {
  const double cap = std::min(30000.0, static_cast<double>(base.count()) * std::ldexp(1.0, std::min(retry - 1, 30)));
  const double jittered = std::uniform_real_distribution<double>(0, cap)(rng);
  const double server = retry_after_s ? std::min(60000.0, *retry_after_s * 1000) : 0.0;
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(jittered, server)));
}

ModelResponse request_model(const ChatFormat& format, const ModelOptions& options, const json& body,
                            Clock::time_point deadline, std::mt19937_64& rng) {
  const std::string url = format.endpoint(options.base_url.empty() ? format.default_base_url() : options.base_url);
  const std::vector<std::string> headers = format.headers(options.api_key);
  const std::string payload = dump_json(body);
  const auto t0 = Clock::now();
  const auto fail = [&](const std::string& why) -> AgentError {
    return AgentError(redact(format.name() + " API " + url + ": " + why, options.api_key));
  };
  std::string last;  // why the last attempt failed
  for (int attempt = 1;; ++attempt) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      throw fail("task deadline passed" + (last.empty() ? std::string() : " (last attempt: " + last + ")"));
    if (options.budget) options.budget->take_request();
    const HttpReply r = post(url, headers, payload, std::min(options.request_timeout, left));
    bool retry = true;
    if (r.too_big) {
      last = "reply larger than " + std::to_string(kMaxReplyBytes >> 20) + " MiB";
      retry = false;
    } else if (r.rc == CURLE_OPERATION_TIMEDOUT) {
      last = "no reply within " + std::to_string(std::min(options.request_timeout, left).count()) + " ms";
    } else if (r.rc != CURLE_OK) {
      last = r.error;
      if (connect_failure(r.rc)) last = "cannot connect: " + last;
    } else if (r.status != 200) {
      last = "HTTP " + std::to_string(r.status) + (r.body.empty() ? "" : ": " + utf8_truncate(r.body, kExcerpt));
      retry = retryable_status(r.status);
      if (r.status == 401 || r.status == 403 || r.status == 404) {
        const std::string why = redact(format.name() + " API " + url + ": " + last, options.api_key);
        if (options.budget) options.budget->stop(why);
        throw AgentError(why);
      }
    } else {
      try {
        // Whatever the reply quotes of the key (an answer, an argument) is redacted before anything keeps it.
        ModelResponse out{format.parse(parse_json_limited(redact(r.body, options.api_key))), attempt, 0};
        out.latency_ms = ms_since(t0);
        if (options.budget) options.budget->add_tokens(out.reply.input_tokens + out.reply.output_tokens);
        return out;
      } catch (const json::parse_error& e) {
        last = "reply is not JSON (" + json_syntax_error(e) + "): " + utf8_truncate(r.body, kExcerpt);
      } catch (const std::exception& e) {
        last = std::string(e.what()) + ": " + utf8_truncate(r.body, kExcerpt);
      }
    }
    if (!retry) throw fail(last);
    if (attempt > options.max_retries) {
      const std::string why = redact(format.name() + " API " + url + ": " + last + " (after " +
                                         std::to_string(attempt) + " attempts)", options.api_key);
      if (connect_failure(r.rc) && options.budget) options.budget->stop(why);
      throw AgentError(why);
    }
    const auto wait = backoff(attempt, options.retry_base, r.retry_after_s, rng);
    if (Clock::now() + wait >= deadline) throw fail("task deadline would pass before the next retry (last attempt: " + last + ")");
    std::this_thread::sleep_for(wait);
  }
}

}  // namespace mlsb::toolbench
