#pragma once
// The folded block (block.hpp) on one CUDA GPU per rank: the same groups, shards, dispatch layout and collectives
// (the same GroupComms, so bytes and modelled link times are counted alike), with every tensor in device memory
// and fp32 compute: cuBLAS without TF32 (cuda::gemm_f32) and the kernels of fold/cuda/. The CPU block is its
// oracle within fp32 rounding (kBlockRelTolerance). On an nccl world the collectives take device buffers (one GPU
// per rank, nccl's reduce_scatter_v for the reduce-scatters); on mpi (ranks may share a GPU) they go through
// pinned host memory. The router's top-k and the dispatch plan run on the host, on logits copied back
// (route() and plan_dispatch(), the CPU block's own code, so capacity decisions match it exactly): the counts must
// reach the host for the all-to-all anyway. Collectives are blocking; the compute stream is drained before each.
// Only the all-to-all dispatcher. Built only with MLSB_HAVE_CUDA; elsewhere make_gpu_block throws.
#include <memory>
#include <vector>

#include "workloads/moe_train/dispatch.hpp"
#include "workloads/moe_train/fold/block.hpp"

namespace mlsb::moe_train::fold {

class GpuFoldedBlock {
 public:
  virtual ~GpuFoldedBlock() = default;
  /// Which part of the block this rank holds (its own tokens, heads, experts, ffn columns).
  virtual const BlockShard& shard() const = 0;
  /// This rank's rows of x and dy ([own tokens, hidden], own_tokens' order), uploaded once (untimed).
  virtual void set_input(const std::vector<float>& x_own, const std::vector<float>& dy_own) = 0;
  /// Gradients zeroed, forward, backward and the gradient reductions, on every rank together; synchronous.
  /// times() gets the phases (host clock, the device drained at each phase's end).
  virtual void step() = 0;
  /// The last step's output rows y and input gradient rows dx ([own tokens, hidden]), copied to the host.
  virtual std::vector<float> y() = 0;
  virtual std::vector<float> dx() = 0;
  /// The last step's reduced gradients in shards_of's shapes, copied to the host.
  virtual BlockWeights grads() = 0;
  /// The last forward's dispatch plan (this rank's rows per expert, its drops).
  virtual const DispatchPlan& plan() const = 0;
  virtual BlockTimes& times() = 0;
  /// The CUDA device ordinal it runs on.
  virtual int device() const = 0;
};

/// The rules of the GPU block that do not depend on the ranks: validate(c, m), and the all-to-all dispatcher (the
/// cuda block lacks the all-gather one). Throws std::invalid_argument naming the axis ("dispatcher: ...").
void check_gpu_block(const BlockConfig& c, const Mapping& m);

/// This rank's block with its shards of `w`. Collective over `comms` (every rank of the world calls it). Throws
/// std::invalid_argument naming the axis (check_gpu_block), std::runtime_error when the build has no CUDA or no GPU
/// is usable.
std::unique_ptr<GpuFoldedBlock> make_gpu_block(const BlockConfig& c, const Mapping& m, const Groups& g,
                                               RankComms& comms, int world_rank, const BlockWeights& w);

}  // namespace mlsb::moe_train::fold
