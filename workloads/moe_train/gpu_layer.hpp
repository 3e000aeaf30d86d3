#pragma once
// The MoE layer's training step on a CUDA GPU: bf16 activations and weights with fp32 accumulation
// (cuBLAS), fp32 master weights and AdamW, and fused kernels for routing, permute and unpermute. Under the
// fp8-current and fp8-delayed recipes the routed and shared experts' GEMMs run in FP8 through cuBLASLt
// (cuda/fp8_linear.hpp); the router stays bf16, as the CPU recipes keep it in full precision.
// With expert parallelism (a communicator of several ranks) the experts are sharded over the ranks as
// MoeLayer shards them, and the rows travel over the communicator's all-to-alls (EpExchange: overlap=none
// or the chunked pipeline, the modelled link), the experts computing on the GPU: on nccl (one GPU per
// rank) between device buffers on NCCL's communication stream while the layer's stream computes; on mpi
// (ranks may share a GPU) through pinned host memory.
// The CPU MoeLayer<float> is its oracle (tests/gpu). Built only with MLSB_HAVE_CUDA; elsewhere
// make_gpu_layer throws.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/moe_train/adamw.hpp"
#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/ep_exchange.hpp"
#include "workloads/moe_train/overlap.hpp"
#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train {

/// One step's device times (CUDA events, ms) and what the step did.
struct GpuStepResult {
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
  double aux_loss = 0, z_loss = 0, objective = 0;  ///< objective = <y, dy> / tokens + aux + z
  std::vector<int64_t> tokens_per_expert;          ///< this rank's rows per global expert (after capacity)
  std::vector<int64_t> load;                      ///< assignments per expert before capacity
  int64_t dropped = 0;
  double peak_memory_bytes = 0;                   ///< device bytes allocated by the layer at peak (nccl row staging included)
  CommTimes comm;                                 ///< expert parallelism: the step's communication (host clock)
  /// The whole step on the host clock, from its first enqueue to its synchronisation: the clock comm's
  /// exposed (blocked) time is measured on, so compute = wall - exposed compares like with like.
  double wall_ms = 0;
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
  /// "w13" [local experts, hidden, 2f], "w2" [local experts, f, hidden] (the layouts of MoeLayer),
  /// "shared_w13", "shared_w2".
  virtual std::vector<float> gradient(const std::string& name) = 0;
  /// The CUDA device ordinal the layer runs on.
  virtual int device() const = 0;
};

/// Why the cuda layer cannot run `precision` on `config`, naming the axis, or "" when it can (no GPU needed to ask):
///   fp32, bf16      the layer's bf16 GEMMs (dtype=bf16), full activation storage
///   fp8-current,    the experts' GEMMs in FP8 with per-tensor scales through cuBLASLt, accumulate=limited
///   fp8-delayed     (cuBLASLt's fast accumulation) or promoted (its default: partial sums promoted to fp32);
///                   hidden, ffn and the shared experts' width multiples of 16 (cuBLASLt's FP8 requirement)
///   fp8-blockwise, mxfp8, nvfp4, and quantised activation storage: not on the device (block-scaled GEMMs are
///   Blackwell's in cuBLASLt; the CPU backend emulates them).
std::string gpu_precision_unsupported(const precision::PrecisionConfig& precision, const MoeConfig& config);

/// Whether the cuda layer runs the experts' GEMMs in FP8 under `recipe` (fp8-current, fp8-delayed).
bool gpu_fp8(precision::Recipe recipe);

/// A layer with the weights MoeLayer<float>::init(seed) makes (converted to bf16; fp32 masters kept),
/// for `tokens` tokens per step (per rank). `comm` nullptr or of one rank: every expert on this GPU;
/// else this rank holds experts [rank * E/ranks, (rank + 1) * E/ranks) and every rank calls set_input,
/// step and forward_output together with the same `ep`; counts and loads travel over comm->host_side().
/// `precision`: see gpu_precision_unsupported.
/// Throws std::runtime_error when the build has no CUDA, no GPU is usable, or an fp8 recipe meets a GPU without
/// FP8 tensor cores (compute capability below 8.9), and std::invalid_argument naming the axis for a config, `ep`
/// or precision that validate() or gpu_precision_unsupported rejects.
std::unique_ptr<GpuMoeLayer> make_gpu_layer(const MoeConfig& config, int64_t tokens, uint64_t seed,
                                            const AdamWConfig& optimizer, comm::Communicator* comm = nullptr,
                                            const EpOptions& ep = {}, const precision::PrecisionConfig& precision = {});

}  // namespace mlsb::moe_train
