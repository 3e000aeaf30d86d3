#pragma once
// Tensor lists of well-known models for the planner (mode plan), shrunk by a scale for CPU runs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::compress {

struct PresetTensor {
  std::string name;
  std::vector<int64_t> shape;  ///< row-major, already divided by the scale
};

/// The rows of workloads/common/model_presets.hpp whose architecture this file lays out (GPT-2 and Llama):
/// "gpt2-small" (Radford et al. 2019: 12 layers, d 768, vocabulary 50257) and "llama2-7b" (Touvron et
/// al. 2023: 32 layers, d 4096, FFN 11008, vocabulary 32000): the embedding, each layer's attention
/// and MLP weights (biases and norms omitted: they are < 0.1% of the bytes). Every dimension is divided
/// by `scale` (at least 1 remains). Throws std::invalid_argument for an unknown name or scale < 1.
std::vector<PresetTensor> preset_tensors(std::string_view model, int64_t scale);
const std::vector<std::string>& preset_names();

}  // namespace mlsb::compress
