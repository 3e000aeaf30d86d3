#pragma once
// One MoE layer on the CPU, forward and backward: router GEMM, routing, capacity and permutation,
// (with expert parallelism) all-to-all of token counts then tokens, the grouped-GEMM SwiGLU experts,
// the reverse all-to-all, unpermute and combine with the routing weights, plus shared experts. With
// overlap=chunked (overlap.hpp) dispatch, experts and combine run as a pipeline of chunks, bit-identical.
// T is float (the workload) or double (gradient checks). Row-major throughout.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/dispatch.hpp"
#include "workloads/moe_train/ep_exchange.hpp"
#include "workloads/moe_train/experts.hpp"
#include "workloads/moe_train/overlap.hpp"
#include "workloads/moe_train/precision/activation_store.hpp"
#include "workloads/moe_train/router.hpp"

namespace mlsb::comm { class Communicator; }

namespace mlsb::moe_train {

template <typename T>
struct MoeParams {
  std::vector<T> router;    ///< [hidden, experts], replicated on every rank
  ExpertWeights<T> experts; ///< this rank's experts: global ids [rank * E/ranks, (rank + 1) * E/ranks)
  ExpertWeights<T> shared;  ///< 1 fused expert of ffn = shared_inner(), or 0 experts; replicated
};

/// One direction's tasks of the chunked pipeline, measured (seconds, summed since the last reset): the times
/// the schedule planner (schedule.hpp) schedules.
struct PipelinePieces {
  std::vector<double> expert_s;  ///< each local expert's compute
  double shared_s = 0;           ///< the shared experts' compute
  double wait_s = 0;             ///< inside the pipeline's communication calls (CommTimes::blocked_s)
};

/// Where a step's time went (seconds, summed over forward and backward since the last reset).
struct LayerTimes {
  CommTimes comm;     ///< all-to-all(v) of counts and tokens, and the replicated-gradient allreduce
  GemmStats experts;  ///< the routed and shared experts' GEMMs
  PipelinePieces pieces[2];  ///< overlap=chunked with ranks > 1: forward, backward
};

/// Initial weights: N(0, 1/fan_in) from a stream per tensor, so a given (seed, global expert id) gives
/// the same expert on any rank count. Fills `w` (1 expert of hidden x ffn) for expert `global_id`
/// (-1 = the shared experts).
template <typename T>
void init_expert(uint64_t seed, int64_t global_id, ExpertWeights<T>& w, int64_t hidden, int64_t ffn);

template <typename T>
class MoeLayer {
 public:
  /// `comm` nullptr or of size 1: all experts local (`ep` then changes nothing). Else experts are sharded
  /// over its ranks, every rank must call forward/backward together (collectives) with the same `ep`.
  /// Throws std::invalid_argument naming the axis (validate() of the config and of `ep`).
  MoeLayer(const MoeConfig& config, comm::Communicator* comm, int threads, const EpOptions& ep = {});
  MoeLayer(const MoeLayer&) = delete;  // the exchange holds references into the layer
  MoeLayer& operator=(const MoeLayer&) = delete;

  /// Deterministic weights from `seed` (see init_expert); zero gradients and expert bias.
  void init(uint64_t seed);
  /// y [tokens, hidden] = layer(x [tokens, hidden]). Keeps what backward needs; sets aux_loss/z_loss.
  void forward(const T* x, int64_t tokens, T* y);
  /// dx [tokens, hidden] (overwritten) and gradients (accumulated) for the loss whose gradient at y is
  /// dy, plus aux_loss + z_loss. Gradients of replicated weights are summed over ranks.
  void backward(const T* dy, T* dx);
  void zero_grad();
  /// Sigmoid router: the aux-loss-free bias step from the last forward's load, summed over ranks.
  void update_bias();
  /// The routed and the shared experts' GEMMs under a low-precision recipe (precision/); default: fp32. The
  /// router GEMM stays in full precision (precision/recipe.hpp says why).
  void set_precision(const ExpertSites& routed, const ExpertSites& shared) { routed_sites_ = routed, shared_sites_ = shared; }
  /// After forward: the activations backward reads (the experts' inputs, fc1 outputs and SwiGLU outputs, routed and
  /// shared, and the routed experts' outputs) stored as `store` says; the router logits are counted at fp32. The
  /// layer's input (the caller's) is the caller's to store.
  void store_activations(precision::ActivationStore& store);

  const MoeConfig& config() const { return c_; }
  MoeParams<T>& params() { return p_; }
  const MoeParams<T>& params() const { return p_; }
  MoeParams<T>& grads() { return g_; }
  const Routing<T>& routing() const { return routing_; }
  const DispatchPlan& plan() const { return plan_; }
  /// Rows each local expert computed in the last forward (tokens from every rank).
  const std::vector<int64_t>& local_expert_rows() const { return local_rows_; }
  std::vector<float>& expert_bias() { return bias_; }
  LayerTimes& times() { return times_; }
  T aux_loss() const { return routing_.aux_loss; }
  T z_loss() const { return routing_.z_loss; }
  int ranks() const { return ranks_; }

 private:
  // Exchanges this step's counts (an allgather into *everyone when given, for the chunk plan) and sets
  // layout_ and local_offsets_.
  void set_layout(std::vector<int64_t>* everyone);
  void exchange(const std::vector<T>& by_expert, std::vector<T>& by_local_expert);    // tokens to experts
  void exchange_back(const std::vector<T>& by_local_expert, std::vector<T>& by_expert); // results home
  // One direction (0 forward, 1 backward) of the chunked pipeline (EpExchange::chunked with the case's plan and
  // shared-expert slot), timing each local expert, the shared experts and the waits into times_.pieces[dir].
  void pipeline(int dir, const T* out, T* in, const T* results, T* back, const std::function<void(int64_t)>& expert,
                const std::function<void()>& shared);

  MoeConfig c_;
  comm::Communicator* comm_;
  EpOptions ep_;
  std::unique_ptr<EpExchange> wire_ops_;  // ranks > 1
  int ranks_ = 1, rank_ = 0, threads_ = 1;
  int64_t local_experts_ = 0, tokens_ = 0;
  MoeParams<T> p_, g_;
  std::vector<float> bias_;
  LayerTimes times_;
  // Forward state.
  const T* x_ = nullptr;
  std::vector<T> logits_;
  Routing<T> routing_;
  DispatchPlan plan_;
  std::vector<T> xp_, yp_;            // permuted rows by global expert (this rank's tokens)
  std::vector<T> xe_;                 // rows at this rank's experts, by local expert (all ranks' tokens)
  // Workspaces reused across steps (no allocation or page faults once sizes are steady).
  std::vector<T> ye_, dyp_, dxp_, dye_, dxe_, dweight_, dlogits_, wire_;
  std::vector<int64_t> local_offsets_, local_rows_;
  ExpertCache<T> cache_, shared_cache_;
  EpLayout layout_;   // ranks > 1
  ChunkPlan chunks_;  // overlap=chunked
  ExpertSites routed_sites_, shared_sites_;
};

}  // namespace mlsb::moe_train
