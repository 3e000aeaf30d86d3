#include "workloads/toolbench/agents/model_options.hpp"

#include "workloads/toolbench/agent.hpp"

namespace mlsb::toolbench {

void RunBudget::take_request() {
  std::lock_guard lock(mu_);
  if (!stopped_.empty()) throw AgentError("run stopped: " + stopped_);
  if (max_requests_ > 0 && requests_ >= max_requests_)
    throw AgentError("run budget of " + std::to_string(max_requests_) + " model requests used up (budget_requests)");
  if (max_tokens_ > 0 && tokens_ >= max_tokens_)
    throw AgentError("run budget of " + std::to_string(max_tokens_) + " tokens used up (budget_tokens)");
  ++requests_;
}

void RunBudget::add_tokens(int64_t tokens) {
  std::lock_guard lock(mu_);
  tokens_ += tokens;
}

void RunBudget::stop(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (stopped_.empty()) stopped_ = reason;
}

int64_t RunBudget::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

}  // namespace mlsb::toolbench
