#include "workloads/moe_offload/model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <thread>

#include "backends/formats/safetensors.hpp"
#include "util/parallel.hpp"
#include "harness/workload.hpp"
#include "workloads/common/model_presets.hpp"

namespace mlsb::moe_offload {
namespace {

void free_floats(float* p, void (*release)(float*)) {
  if (!p) return;
  if (release) release(p);
  else delete[] p;
}

// ---- checkpoint tensor names ----

enum Part { Gate, Up, Down };
constexpr const char* kMixtralPart[] = {"w1", "w3", "w2"};
constexpr const char* kQwenPart[] = {"gate_proj", "up_proj", "down_proj"};

/// One routed-expert tensor found by name: model.layers.{layer}.{style}.{expert}.{part}.weight.
struct ExpertTensor {
  int64_t layer = 0, expert = 0;
  Part part = Gate;
  bool mixtral = true;  ///< "block_sparse_moe.experts" and w1/w3/w2, else "mlp.experts" and *_proj
};

/// Consumes a decimal index at `s[pos..]` (no sign, no leading '+'); false when there is none.
bool take_index(const std::string& s, size_t& pos, int64_t& out) {
  const size_t start = pos;
  out = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 12) out = out * 10 + (s[pos++] - '0');
  return pos > start && (pos == s.size() || s[pos] < '0' || s[pos] > '9');
}

bool take(const std::string& s, size_t& pos, std::string_view lit) {
  if (s.compare(pos, lit.size(), lit) != 0) return false;
  pos += lit.size();
  return true;
}

bool parse_expert_tensor(const std::string& name, ExpertTensor& t) {
  size_t pos = 0;
  if (!take(name, pos, "model.layers.") || !take_index(name, pos, t.layer)) return false;
  if (take(name, pos, ".block_sparse_moe.experts.")) t.mixtral = true;
  else if (take(name, pos, ".mlp.experts.")) t.mixtral = false;
  else return false;
  if (!take_index(name, pos, t.expert) || !take(name, pos, ".")) return false;
  const auto& parts = t.mixtral ? kMixtralPart : kQwenPart;
  for (int p = 0; p < 3; ++p) {
    const std::string rest = std::string(parts[p]) + ".weight";
    if (name.compare(pos, std::string::npos, rest) == 0) {
      t.part = static_cast<Part>(p);
      return true;
    }
  }
  return false;
}

std::string tensor_name(int64_t layer, int64_t expert, Part part, bool mixtral) {
  return "model.layers." + std::to_string(layer) + (mixtral ? ".block_sparse_moe.experts." : ".mlp.experts.") +
         std::to_string(expert) + "." + (mixtral ? kMixtralPart : kQwenPart)[part] + ".weight";
}

/// The three tensors of each expert of each MoE layer (by checkpoint layer index), validated against `m`.
using LayerTensors = std::vector<std::array<const std::pair<const std::string, formats::SafetensorsTensor>*, 3>>;
std::map<int64_t, LayerTensors> find_experts(const ModelShape& m,
                                             const std::map<std::string, formats::SafetensorsTensor>& index) {
  std::map<int64_t, LayerTensors> layers;
  std::map<int64_t, bool> style;  // layer -> mixtral naming (for naming a missing tensor)
  for (const auto& entry : index) {
    ExpertTensor t;
    if (!parse_expert_tensor(entry.first, t)) continue;
    auto& experts = layers[t.layer];
    style.emplace(t.layer, t.mixtral);
    if (t.expert >= m.experts)
      throw std::invalid_argument("checkpoint: " + entry.first + " is beyond the model's " + std::to_string(m.experts) +
                                  " experts per layer (experts)");
    experts.resize(m.experts);
    auto& slot = experts[t.expert][t.part];
    if (slot)
      throw std::invalid_argument("checkpoint: " + entry.first + " and " + slot->first +
                                  " are the same weight of layer " + std::to_string(t.layer) + " expert " +
                                  std::to_string(t.expert));
    slot = &entry;
  }
  if (static_cast<int64_t>(layers.size()) < m.layers)
    throw std::invalid_argument("checkpoint: " + std::to_string(layers.size()) + " MoE layers, the model has " +
                                std::to_string(m.layers) + " (layers)");
  while (static_cast<int64_t>(layers.size()) > m.layers) layers.erase(std::prev(layers.end()));  // serve the first
  for (const auto& [layer, experts] : layers)
    for (int64_t e = 0; e < m.experts; ++e)
      for (int p = 0; p < 3; ++p) {
        const auto* entry = experts[e][p];
        if (!entry)
          throw std::invalid_argument("checkpoint: " + tensor_name(layer, e, Part(p), style[layer]) +
                                      " is missing (the model has " + std::to_string(m.experts) + " experts)");
        const std::vector<int64_t> want = p == Down ? std::vector<int64_t>{m.hidden, m.ffn}
                                                    : std::vector<int64_t>{m.ffn, m.hidden};
        const formats::SafetensorsTensor& t = entry->second;
        if (t.shape != want)
          throw std::invalid_argument("checkpoint: " + entry->first + " has shape " + formats::shape_text(t.shape) +
                                      ", the model expects " + formats::shape_text(want) +
                                      (p == Down ? " (hidden, ffn)" : " (ffn, hidden)"));
        if (t.dtype != "F32" && t.dtype != "BF16" && t.dtype != "F16")
          throw std::runtime_error("checkpoint " + t.file + ": tensor '" + entry->first + "' has dtype " + t.dtype +
                                   "; only F32, BF16 and F16 are read");
      }
  return layers;
}

}  // namespace

