#pragma once
// The MoE layer's training step on a CUDA GPU: bf16 activations and weights with fp32 accumulation
// (cuBLAS), fp32 master weights and AdamW, and fused kernels for routing, permute and unpermute.
// The CPU MoeLayer<float> is its oracle (tests/gpu). Built only with MLSB_HAVE_CUDA; elsewhere
// make_gpu_layer throws.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/moe_train/adamw.hpp"
#include "workloads/moe_train/config.hpp"

namespace mlsb::moe_train {

/// One step's device times (CUDA events, ms) and what the step did.
struct GpuStepResult {
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
  double aux_loss = 0, z_loss = 0, objective = 0;  ///< objective = <y, dy> / tokens + aux + z
  std::vector<int64_t> tokens_per_expert;         ///< rows each expert computed (after capacity)
  std::vector<int64_t> load;                      ///< assignments per expert before capacity
  int64_t dropped = 0;
  double peak_memory_bytes = 0;                   ///< device bytes allocated by the layer at peak
};

class GpuMoeLayer {
 public:
  virtual ~GpuMoeLayer() = default;
  /// x [tokens, hidden] and the upstream gradient dy [tokens, hidden], fp32 on the host; converted to
  /// bf16 on the device once (untimed).
  virtual void set_input(const std::vector<float>& x, const std::vector<float>& dy) = 0;
  /// forward, backward (loss gradient dy at y, plus aux + z), AdamW step (and the expert-bias step of
  /// the sigmoid router); synchronous.
  virtual GpuStepResult step() = 0;
  /// Forward only; y [tokens, hidden] as fp32 on the host (for comparison with the CPU layer).
  virtual std::vector<float> forward_output() = 0;
  /// Gradients of the last step() as fp32 on the host: "x" [tokens, hidden], "router" [hidden, E],
  /// "w13" [E, hidden, 2f], "w2" [E, f, hidden] (the layouts of MoeLayer).
  virtual std::vector<float> gradient(const std::string& name) = 0;
};

/// A layer with the weights MoeLayer<float>::init(seed) makes (converted to bf16; fp32 masters kept),
/// for `tokens` tokens per step. Throws std::runtime_error when the build has no CUDA or no GPU is
/// usable, and std::invalid_argument for a config validate() rejects.
std::unique_ptr<GpuMoeLayer> make_gpu_layer(const MoeConfig& config, int64_t tokens, uint64_t seed,
                                            const AdamWConfig& optimizer);

}  // namespace mlsb::moe_train
