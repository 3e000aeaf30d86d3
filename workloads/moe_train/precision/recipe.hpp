#pragma once
// The low-precision training recipes moe_train emulates on the CPU, named after Transformer Engine's
// (transformer_engine.common.recipe): what each GEMM operand is quantised to, per tensor role and pass.
//   fp32           today's path: fp32 operands and accumulation (bit for bit the unquantised model)
//   bf16           every operand rounded to bf16 (round to nearest even), fp32 accumulation
//   fp8-delayed    DelayedScaling, format HYBRID: E4M3 activations and weights, E5M2 gradients; one scale per
//                  tensor, max / (the largest amax of the last amax_history steps), amax_compute_algo "max"
//   fp8-current    Float8CurrentScaling, HYBRID: one scale per tensor from its own amax
//   fp8-blockwise  Float8BlockScaling, DeepSeek-V3's recipe (arXiv 2412.19437, section 3.3): E4M3 everywhere,
//                  activations and gradients in 1x128 tiles along the GEMM's reduction dimension, weights in
//                  128x128 blocks; fp32 scales amax / 448
//   mxfp8          MXFP8BlockScaling (OCP MX v1.0): E4M3 elements in 32-element blocks along the reduction
//                  dimension with E8M0 power-of-two scales
//   nvfp4          NVFP4BlockScaling (NVIDIA, "Pretraining LLMs with NVFP4", arXiv 2509.25149): E2M1 elements in
//                  1x16 blocks (activations, gradients) and 16x16 blocks (weights) with E4M3 block scales under an
//                  fp32 per-tensor scale; stochastic rounding of gradients; a 16-point random Hadamard transform
//                  on both inputs of the weight-gradient GEMM; the last 15% of the blocks (rounded down) in bf16
// What every recipe keeps in full precision (as DeepSeek-V3 and the NVFP4 recipe do): embeddings, the output
// head, normalisations, non-linearities, the attention core (q k^T and p v) and, by our choice as DeepSeek-V3's
// "gating modules", the router GEMM (Megatron-Core's moe_router_dtype=fp32). The quantised GEMMs are the
// linear layers: the routed and shared experts' fc1 and fc2, and attention's qkv and output projections.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/formats/small_floats.hpp"
#include "workloads/moe_train/precision/activation_store.hpp"

namespace mlsb::moe_train::precision {

enum class Recipe { Fp32, Bf16, Fp8Delayed, Fp8Current, Fp8Blockwise, Mxfp8, Nvfp4 };

/// The GEMM accumulator: exact fp32; limited, as DeepSeek-V3 reports for FP8 GEMMs on Hopper tensor cores
/// (about 14 significant bits retained); promoted, the same with the partial sum added into an fp32
/// accumulator every 128 elements of the reduction (their fix, section 3.3.2).
enum class Accumulate { Fp32, Limited, Promoted };

/// A GEMM operand's tensor: the layer input (activation), the weight, the gradient of the layer output.
enum class Role { Input, Weight, Grad };
/// Forward (y = x w), input gradient (dx = dy w^T), weight gradient (dw = x^T dy).
enum class Pass { Fprop, Dgrad, Wgrad };

/// How one operand is scaled and rounded.
enum class Scaling { None, Bf16, TensorDelayed, TensorCurrent, Block, Mx, Nvfp4 };
struct OperandFormat {
  Scaling scaling = Scaling::None;
  formats::Element element = formats::Element::E4M3;
  int block = 0;            ///< Block, Mx, Nvfp4: elements per 1-D tile along the reduction dimension
  bool square = false;      ///< block x block 2-D tiles instead (orientation-free: one copy serves fprop and dgrad)
  bool stochastic = false;  ///< stochastic rounding (NVFP4's gradients); else round to nearest even
  bool hadamard = false;    ///< NVFP4's random Hadamard transform along the reduction dimension (wgrad inputs)
};

/// The format of `role`'s operand in `pass` under `recipe` (Scaling::None for fp32).
OperandFormat operand_format(Recipe recipe, Role role, Pass pass);

struct PrecisionConfig {
  Recipe recipe = Recipe::Fp32;
  Accumulate accumulate = Accumulate::Fp32;
  int amax_history = 1024;  ///< fp8-delayed: steps of amax history (Transformer Engine's default 1024)
  int64_t bf16_blocks = -1; ///< the last blocks kept in bf16; -1: the recipe's own (blocks_kept_in_bf16)
  ActivationStorage activation_storage = ActivationStorage::Full;  ///< AGoQ's storage of saved activations
  LayerStorage layer_storage = kDefaultLayerStorage;  ///< each layer type's storage under layer_aware
  /// Whether anything is emulated (a recipe other than fp32, or a quantised storage): such a case trains beside
  /// an fp32 twin, its reference.
  bool emulated() const { return recipe != Recipe::Fp32 || activation_storage != ActivationStorage::Full; }
  uint64_t seed = 0;        ///< stochastic rounding and the Hadamard signs
};

/// "fp32", "bf16", "fp8-delayed", "fp8-current", "fp8-blockwise", "mxfp8", "nvfp4".
const std::vector<std::string>& recipe_names();
/// "fp32", "limited", "promoted".
const std::vector<std::string>& accumulate_names();
/// Throw std::invalid_argument naming the axis ("precision: ...", "accumulate: ...") for an unknown name.
Recipe parse_recipe(std::string_view name);
Accumulate parse_accumulate(std::string_view name);
std::string_view name_of(Recipe recipe);

/// Whether the recipe's quantised GEMMs read 8-bit or narrower operands (where the accumulator model applies).
bool narrow(Recipe recipe);
/// The transformer blocks (of `layers`) a recipe keeps in bf16 by its own rule: nvfp4 keeps the last
/// floor(0.15 * layers) (the paper keeps about 15% of the linear layers, most of them at the end; a model of
/// fewer than 7 blocks keeps none); the others none.
int64_t blocks_kept_in_bf16(Recipe recipe, int64_t layers);

}  // namespace mlsb::moe_train::precision
