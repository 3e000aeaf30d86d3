#pragma once
// AGoQ's quantised activation storage (Lin et al., "AGoQ: Activation and Gradient Quantization for Memory-Efficient
// Distributed Training of LLMs", arXiv 2605.00539), emulated: the activations a model saves in forward for its
// backward are stored as symmetric integers, one fp32 scale (absmax / qmax) per kActivationBlock consecutive
// elements of a row, and the backward reads them decoded. The forward itself computes from the full values (it
// runs before anything is stored). NaN and Inf stay as they are (counted as stored at full width).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::moe_train::precision {

/// full (fp32, nothing quantised), int8 (qmax 127), int4 (qmax 7).
enum class ActivationStorage { Full, Int8, Int4 };

/// Elements per scale along a row.
constexpr int64_t kActivationBlock = 32;

/// "full", "int8", "int4".
const std::vector<std::string>& activation_storage_names();
/// Throws std::invalid_argument naming the axis (activation_storage) for an unknown name.
ActivationStorage parse_activation_storage(std::string_view name);

/// What a model stores for its backward in one step, and how.
class ActivationStore {
 public:
  explicit ActivationStore(ActivationStorage storage) : storage_(storage) {}

  /// Stores a saved activation [rows, cols] (packed) quantised as the storage says, in place (decoded), and
  /// counts its bytes.
  void quantised(float* data, int64_t rows, int64_t cols);
  /// Counts a saved activation the storage keeps at fp32 under every setting (attention probabilities, router
  /// logits, the head's input).
  void kept(int64_t elements) { stored_ += 4.0 * static_cast<double>(elements), full_ += 4.0 * static_cast<double>(elements); }

  ActivationStorage storage() const { return storage_; }
  /// Bytes of the activations saved since the start, as stored (elements at their width, scales), and at fp32.
  double stored_bytes() const { return stored_; }
  double full_bytes() const { return full_; }

 private:
  ActivationStorage storage_;
  double stored_ = 0, full_ = 0;
};

}  // namespace mlsb::moe_train::precision
