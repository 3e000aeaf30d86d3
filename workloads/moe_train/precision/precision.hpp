#pragma once
// A model's linear layers under one recipe: a QuantLinear per block and site, the blocks a recipe keeps in bf16
// (recipe.hpp), the steps checked against fp32, and the totals a benchmark records.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/moe_train/precision/quant_linear.hpp"

namespace mlsb::moe_train::precision {

/// The quantised linear layers of a transformer block with an MoE FFN.
enum class Site { ExpertFc1, ExpertFc2, SharedFc1, SharedFc2, AttnQkv, AttnProj };
constexpr int kSites = 6;
/// The LM checks its GEMMs against fp32 every kCheckEvery-th step: a check costs an fp32 GEMM.
constexpr int64_t kCheckEvery = 10;

class Precision {
 public:
  /// Sites of `blocks` blocks named "block<i>.<site>" ("block0.expert.fc1"), the last config.bf16_blocks of them
  /// (or the recipe's own count) in bf16. Throws std::invalid_argument naming the axis for a bad history length
  /// (amax_history) or more bf16 blocks than blocks (bf16_blocks).
  Precision(const PrecisionConfig& config, int64_t blocks);
  /// The site's quantised GEMMs, or nullptr for fp32 (the model's own path).
  QuantLinear* site(int64_t block, Site site) const;
  /// Before a step: whether its GEMMs are checked against fp32 (the LM checks every kCheckEvery-th step).
  void begin_step(bool check);
  /// After a step: delayed scaling's histories roll.
  void end_step();
  /// Every site's numbers added up.
  SiteStats total() const;
  /// Every site, in block then Site order (empty for fp32).
  const std::vector<std::unique_ptr<QuantLinear>>& sites() const { return sites_; }
  /// Seconds spent in checks since creation, summed over sites (to leave out of step times).
  double check_seconds() const;
  const PrecisionConfig& config() const { return config_; }

 private:
  PrecisionConfig config_;
  std::vector<std::unique_ptr<QuantLinear>> sites_;  // [block * kSites + site]
};

/// "expert.fc1", "expert.fc2", "shared.fc1", "shared.fc2", "attn.qkv", "attn.proj".
const char* site_name(Site site);

}  // namespace mlsb::moe_train::precision