const std::vector<std::string>& model_preset_names() { return common::moe_preset_names(); }

ModelShape model_preset(std::string_view name, int64_t scale) {
  if (name == "custom") throw std::invalid_argument("preset: 'custom' has no published shape");
  const common::ModelPreset& p = common::moe_preset(name);
  return {p.moe_layers, p.experts, p.topk, common::scaled_dim(p.hidden, scale),
          common::scaled_dim(p.expert_ffn, scale)};
}

void ExpertStore::allocate_storage(float* (*allocate)(size_t), void (*release)(float*)) {
  const ModelShape& m = shape_;
  if (m.layers < 1 || m.experts < 1 || m.hidden < 1 || m.ffn < 1)
    throw std::invalid_argument("ExpertStore: layers, experts, hidden and ffn must be >= 1");
  if (allocate && !release) throw std::invalid_argument("ExpertStore: an allocate function needs a release function");
  floats_ = 3 * m.hidden * m.ffn;
  const size_t total = static_cast<size_t>(m.layers * m.experts) * static_cast<size_t>(floats_);
  data_ = allocate ? allocate(total) : new float[total];
  if (!data_) throw std::runtime_error("ExpertStore: cannot allocate " + std::to_string(total * 4) + " bytes");
  release_ = allocate ? release : nullptr;
}

ExpertStore::ExpertStore(const ModelShape& shape, uint64_t seed, float* (*allocate)(size_t),
                         void (*release)(float*))
    : shape_(shape) {
  allocate_storage(allocate, release);
  const int64_t h = shape_.hidden, f = shape_.ffn;
  const float std13 = 1.0f / std::sqrt(static_cast<float>(h)), std2 = 1.0f / std::sqrt(static_cast<float>(f));
  // Each (layer, expert) has its own stream, so the blocks fill in parallel and the result does not
  // depend on the thread count.
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  parallel_for(shape_.layers * shape_.experts, threads, [&](int64_t b, int) {
    std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(b) + 1)));
    std::normal_distribution<float> normal;
    float* w = data_ + b * floats_;
    for (int64_t i = 0; i < 2 * f * h; ++i) w[i] = std13 * normal(rng);
    for (int64_t i = 2 * f * h; i < floats_; ++i) w[i] = std2 * normal(rng);
  });
}

ExpertStore::ExpertStore(const ModelShape& shape, const std::string& checkpoint, float* (*allocate)(size_t),
                         void (*release)(float*))
    : shape_(shape) {
  const auto index = formats::read_safetensors_index(checkpoint);
  const auto layers = find_experts(shape, index);  // validated before the (large) allocation
  allocate_storage(allocate, release);
  const int64_t fh = shape_.ffn * shape_.hidden;
  try {
    int64_t l = 0;
    for (const auto& [layer, experts] : layers) {
      for (int64_t e = 0; e < shape_.experts; ++e) {
        float* w = data_ + (l * shape_.experts + e) * floats_;
        for (int p = 0; p < 3; ++p) formats::read_tensor_f32(experts[e][p]->second, w + p * fh);
      }
      ++l;
    }
  } catch (...) {
    free_floats(data_, release_);
    throw;
  }
}

ExpertStore::~ExpertStore() { free_floats(data_, release_); }

}  // namespace mlsb::moe_offload
