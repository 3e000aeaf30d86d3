#pragma once
// AGoQ's quantised activation storage (Lin et al., "AGoQ: Activation and Gradient Quantization for Memory-Efficient
// Distributed Training of LLMs", arXiv 2605.00539), emulated: the activations a model saves in forward for its
// backward are stored as symmetric integers, one fp32 scale (absmax / qmax) per kActivationBlock consecutive
// elements of a row, and the backward reads them decoded. The forward itself computes from the full values (it
// runs before anything is stored). NaN and Inf stay as they are (counted as stored at full width).
//
// layer_aware sizes each layer type apart, as AGoQ allocates bit widths by layer type (and by pipeline stage: the
// models here run as one stage, so only the type remains). The widths per type are the caller's
// (LayerStorage): AGoQ's own allocation (its §3) is not reproduced here.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::moe_train::precision {

/// full (fp32, nothing quantised), int8 (qmax 127), int4 (qmax 7), layer_aware (each LayerType at its own width).
enum class ActivationStorage { Full, Int8, Int4, LayerAware };

/// The layer whose backward reads a saved activation: the RMSNorms (their inputs, the residual stream), attention
/// (its input, q|k|v, the context), the MoE layer (its input, the expert inputs, fc1 and SwiGLU outputs, the
/// expert outputs, routed and shared).
enum class LayerType { Norm, Attention, Moe };
constexpr int kLayerTypes = 3;

/// The storage of each LayerType under layer_aware (full, int8 or int4), indexed by LayerType.
using LayerStorage = std::array<ActivationStorage, kLayerTypes>;
/// The default of the per-type axes: norm and attention int8, the MoE layer int4 (this project's choice, not
/// AGoQ's table; the MoE layer holds most of the saved bytes).
constexpr LayerStorage kDefaultLayerStorage = {ActivationStorage::Int8, ActivationStorage::Int8,
                                               ActivationStorage::Int4};

/// Elements per scale along a row.
constexpr int64_t kActivationBlock = 32;

/// "full", "int8", "int4", "layer_aware".
const std::vector<std::string>& activation_storage_names();
/// "full", "int8", "int4": the storages of one layer type.
const std::vector<std::string>& layer_storage_names();
/// "norm", "attention", "moe".
std::string_view name_of(LayerType type);
/// The axis of `type`'s storage under layer_aware: "norm_storage", "attention_storage", "moe_storage".
std::string storage_axis(LayerType type);
/// Throws std::invalid_argument naming `axis` for an unknown name, or for layer_aware where `uniform` (a layer
/// type's own storage).
ActivationStorage parse_activation_storage(std::string_view name, std::string_view axis = "activation_storage",
                                           bool uniform = false);

/// What a model stores for its backward in one step, and how.
class ActivationStore {
 public:
  /// `layers`: the storage per LayerType under layer_aware (ignored otherwise). Throws std::invalid_argument
  /// where a type's storage is layer_aware.
  explicit ActivationStore(ActivationStorage storage, LayerStorage layers = kDefaultLayerStorage);

  /// Stores a saved activation [rows, cols] (packed) of layer `type` quantised as the storage says, in place
  /// (decoded), and counts its bytes.
  void quantised(float* data, int64_t rows, int64_t cols, LayerType type);
  /// Counts a saved activation the storage keeps at fp32 under every setting (attention probabilities, router
  /// logits, the head's input).
  void kept(int64_t elements) { stored_ += 4.0 * static_cast<double>(elements), full_ += 4.0 * static_cast<double>(elements); }

  ActivationStorage storage() const { return storage_; }
  /// The storage `type` gets (its own under layer_aware, else the uniform one).
  ActivationStorage storage_of(LayerType type) const;
  /// Bytes of the activations saved since the start, as stored (elements at their width, scales), and at fp32.
  double stored_bytes() const { return stored_; }
  double full_bytes() const { return full_; }
  /// Mean bits per element of the activations stored through quantised() (elements at their width, a non-finite
  /// one's fp32 value beside its code; scales and kept() tensors excluded): what AGoQ's "near 4-bit activation storage"
  /// counts. 0 before any.
  double mean_element_bits() const { return elements_ > 0 ? element_bits_ / elements_ : 0.0; }

 private:
  ActivationStorage storage_;
  LayerStorage layers_;
  double stored_ = 0, full_ = 0;
  double elements_ = 0, element_bits_ = 0;
};

}  // namespace mlsb::moe_train::precision
