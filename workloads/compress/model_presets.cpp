#include "workloads/compress/model_presets.hpp"

#include <stdexcept>

#include "workloads/common/model_presets.hpp"

namespace mlsb::compress {
namespace {

/// The architectures whose tensors this file lays out (model_type of workloads/common/model_presets.hpp).
bool laid_out(const common::ModelPreset& p) { return p.model_type == "gpt2" || p.model_type == "llama"; }

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& p : common::model_presets())
      if (laid_out(p)) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

std::vector<PresetTensor> preset_tensors(std::string_view model, int64_t scale) {
  const common::ModelPreset* p = nullptr;
  for (const auto& row : common::model_presets())
    if (row.name == model && laid_out(row)) p = &row;
  if (!p) {
    std::string known;
    for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("model: unknown preset '" + std::string(model) + "' (known: " + known + ")");
  }
  auto d = [&](int64_t v) { return common::scaled_dim(v, scale); };
  const int64_t h = p->hidden, f = p->dense_ffn;
  std::vector<PresetTensor> out;
  auto layers = [&](std::vector<std::pair<std::string, std::vector<int64_t>>> per_layer) {
    for (int64_t l = 0; l < p->layers; ++l)
      for (const auto& [name, shape] : per_layer) {
        std::vector<int64_t> s;
        for (int64_t v : shape) s.push_back(d(v));
        out.push_back({"layers." + std::to_string(l) + "." + name, s});
      }
  };
  if (p->model_type == "gpt2") {  // Conv1D weights are [in, out]; the embedding is tied to the output
    out.push_back({"wte", {d(p->vocab), d(h)}});
    layers({{"attn.c_attn", {h, 3 * h}}, {"attn.c_proj", {h, h}}, {"mlp.c_fc", {h, f}}, {"mlp.c_proj", {f, h}}});
  } else {  // llama: nn.Linear weights are [out, in]; multi-head attention (no grouped KV in Llama 2 7B)
    out.push_back({"embed_tokens", {d(p->vocab), d(h)}});
    layers({{"self_attn.q_proj", {h, h}},
            {"self_attn.k_proj", {h, h}},
            {"self_attn.v_proj", {h, h}},
            {"self_attn.o_proj", {h, h}},
            {"mlp.gate_proj", {f, h}},
            {"mlp.up_proj", {f, h}},
            {"mlp.down_proj", {h, f}}});
    out.push_back({"lm_head", {d(p->vocab), d(h)}});
  }
  return out;
}

}  // namespace mlsb::compress
