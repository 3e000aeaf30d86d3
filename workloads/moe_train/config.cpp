#include "workloads/moe_train/config.hpp"

#include <cmath>
#include <stdexcept>

#include "workloads/common/model_presets.hpp"

namespace mlsb::moe_train {

RouterKind parse_router(std::string_view name) {
  if (name == "topk_softmax") return RouterKind::TopkSoftmax;
  if (name == "softmax_topk") return RouterKind::SoftmaxTopk;
  if (name == "sigmoid") return RouterKind::Sigmoid;
  throw std::invalid_argument("router: unknown '" + std::string(name) + "' (topk_softmax, softmax_topk, sigmoid)");
}

std::string_view to_string(RouterKind r) {
  switch (r) {
    case RouterKind::TopkSoftmax: return "topk_softmax";
    case RouterKind::SoftmaxTopk: return "softmax_topk";
    case RouterKind::Sigmoid: return "sigmoid";
  }
  return "?";
}

DropPolicy parse_drop_policy(std::string_view name) {
  if (name == "probs") return DropPolicy::Probs;
  if (name == "position") return DropPolicy::Position;
  throw std::invalid_argument("drop_policy: unknown '" + std::string(name) + "' (probs, position)");
}

void validate(const MoeConfig& c, int ranks) {
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (c.hidden < 1) fail("hidden: must be at least 1");
  if (c.ffn < 1) fail("ffn: must be at least 1");
  if (c.experts < 1) fail("experts: must be at least 1");
  if (c.topk < 1 || c.topk > c.experts)
    fail("topk: " + std::to_string(c.topk) + " must lie in [1, experts = " + std::to_string(c.experts) + "]");
  if (ranks > c.experts)
    fail("experts: " + std::to_string(c.experts) + " experts for " + std::to_string(ranks) +
         " ranks: expert parallelism needs at least one expert per rank");
  if (ranks < 1 || c.experts % ranks != 0)
    fail("experts: " + std::to_string(c.experts) + " experts do not split evenly over " + std::to_string(ranks) +
         " ranks (expert parallelism shards whole experts)");
  if (!(c.capacity_factor >= 0) || !std::isfinite(c.capacity_factor))
    fail("capacity_factor: must be > 0, or 0 for dropless (got " + std::to_string(c.capacity_factor) + ")");
  if (c.groups < 1 || c.experts % c.groups != 0)
    fail("groups: " + std::to_string(c.groups) + " groups do not divide experts = " + std::to_string(c.experts));
  if (c.groups > 1) {
    if (c.group_topk < 1 || c.group_topk > c.groups)
      fail("group_topk: " + std::to_string(c.group_topk) + " must lie in [1, groups = " + std::to_string(c.groups) + "]");
    if (c.group_topk * (c.experts / c.groups) < c.topk)
      fail("group_topk: " + std::to_string(c.group_topk) + " groups of " + std::to_string(c.experts / c.groups) +
           " experts hold fewer than topk = " + std::to_string(c.topk) + " experts");
    if (c.topk < c.group_topk)
      fail("group_topk: must not exceed topk (each chosen group scores its top topk/group_topk experts)");
  }
  if (c.shared_experts < 0) fail("shared_experts: must be at least 0");
  if (c.aux_coef < 0 || c.z_coef < 0 || c.bias_rate < 0) fail("aux_coef: coefficients must be >= 0");
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"custom"};
    n.insert(n.end(), common::moe_preset_names().begin(), common::moe_preset_names().end());
    return n;
  }();
  return names;
}

MoeConfig preset(std::string_view name, int64_t scale) {
  const common::ModelPreset& p = common::moe_preset(name);
  MoeConfig c;
  c.hidden = common::scaled_dim(p.hidden, scale), c.ffn = common::scaled_dim(p.expert_ffn, scale);
  c.experts = p.experts, c.topk = p.topk;
  c.shared_experts = p.shared_experts;
  if (p.shared_ffn) c.shared_ffn = common::scaled_dim(p.shared_ffn, scale);
  c.router = parse_router(p.router);
  c.groups = p.groups, c.group_topk = p.group_topk;
  // Aux-loss-free balancing (the sigmoid router's expert bias) keeps only DeepSeek-V3's complementary
  // sequence-wise balance loss, alpha = 1e-4 (arXiv 2412.19437, section 2.1.2).
  if (c.router == RouterKind::Sigmoid) c.aux_coef = 1e-4;
  return c;
}

int64_t preset_moe_layers(std::string_view name) { return common::moe_preset(name).moe_layers; }

int64_t expert_capacity(const MoeConfig& c, int64_t tokens) {
  if (c.capacity_factor <= 0) return -1;
  return static_cast<int64_t>(std::ceil(static_cast<double>(tokens * c.topk) / static_cast<double>(c.experts) *
                                        c.capacity_factor));
}

}  // namespace mlsb::moe_train
