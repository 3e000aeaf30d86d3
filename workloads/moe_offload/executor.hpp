#pragma once
// Serving a schedule's MoE layers with the experts in host memory and a cache of device slots,
// following a CachePlan: each Miss or Prefetch copies an expert into its slot (host to device), each
// lookup computes the expert's SwiGLU FFN on the batch's tokens routed to it from the slot's weights.
//
// Hidden states: token t starts from a fixed normal vector (seeded by t); layer l adds
// sum_j w_j * expert_{e_j}(x) over the token's k experts of the trace, combined in the trace's order,
// so the result does not depend on the order experts are served in: an offloaded run equals the
// all-resident run bit for bit (the check behind `verify`).
//
// Timing: a compute stream and a copy stream. Copies run in plan order, each starting when the copy
// stream is free, the step has begun (its router has run) and the slot's previous expert is no longer
// being computed on; expert computations run in plan order, each starting when the compute stream is
// free and its slot's copy has landed. Waiting for a copy is stall time. On the CPU the computations
// are real and timed, the copies are real memcpys into the slots whose duration is modelled as
// bytes / link_gbps (so policies compare on any machine); on CUDA both are real (copy and compute
// streams, events), and the link is the PCIe or C2C link.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/moe_offload/cache_sim.hpp"
#include "workloads/moe_offload/model.hpp"

namespace mlsb::moe_offload {

struct ReplayResult {
  double total_s = 0;       ///< from the first step's start to the last computation's end
  double compute_s = 0;     ///< expert FFN time (sum)
  double stall_s = 0;       ///< compute stream waiting on copies (sum)
  double copy_s = 0;        ///< copy stream busy (sum)
  double bytes_h2d = 0;     ///< bytes copied into slots
  std::vector<double> batch_s;  ///< per batch: from its first step's start to its last computation's end
  std::vector<float> hidden;    ///< final hidden states [tokens of the schedule, h], in schedule order
};

class Executor {
 public:
  virtual ~Executor() = default;
  /// Replays `plan` (made by simulate() for `s` on a cache of `slots` slots). With `plan` null, every
  /// expert is resident (no copies): the all-resident reference.
  virtual ReplayResult replay(const RoutingTrace& t, const Schedule& s, const CachePlan* plan) = 0;
};

/// The CPU executor: slots are host buffers, copies are memcpys timed by the link model (and then evicted
/// from the CPU caches, as a device copy lands outside them: a miss gains no cache-hot compute), expert GEMMs
/// run on OpenBLAS with `threads` threads. Throws std::invalid_argument("link_gbps: ...") for a
/// bandwidth <= 0. `seed` seeds initial_hidden().
std::unique_ptr<Executor> make_cpu_executor(const ExpertStore& store, int64_t slots, double link_gbps, int threads,
                                            uint64_t seed);

/// The CUDA executor (pinned host store, cudaMalloc'd slots, a copy and a compute stream with events,
/// cuBLAS fp32 GEMMs). Throws std::runtime_error when the build has no CUDA or no device is present.
/// The store must have been allocated with cuda_pinned_allocator().
std::unique_ptr<Executor> make_cuda_executor(const ExpertStore& store, int64_t slots, uint64_t seed);
/// Allocation functions for an ExpertStore in pinned host memory (cudaHostAlloc); throw
/// std::runtime_error without CUDA.
float* cuda_pinned_alloc(size_t floats);
void cuda_pinned_free(float* p);
/// Host-to-device bandwidth of one pinned `bytes` copy, GB/s (the best of 5), measured now.
double cuda_pinned_h2d_gbps(size_t bytes);

/// The SwiGLU FFN of one expert on n tokens: out[n, h] = w2 · (silu(w1 x) * (w3 x)), x [n, h],
/// `expert` the ExpertStore block (w13 [2f, h], w2 [h, f]), scratch >= n * 2f floats. CPU, OpenBLAS.
void expert_ffn_cpu(const ModelShape& m, const float* expert, const float* x, int64_t n, float* scratch, float* out);

/// The initial hidden state of trace token `token`: h normal values from (seed, token).
void initial_hidden(uint64_t seed, int64_t token, int64_t hidden, float* out);

}  // namespace mlsb::moe_offload
