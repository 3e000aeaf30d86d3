#include "workloads/compress/model_presets.hpp"

#include <algorithm>
#include <stdexcept>

namespace mlsb::compress {

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"gpt2-small", "llama2-7b"};
  return names;
}

std::vector<PresetTensor> preset_tensors(std::string_view model, int64_t scale) {
  if (scale < 1) throw std::invalid_argument("scale: must be at least 1");
  auto d = [&](int64_t v) { return std::max<int64_t>(1, v / scale); };
  std::vector<PresetTensor> out;
  auto layers = [&](int n, std::vector<std::pair<std::string, std::vector<int64_t>>> per_layer) {
    for (int l = 0; l < n; ++l)
      for (const auto& [name, shape] : per_layer) {
        std::vector<int64_t> s;
        for (int64_t v : shape) s.push_back(d(v));
        out.push_back({"layers." + std::to_string(l) + "." + name, s});
      }
  };
  if (model == "gpt2-small") {
    out.push_back({"wte", {d(50257), d(768)}});
    layers(12, {{"attn.c_attn", {768, 2304}}, {"attn.c_proj", {768, 768}}, {"mlp.c_fc", {768, 3072}},
                {"mlp.c_proj", {3072, 768}}});
  } else if (model == "llama2-7b") {
    out.push_back({"embed_tokens", {d(32000), d(4096)}});
    layers(32, {{"self_attn.q_proj", {4096, 4096}}, {"self_attn.k_proj", {4096, 4096}},
                {"self_attn.v_proj", {4096, 4096}}, {"self_attn.o_proj", {4096, 4096}},
                {"mlp.gate_proj", {11008, 4096}}, {"mlp.up_proj", {11008, 4096}}, {"mlp.down_proj", {4096, 11008}}});
    out.push_back({"lm_head", {d(32000), d(4096)}});
  } else {
    throw std::invalid_argument("model: unknown preset '" + std::string(model) + "' (known: gpt2-small, llama2-7b)");
  }
  return out;
}

}  // namespace mlsb::compress
