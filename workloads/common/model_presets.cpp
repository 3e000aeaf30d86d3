#include "workloads/common/model_presets.hpp"

#include <algorithm>
#include <stdexcept>

namespace mlsb::common {

const std::vector<ModelPreset>& model_presets() {
  // One model per row.
  // clang-format off
  static const std::vector<ModelPreset> rows = {
      // GPT-2 small (Radford et al. 2019); n_inner null means 4 * n_embd.
      {.name = "gpt2-small", .model_type = "gpt2",
       .source = "huggingface.co/openai-community/gpt2 config.json (n_layer 12, n_embd 768, vocab_size 50257)",
       .layers = 12, .hidden = 768, .vocab = 50257, .dense_ffn = 3072},
      // Llama 2 7B (Touvron et al. 2023, arXiv 2307.09288).
      {.name = "llama2-7b", .model_type = "llama",
       .source = "huggingface.co/meta-llama/Llama-2-7b-hf config.json (intermediate_size 11008)",
       .layers = 32, .hidden = 4096, .vocab = 32000, .dense_ffn = 11008},
      // Mixtral 8x7B (arXiv 2401.04088): every block MoE; the config's intermediate_size is the experts'.
      {.name = "mixtral-8x7b", .model_type = "mixtral",
       .source = "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json (num_local_experts 8, num_experts_per_tok 2)",
       .layers = 32, .hidden = 4096, .vocab = 32000,
       .moe_layers = 32, .experts = 8, .topk = 2, .expert_ffn = 14336, .router = "topk_softmax"},
      // Qwen3-30B-A3B (Qwen3 technical report, arXiv 2505.09388): decoder_sparse_step 1, no mlp_only_layers,
      // norm_topk_prob true (softmax -> top-k -> renormalise = topk_softmax).
      {.name = "qwen3-30b-a3b", .model_type = "qwen3_moe",
       .source = "huggingface.co/Qwen/Qwen3-30B-A3B config.json (num_experts 128, moe_intermediate_size 768)",
       .layers = 48, .hidden = 2048, .vocab = 151936,
       .moe_layers = 48, .experts = 128, .topk = 8, .expert_ffn = 768, .router = "topk_softmax"},
      // DeepSeek-V3 (arXiv 2412.19437): first_k_dense_replace 3, scoring_func sigmoid, n_group 8, topk_group 4.
      {.name = "deepseek-v3", .model_type = "deepseek_v3",
       .source = "huggingface.co/deepseek-ai/DeepSeek-V3 config.json (n_routed_experts 256, n_shared_experts 1)",
       .layers = 61, .hidden = 7168, .vocab = 129280, .dense_ffn = 18432,
       .moe_layers = 58, .experts = 256, .topk = 8, .expert_ffn = 2048, .shared_experts = 1, .shared_ffn = 2048,
       .router = "sigmoid", .groups = 8, .group_topk = 4},
  };
  // clang-format on
  return rows;
}

const std::vector<std::string>& moe_preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& p : model_presets())
      if (p.experts > 0) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

const ModelPreset& moe_preset(std::string_view name) {
  for (const auto& p : model_presets())
    if (p.experts > 0 && p.name == name) return p;
  std::string known;
  for (const auto& n : moe_preset_names()) known += n + ", ";
  throw std::invalid_argument("preset: unknown '" + std::string(name) + "' (" + known + "custom)");
}

int64_t scaled_dim(int64_t dim, int64_t scale) {
  if (scale < 1) throw std::invalid_argument("scale: must be at least 1");
  return std::max<int64_t>(1, dim / scale);
}

}  // namespace mlsb::common
