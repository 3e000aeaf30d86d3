#pragma once
// The MoE model an offloading run serves: how many MoE layers and experts, and each routed expert's
// SwiGLU shape. Expert e of layer l is out = w2 · (silu(w1 · x) * (w3 · x)), with w1 and w3 [f, h]
// stored together as w13 [2f, h] (gate rows first) and w2 [h, f]; fp32 on the host.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::moe_offload {

struct ModelShape {
  int64_t layers = 8;    ///< MoE layers L
  int64_t experts = 8;   ///< routed experts per layer E
  int64_t topk = 2;      ///< k
  int64_t hidden = 128;  ///< h
  int64_t ffn = 256;     ///< f
  /// Bytes of one expert's weights (w13 and w2) in fp32: 3 * h * f * 4.
  int64_t expert_bytes() const { return 3 * hidden * ffn * 4; }
};

/// The MoE layers of published models, h and f divided by `scale` (at least 1 each), from the MoE rows of
/// workloads/common/model_presets.hpp (routing rules aside):
///   mixtral-8x7b   L 32, E 8, k 2, h 4096, f 14336             (arXiv 2401.04088)
///   qwen3-30b-a3b  L 48, E 128, k 8, h 2048, f 768             (Qwen3 technical report)
///   deepseek-v3    L 58 (layers 3..60), E 256, k 8, h 7168, f 2048  (arXiv 2412.19437)
/// Throws std::invalid_argument("preset: ..." or "scale: ...") for an unknown name, "custom", or scale < 1.
ModelShape model_preset(std::string_view name, int64_t scale);
const std::vector<std::string>& model_preset_names();  ///< without "custom"

/// All experts of all layers in host memory: w13 then w2 of each expert, one contiguous block of
/// expert_bytes() per (layer, expert), so an expert moves to a cache slot with one copy.
class ExpertStore {
 public:
  /// Random weights (normal, std 1/sqrt(fan-in)) from `seed`, filled on all cores; the same seed gives the
  /// same weights.
  /// `allocate` supplies the memory (pinned on CUDA); nullptr uses the heap.
  ExpertStore(const ModelShape& shape, uint64_t seed, float* (*allocate)(size_t floats) = nullptr,
              void (*release)(float*) = nullptr);
  /// Weights from a safetensors checkpoint (a file, or a folder of *.safetensors shards) named like
  /// Hugging Face Mixtral (model.layers.L.block_sparse_moe.experts.E.w1/w2/w3.weight) or Qwen3 /
  /// DeepSeek-V3 (model.layers.L.mlp.experts.E.gate_proj/up_proj/down_proj.weight), F32, BF16 or F16.
  /// MoE layers are numbered in order of their layer index; a checkpoint with more MoE layers than
  /// `shape` serves its first shape.layers (a preset's preset_layers). Throws std::invalid_argument naming the
  /// tensor for a missing expert or a shape that differs from `shape`, and std::runtime_error naming
  /// the file for an unreadable or malformed one (formats::TensorFileError from the safetensors reader).
  ExpertStore(const ModelShape& shape, const std::string& checkpoint, float* (*allocate)(size_t floats) = nullptr,
              void (*release)(float*) = nullptr);
  ~ExpertStore();
  ExpertStore(const ExpertStore&) = delete;
  ExpertStore& operator=(const ExpertStore&) = delete;

  const ModelShape& shape() const { return shape_; }
  /// The expert's block: w13 [2f, h] then w2 [h, f].
  const float* expert(int64_t layer, int64_t e) const { return data_ + (layer * shape_.experts + e) * floats_; }
  int64_t expert_floats() const { return floats_; }

 private:
  void allocate_storage(float* (*allocate)(size_t), void (*release)(float*));
  ModelShape shape_;
  int64_t floats_ = 0;
  float* data_ = nullptr;
  void (*release_)(float*) = nullptr;
};

}  // namespace mlsb::moe_offload
