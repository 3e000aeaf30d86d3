#pragma once
// The shape and routing rules of one MoE layer, the layer presets of published models, and their checks.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::moe_train {

/// How router logits become expert choices and combine weights.
///   TopkSoftmax  top-k on the logits, then softmax over the k (Megatron-Core's default,
///                moe_router_pre_softmax=False; equals Mixtral's softmax -> top-k -> renormalise)
///   SoftmaxTopk  softmax over all E, then top-k; the weights are the k probabilities, not renormalised
///                (Megatron-Core moe_router_pre_softmax=True)
///   Sigmoid      sigmoid scores; top-k on score + expert bias (the bias selects only), weights are the
///                selected scores normalised to sum 1 (DeepSeek-V3, aux-loss-free balancing, arXiv 2412.19437)
enum class RouterKind { TopkSoftmax, SoftmaxTopk, Sigmoid };
/// Which assignments an expert over capacity keeps: the highest routing weights, or the first tokens.
enum class DropPolicy { Probs, Position };

RouterKind parse_router(std::string_view name);  ///< "topk_softmax" | "softmax_topk" | "sigmoid"
std::string_view to_string(RouterKind r);
DropPolicy parse_drop_policy(std::string_view name);  ///< "probs" | "position"

struct MoeConfig {
  int64_t hidden = 1024;      ///< h: model width
  int64_t ffn = 3584;         ///< f: each routed expert's SwiGLU inner size
  int64_t experts = 8;        ///< E: routed experts
  int64_t topk = 2;           ///< k: experts per token
  int64_t shared_experts = 0; ///< always-on SwiGLU experts of size shared_ffn each (DeepSeek-style)
  int64_t shared_ffn = 0;     ///< inner size of one shared expert (0: ffn)
  RouterKind router = RouterKind::TopkSoftmax;
  /// Group-limited routing (DeepSeek-V3 node-limited routing, Megatron moe_router_num_groups): the E
  /// experts form `groups` groups; a group scores the sum of its top (topk / group_topk) selection
  /// scores; experts are chosen only from the `group_topk` best groups. groups = 1: no limit.
  int64_t groups = 1;
  int64_t group_topk = 1;
  /// Capacity per expert = ceil(tokens * topk / E * capacity_factor) (GShard, arXiv 2006.16668);
  /// 0 = dropless (MegaBlocks, arXiv 2211.15841).
  double capacity_factor = 0;
  DropPolicy drop = DropPolicy::Probs;
  double aux_coef = 1e-2;   ///< load-balancing loss coefficient (0 = none)
  double z_coef = 1e-3;     ///< router z-loss coefficient (0 = none)
  double bias_rate = 1e-3;  ///< Sigmoid: expert-bias update rate per step (0 = bias stays 0)

  int64_t shared_inner() const { return shared_experts * (shared_ffn > 0 ? shared_ffn : ffn); }
};

/// Throws std::invalid_argument whose message starts with the offending axis ("topk: ...") for a
/// configuration that cannot run: k > E or k < 1, E not divisible by `ranks` (expert parallelism),
/// capacity_factor < 0 (0 is dropless), groups not dividing E, and (groups > 1) group_topk outside
/// [1, groups] or above k, or too few experts in the chosen groups for k. groups = 1 ignores group_topk.
void validate(const MoeConfig& c, int ranks);

/// The published layer shapes of the MoE rows of workloads/common/model_presets.hpp (routing included),
/// with h, f and the shared experts' size divided by `scale` (at least 1 each):
///   mixtral-8x7b   h 4096, f 14336, E 8, k 2, topk_softmax  (Mixtral of Experts, arXiv 2401.04088)
///   qwen3-30b-a3b  h 2048, f 768, E 128, k 8, softmax_topk renormalised = topk_softmax (Qwen3 report)
///   deepseek-v3    h 7168, f 2048, E 256, k 8, 1 shared expert of 2048, sigmoid + bias (aux_coef 1e-4),
///                  8 groups, 4 chosen (DeepSeek-V3 technical report, arXiv 2412.19437)
/// Throws std::invalid_argument("preset: ..." or "scale: ...") for an unknown name or scale < 1.
MoeConfig preset(std::string_view name, int64_t scale);
const std::vector<std::string>& preset_names();  ///< "custom" (the axes alone decide), then the table's MoE rows

/// How many MoE layers the published model of `preset` has: mixtral-8x7b 32, qwen3-30b-a3b 48,
/// deepseek-v3 58 (layers 3..60; the first 3 are dense). Throws std::invalid_argument like preset().
int64_t preset_moe_layers(std::string_view name);

/// Tokens assigned to each expert can be at most this many (ceil(tokens*k/E*cf)); -1 for dropless.
int64_t expert_capacity(const MoeConfig& c, int64_t tokens);

}  // namespace mlsb::moe_train
