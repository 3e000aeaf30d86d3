#pragma once
// One model request over HTTP (libcurl) with retries: backoff on 429, 5xx, timeouts, dropped
// connections and replies cut short, honouring Retry-After, bounded by the task deadline and the
// run budget. Failures it cannot get past become AgentError, with any echo of the API key redacted.
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/agents/chat_format.hpp"
#include "workloads/toolbench/agents/model_options.hpp"

namespace mlsb::toolbench {

/// `text` with every occurrence of `secret` replaced by "[redacted]" ("" = unchanged).
std::string redact(std::string text, const std::string& secret);

/// Whether an HTTP status is worth another attempt: 408, 409, 425, 429 and every 5xx (529 is
/// Anthropic's "overloaded").
bool retryable_status(long status);

/// The wait before retry number `retry` (1 = the first retry): "full jitter" backoff (AWS
/// Architecture Blog, "Exponential Backoff and Jitter", 2015), uniform in [0, min(30 s, base·2^(retry-1))],
/// or the server's Retry-After when that is longer (capped at 60 s).
std::chrono::milliseconds backoff(int retry, std::chrono::milliseconds base, std::optional<double> retry_after_s,
                                  std::mt19937_64& rng);

/// A parsed reply and what getting it took.
struct ModelResponse {
  ModelReply reply;
  int attempts = 0;
  double latency_ms = 0;  ///< from the first attempt to the parsed reply, backoff included
};

/// POSTs `body` to `format`'s endpoint under `options` and parses the reply. Each attempt takes one
/// request from options.budget and waits at most min(options.request_timeout, time to `deadline`).
/// Retried (up to options.max_retries times): retryable_status, a timeout, a failed or dropped
/// connection, a reply cut short, and a 200 whose body is not a reply of the format. Throws AgentError
/// when the retries, the deadline or the budget run out, or on any other status (401, 403 and 404 also
/// stop the run through the budget: no later request could succeed). Messages quote at most 300 bytes
/// of a reply, with the API key redacted.
ModelResponse request_model(const ChatFormat& format, const ModelOptions& options, const nlohmann::json& body,
                            std::chrono::steady_clock::time_point deadline, std::mt19937_64& rng);

}  // namespace mlsb::toolbench
