#include "workloads/moe_train/config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

namespace {

std::invalid_argument unknown_preset(std::string_view name) {
  return std::invalid_argument("preset: unknown '" + std::string(name) +
                               "' (mixtral-8x7b, qwen3-30b-a3b, deepseek-v3, custom)");
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"custom", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3"};
  return names;
}

MoeConfig preset(std::string_view name, int64_t scale) {
  if (scale < 1) throw std::invalid_argument("scale: must be at least 1");
  MoeConfig c;
  if (name == "mixtral-8x7b") {
    c.hidden = 4096, c.ffn = 14336, c.experts = 8, c.topk = 2;
  } else if (name == "qwen3-30b-a3b") {
    c.hidden = 2048, c.ffn = 768, c.experts = 128, c.topk = 8;
  } else if (name == "deepseek-v3") {
    c.hidden = 7168, c.ffn = 2048, c.experts = 256, c.topk = 8, c.shared_experts = 1, c.shared_ffn = 2048;
    c.router = RouterKind::Sigmoid, c.groups = 8, c.group_topk = 4, c.aux_coef = 1e-4;
  } else {
    throw unknown_preset(name);
  }
  c.hidden = std::max<int64_t>(1, c.hidden / scale);
  c.ffn = std::max<int64_t>(1, c.ffn / scale);
  if (c.shared_ffn) c.shared_ffn = std::max<int64_t>(1, c.shared_ffn / scale);
  return c;
}

int64_t preset_moe_layers(std::string_view name) {
  if (name == "mixtral-8x7b") return 32;
  if (name == "qwen3-30b-a3b") return 48;
  if (name == "deepseek-v3") return 58;
  throw unknown_preset(name);
}

int64_t expert_capacity(const MoeConfig& c, int64_t tokens) {
  if (c.capacity_factor <= 0) return -1;
  return static_cast<int64_t>(std::ceil(static_cast<double>(tokens * c.topk) / static_cast<double>(c.experts) *
                                        c.capacity_factor));
}

}  // namespace mlsb::moe_train
