#pragma once
// Settings of the LLM agents (openai, anthropic) and the run-level budget they share.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace mlsb::toolbench {

/// A budget shared by every agent of one case (all its workers): model requests and billed tokens
/// (input + output) across the whole sample; 0 = unlimited. Thread-safe.
class RunBudget {
 public:
  RunBudget(int64_t max_requests, int64_t max_tokens) : max_requests_(max_requests), max_tokens_(max_tokens) {}

  /// Takes one request (an attempt, retries included). Throws AgentError when the request or token
  /// budget is used up, or when stop() was called (with its reason).
  void take_request();
  /// Adds the tokens a reply billed.
  void add_tokens(int64_t tokens);
  /// Ends the run for every agent: a failure no later request can avoid (rejected credentials, a
  /// model or endpoint that does not exist). The first reason is kept.
  void stop(const std::string& reason);

  int64_t requests() const;

 private:
  const int64_t max_requests_, max_tokens_;
  mutable std::mutex mu_;
  int64_t requests_ = 0, tokens_ = 0;
  std::string stopped_;
};

/// What an LLM agent needs besides its wire format.
struct ModelOptions {
  std::string model;     ///< sent as the request's `model`
  std::string base_url;  ///< "" = the API's public endpoint (ChatFormat::default_base_url)
  std::string api_key;   ///< the key itself (read from the environment by the caller); "" = none sent.
                         ///< Never written anywhere: error texts that echo it are redacted.
  double temperature = 0;
  int64_t max_output_tokens = 1024;  ///< `max_tokens` of each request
  /// OpenAI-compatible `seed`: trial t sends seed + t (reproducible sampling where the server honours
  /// it); negative = not sent. The Messages API has no seed.
  int64_t seed = -1;
  std::chrono::milliseconds request_timeout{60000};  ///< one attempt
  int max_retries = 4;                               ///< attempts after the first
  std::chrono::milliseconds retry_base{500};         ///< first backoff (see model_http.hpp)
  std::chrono::milliseconds task_deadline{0};        ///< per task trial, from begin(); 0 = none
  std::shared_ptr<RunBudget> budget;                 ///< null = unlimited
};

}  // namespace mlsb::toolbench
