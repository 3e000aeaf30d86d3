#include "workloads/moe_train/precision/precision.hpp"

#include <stdexcept>

namespace mlsb::moe_train::precision {

const char* site_name(Site site) {
  static const char* const names[kSites] = {"expert.fc1", "expert.fc2", "shared.fc1",
                                            "shared.fc2", "attn.qkv",   "attn.proj"};
  return names[static_cast<int>(site)];
}

Precision::Precision(const PrecisionConfig& config, int64_t blocks) : config_(config) {
  if (config.recipe == Recipe::Fp32) return;
  if (config.bf16_blocks > blocks)
    throw std::invalid_argument("bf16_blocks: " + std::to_string(config.bf16_blocks) + " blocks kept in bf16, but the "
                                "model has " + std::to_string(blocks));
  const int64_t kept_from =
      blocks - (config.bf16_blocks >= 0 ? config.bf16_blocks : blocks_kept_in_bf16(config.recipe, blocks));
  for (int64_t b = 0; b < blocks; ++b)
    for (int s = 0; s < kSites; ++s)
      sites_.push_back(std::make_unique<QuantLinear>(
          "block" + std::to_string(b) + "." + site_name(static_cast<Site>(s)),
          b >= kept_from ? Recipe::Bf16 : config.recipe, config));
}

QuantLinear* Precision::site(int64_t block, Site site) const {
  if (sites_.empty()) return nullptr;
  return sites_[static_cast<size_t>(block * kSites + static_cast<int>(site))].get();
}

void Precision::begin_step(bool check) {
  for (auto& s : sites_) s->set_checking(check);
}

void Precision::end_step() {
  for (auto& s : sites_) s->end_step();
}

SiteStats Precision::total() const {
  SiteStats t;
  for (const auto& s : sites_) t.add(s->stats());
  return t;
}

double Precision::check_seconds() const {
  double t = 0;
  for (const auto& s : sites_) t += s->check_seconds();
  return t;
}

}  // namespace mlsb::moe_train::precision
