#pragma once
// Published model shapes: one table that every workload reads for its presets (compress's tensor lists,
// moe_train's MoE layers, moe_offload's MoE models). A row is a model as its Hugging Face config.json
// describes it; adding a model is one row (in model_presets.cpp) plus, for a new architecture, its use
// in the workload that lays it out.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::common {

/// One published model. Counts and sizes are the config's; 0 where the model has none.
struct ModelPreset {
  std::string_view name;        ///< the preset name users pass ("mixtral-8x7b")
  std::string_view model_type;  ///< the config's model_type: "gpt2", "llama", "mixtral", "qwen3_moe", "deepseek_v3"
  std::string_view source;      ///< where the numbers come from: the Hugging Face config, and the paper
  int64_t layers = 0;           ///< transformer blocks (num_hidden_layers, n_layer)
  int64_t hidden = 0;           ///< model width h (hidden_size, n_embd)
  int64_t vocab = 0;            ///< vocabulary size (vocab_size)
  int64_t dense_ffn = 0;        ///< MLP inner size of the dense blocks (intermediate_size; 0: every block is MoE)
  // MoE blocks (experts == 0: a dense model)
  int64_t moe_layers = 0;      ///< how many blocks are MoE (the rest are dense)
  int64_t experts = 0;         ///< routed experts E per MoE block
  int64_t topk = 0;            ///< experts per token k
  int64_t expert_ffn = 0;      ///< each routed expert's SwiGLU inner size f
  int64_t shared_experts = 0;  ///< always-on experts per MoE block
  int64_t shared_ffn = 0;      ///< one shared expert's inner size
  /// How logits become choices, in moe_train's terms: "topk_softmax" (softmax over the top-k logits, equal
  /// to softmax -> top-k -> renormalise) or "sigmoid" (sigmoid scores, bias-adjusted top-k, normalised).
  std::string_view router = {};
  int64_t groups = 1;      ///< group-limited routing: expert groups (n_group; 1: no limit)
  int64_t group_topk = 1;  ///< groups a token may choose from (topk_group)
};

/// Every row, in the order the workloads list them.
const std::vector<ModelPreset>& model_presets();

/// The names of the MoE rows (experts > 0), in table order.
const std::vector<std::string>& moe_preset_names();

/// The MoE row named `name`. Throws std::invalid_argument("preset: unknown 'NAME' (mixtral-8x7b, ...,
/// custom)") for any other name (the MoE workloads' preset axes add "custom": the axes alone decide).
const ModelPreset& moe_preset(std::string_view name);

/// A dimension shrunk for smaller runs: max(1, dim / scale). Throws std::invalid_argument("scale: must
/// be at least 1") for scale < 1.
int64_t scaled_dim(int64_t dim, int64_t scale);

}  // namespace mlsb::common
