// Host side of the folded block on a GPU (gpu_block.hpp): device memory, the step on one stream, the cuBLAS
// GEMMs (fp32, no TF32), the kernels of fold/cuda/block_kernels.hpp and the group collectives on device tensors.
// The order of work is the CPU block's (block.cpp), step for step.
#include "workloads/moe_train/fold/gpu_block.hpp"

#include <stdexcept>
#include <string>

#include "backends/comm/communicator.hpp"
#include "backends/cuda/device.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cuda/blas.hpp"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/stream.hpp"
#include "util/clock.hpp"
#include "workloads/common/cuda/rows.hpp"
#include "workloads/moe_train/cuda/check.hpp"
#include "workloads/moe_train/cuda/grown.hpp"
#include "workloads/moe_train/fold/cuda/block_kernels.hpp"
#include "workloads/moe_train/router.hpp"
#endif

namespace mlsb::moe_train::fold {

void check_gpu_block(const BlockConfig& c, const Mapping& m) {
  validate(c, m);
  if (c.dispatcher != Dispatcher::AllToAll)
    throw std::invalid_argument(
        "dispatcher: the cuda block has the all-to-all dispatcher only (allgather runs on the cpu backend)");
}

#ifndef MLSB_HAVE_CUDA

std::unique_ptr<GpuFoldedBlock> make_gpu_block(const BlockConfig& c, const Mapping& m, const Groups&, RankComms&, int,
                                               const BlockWeights&) {
  check_gpu_block(c, m);
  throw std::runtime_error("built without CUDA");
}

#else

namespace {

using moe_train::gpu::check_cuda;
using moe_train::gpu::check_launch;
using moe_train::gpu::DeviceMemory;
using moe_train::gpu::HostMemory;

/// An allocated tensor's pointer.
float* at(DeviceMemory& d) { return d.ensure<float>(0); }

/// Copies `bytes` on `stream` (copy.hpp's rules), throwing on failure.
void copy(cudaStream_t stream, void* dst, const void* src, size_t bytes, cuda::Landed landed) {
  check_cuda(cuda::copy_on(stream, dst, src, bytes, landed, "fold gpu block"), "copy_on");
}

/// GroupComm's collectives on device tensors: the compute stream drained first; an nccl group takes the device
/// buffers, any other group gets them through pinned host memory; a group of one rank copies on the device.
class DeviceWire {
 public:
  explicit DeviceWire(cudaStream_t stream) : s_(stream) {}

  void allgatherv(GroupComm& g, const float* send, float* recv, std::span<const int64_t> counts) {
    run(g, send, counts[static_cast<size_t>(g.rank())], recv, total(counts),
        [&](const float* in, float* out) { g.allgatherv(in, out, counts); });
  }
  void reduce_scatter_v(GroupComm& g, const float* send, float* recv, std::span<const int64_t> counts) {
    run(g, send, total(counts), recv, counts[static_cast<size_t>(g.rank())],
        [&](const float* in, float* out) { g.reduce_scatter_v(in, out, counts); });
  }
  void alltoallv(GroupComm& g, const float* send, std::span<const int64_t> send_counts, float* recv,
                 std::span<const int64_t> recv_counts) {
    run(g, send, total(send_counts), recv, total(recv_counts),
        [&](const float* in, float* out) { g.alltoallv(in, send_counts, out, recv_counts); });
  }
  void allreduce(GroupComm& g, float* data, int64_t count) {
    if (g.size() == 1) return;
    run(g, data, count, data, count, [&](const float*, float* out) { g.allreduce(out, static_cast<size_t>(count)); });
  }

 private:
  template <typename F>
  void run(GroupComm& g, const float* send, int64_t send_n, float* recv, int64_t recv_n, F&& call) {
    if (g.size() == 1) {  // the own block is everything
      if (send != recv) copy(s_, recv, send, static_cast<size_t>(recv_n) * sizeof(float), cuda::Landed::Later);
      return;
    }
    check_cuda(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
    if (g.device_buffers()) {
      call(send, recv);
      return;
    }
    float* hs = send_h_.ensure<float>(send_n);
    float* hr = send == recv ? hs : recv_h_.ensure<float>(recv_n);
    copy(s_, hs, send, static_cast<size_t>(send_n) * sizeof(float), cuda::Landed::OnReturn);
    call(hs, hr);
    copy(s_, recv, hr, static_cast<size_t>(recv_n) * sizeof(float), cuda::Landed::OnReturn);
  }

  cudaStream_t s_;
  HostMemory send_h_, recv_h_;
};

/// A rank's shards of the block's tensors in device memory (shards_of's shapes).
struct DeviceWeights {
  DeviceMemory norm1, norm2, wqkv, wo, router, w13, w2;

  // f(device tensor, host tensor) for each of the seven, host tensors from `host` (const or not).
  template <typename W, typename F>
  void each(W& host, F&& f) {
    f(norm1, host.norm1), f(norm2, host.norm2), f(wqkv, host.attn.wqkv), f(wo, host.attn.wo), f(router, host.router),
        f(w13, host.experts.w13), f(w2, host.experts.w2);
  }
  void upload(const BlockWeights& w, cudaStream_t s) {
    each(w, [&](DeviceMemory& d, const std::vector<float>& v) {
      copy(s, d.ensure<float>(static_cast<int64_t>(v.size())), v.data(), v.size() * sizeof(float),
           cuda::Landed::OnReturn);
    });
  }
  void zero(const BlockWeights& shape, cudaStream_t s) {
    each(shape, [&](DeviceMemory& d, const std::vector<float>& v) {
      check_cuda(cudaMemsetAsync(d.ensure<float>(static_cast<int64_t>(v.size())), 0, v.size() * sizeof(float), s),
                 "cudaMemsetAsync");
    });
  }
  BlockWeights download(const BlockWeights& shape, cudaStream_t s) {
    BlockWeights out = shape.zeros();
    each(out, [&](DeviceMemory& d, std::vector<float>& v) {
      copy(s, v.data(), d.ensure<float>(static_cast<int64_t>(v.size())), v.size() * sizeof(float),
           cuda::Landed::OnReturn);
    });
    return out;
  }
};

class CudaFoldedBlock final : public GpuFoldedBlock, public BlockShard {
 public:
  CudaFoldedBlock(const BlockConfig& c, const Mapping& m, const Groups& g, RankComms& comms, int world_rank,
                  const BlockWeights& w)
      : BlockShard(c, m, g, world_rank), comms_(comms), blas_(stream_.get()), wire_(stream_.get()) {
    check_cuda(cudaGetDevice(&device_), "cudaGetDevice");
    shape_ = shards_of(w);
    p_.upload(shape_, s());
    g_.zero(shape_, s());
  }

  const BlockShard& shard() const override { return *this; }
  const DispatchPlan& plan() const override { return plan_; }
  BlockTimes& times() override { return times_; }
  int device() const override { return device_; }

  void set_input(const std::vector<float>& x_own, const std::vector<float>& dy_own) override {
    const size_t n = static_cast<size_t>(own_rows_ * hidden_);
    if (x_own.size() != n || dy_own.size() != n)
      throw std::invalid_argument("set_input: x and dy must hold own tokens * hidden = " + std::to_string(n) +
                                  " values");
    copy(s(), x_.ensure<float>(n), x_own.data(), n * sizeof(float), cuda::Landed::OnReturn);
    copy(s(), dy_.ensure<float>(n), dy_own.data(), n * sizeof(float), cuda::Landed::OnReturn);
  }

  void step() override {
    g_.zero(shape_, s());
    auto t0 = Clock::now();
    float* h_own = h_own_.ensure<float>(own_rows_ * hidden_);
    attention_forward(h_own);
    moe_forward(h_own);
    drain();
    times_.forward_s += seconds_since(t0);
    t0 = Clock::now();
    float* dh_own = dh_own_.ensure<float>(own_rows_ * hidden_);
    moe_backward(dh_own);
    attention_backward(dh_own);
    drain();
    times_.backward_s += seconds_since(t0);
    t0 = Clock::now();
    reduce_grads();
    drain();
    times_.grad_sync_s += seconds_since(t0);
  }

  std::vector<float> y() override { return host(y_, own_rows_ * hidden_); }
  std::vector<float> dx() override { return host(dx_, own_rows_ * hidden_); }
  BlockWeights grads() override { return g_.download(shape_, s()); }

 private:
  cudaStream_t s() const { return stream_.get(); }
  void drain() { check_cuda(cudaStreamSynchronize(s()), "cudaStreamSynchronize"); }
  std::vector<float> host(DeviceMemory& d, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    copy(s(), v.data(), d.ensure<float>(n), v.size() * sizeof(float), cuda::Landed::OnReturn);
    return v;
  }
  template <typename T>
  T* upload(DeviceMemory& d, const std::vector<T>& v) {
    T* p = d.ensure<T>(static_cast<int64_t>(v.size()));
    copy(s(), p, v.data(), v.size() * sizeof(T), cuda::Landed::OnReturn);
    return p;
  }
  static std::vector<int32_t> narrow(const std::vector<int64_t>& v) {
    for (int64_t x : v)
      if (x > std::numeric_limits<int32_t>::max())
        throw std::runtime_error("fold gpu block: a row index beyond int32 (lower batch or seq)");
    return {v.begin(), v.end()};
  }
  void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
            int64_t ldb, float* C, int64_t ldc, float beta = 0.0f) {
    cuda::gemm_f32(blas_.get(), ta, tb, M, N, K, A, lda, B, ldb, C, ldc, beta);
  }
  int64_t kv_rows() const { return (index(Group::Cp) + 1) * seq_c_; }  // the keys this rank's queries can see

  void attention_forward(float* h_own) {
    const int64_t h = hidden_, n = shard_rows_, T = own_rows_, d = head_dim_, hl = hl_, kn = kv_rows();
    const int64_t cp_i = index(Group::Cp), heads = batch_l_ * heads_l_;
    GroupComm& tp = comms_[Group::Tp];
    GroupComm& cp = comms_[Group::Cp];
    float* xn_own = xn_own_.ensure<float>(T * h);
    gpu::rmsnorm_forward(at(x_), at(p_.norm1), T, h, xn_own, s());
    float* xn = xn_.ensure<float>(n * h);
    wire_.allgatherv(tp, xn_own, xn, equal_floats(tp.size(), T, h));
    float* qkv = qkv_.ensure<float>(n * 3 * hl);
    gemm(false, false, n, 3 * hl, h, xn, h, at(p_.wqkv), 3 * hl, qkv, 3 * hl);
    // K and V of every CP rank's chunk, laid out per sequence up to this rank's last position.
    float* kv_own = kv_own_.ensure<float>(n * 2 * hl);
    gpu::copy_columns(kv_own, 2 * hl, qkv + hl, 3 * hl, n, 2 * hl, false, s());
    float* gathered = gathered_.ensure<float>(cp.size() * n * 2 * hl);
    wire_.allgatherv(cp, kv_own, gathered, equal_floats(cp.size(), n, 2 * hl));
    float* kv = kv_.ensure<float>(batch_l_ * kn * 2 * hl);
    for (int64_t ch = 0; ch <= cp_i; ++ch)
      for (int64_t b = 0; b < batch_l_; ++b)
        copy(s(), kv + (b * kn + ch * seq_c_) * 2 * hl, gathered + (ch * n + b * seq_c_) * 2 * hl,
             seq_c_ * 2 * hl * sizeof(float), cuda::Landed::Later);
    float* probs = probs_.ensure<float>(heads * seq_c_ * kn);
    float* ctx = ctx_.ensure<float>(n * hl);
    for (int64_t b = 0; b < batch_l_; ++b)
      for (int64_t j = 0; j < heads_l_; ++j)
        gemm(false, true, seq_c_, kn, d, qkv + b * seq_c_ * 3 * hl + j * d, 3 * hl, kv + b * kn * 2 * hl + j * d,
             2 * hl, probs + (b * heads_l_ + j) * seq_c_ * kn, kn);
    gpu::causal_softmax(probs, heads, seq_c_, kn, cp_i * seq_c_, 1.0f / std::sqrt(static_cast<float>(d)), s());
    for (int64_t b = 0; b < batch_l_; ++b)
      for (int64_t j = 0; j < heads_l_; ++j)
        gemm(false, false, seq_c_, d, kn, probs + (b * heads_l_ + j) * seq_c_ * kn, kn,
             kv + b * kn * 2 * hl + hl + j * d, 2 * hl, ctx + b * seq_c_ * hl + j * d, hl);
    float* part = scratch_.ensure<float>(n * h);
    gemm(false, false, n, h, hl, ctx, hl, at(p_.wo), h, part, h);
    wire_.reduce_scatter_v(tp, part, h_own, equal_floats(tp.size(), T, h));
    gpu::copy_columns(h_own, h, at(x_), h, T, h, true, s());
    check_launch("fold gpu block: attention forward");
  }

  void moe_forward(const float* h_own) {
    const int64_t h = hidden_, T = own_rows_, E = c_.moe.experts, k = c_.moe.topk;
    float* hn_own = hn_own_.ensure<float>(T * h);
    gpu::rmsnorm_forward(h_own, at(p_.norm2), T, h, hn_own, s());
    float* logits = logits_.ensure<float>(T * E);
    gemm(false, false, T, E, h, hn_own, h, at(p_.router), E, logits, E);
    logits_h_.resize(static_cast<size_t>(T * E));
    copy(s(), logits_h_.data(), logits, logits_h_.size() * sizeof(float), cuda::Landed::OnReturn);
    routing_ = route(logits_h_.data(), T, c_.moe, nullptr);
    plan_ = plan_dispatch(routing_, c_.moe);
    const int32_t* row_token = upload(row_token_, narrow(plan_.row_token));
    upload(slot_row_, narrow(plan_.slot_row));
    upload(weight_, routing_.weight);
    const int64_t rows = plan_.rows();
    float* xp = xp_.ensure<float>(rows * h);
    common::gpu::gather_rows(hn_own, row_token, rows, h, xp, s());
    const std::vector<int64_t> counts = plan_.tokens_per_expert();
    layout_ = alltoall_layout(counts, comms_[Group::TpEp].allgather_i64(counts));
    upload(sorted_from_, narrow(layout_.sorted_from));
    const int64_t R = layout_.expert_rows(), fl = ffn_l_;
    float* xe = xe_.ensure<float>(R * h);
    dispatch(xp, xe);
    float* h13 = h13_.ensure<float>(R * 2 * fl);
    float* a = a_.ensure<float>(R * fl);
    float* ye = ye_.ensure<float>(R * h);
    for_experts([&](int64_t l, int64_t o, int64_t nl) {
      gemm(false, false, nl, 2 * fl, h, xe + o * h, h, at(p_.w13) + l * h * 2 * fl, 2 * fl, h13 + o * 2 * fl, 2 * fl);
    });
    gpu::fold_swiglu_forward(h13, R, fl, a, s());
    for_experts([&](int64_t l, int64_t o, int64_t nl) {
      gemm(false, false, nl, h, fl, a + o * fl, fl, at(p_.w2) + l * fl * h, h, ye + o * h, h);
    });
    float* yp = yp_.ensure<float>(rows * h);
    combine(ye, yp);
    gpu::fold_combine(yp, slot_row_.ensure<int32_t>(0), weight_.ensure<float>(0), h_own, T, k, h,
                 y_.ensure<float>(T * h), s());
    check_launch("fold gpu block: moe forward");
  }

  // f(local expert, its first row at the experts, its rows) for every local expert with rows.
  template <typename F>
  void for_experts(F&& f) {
    for (int64_t l = 0; l < local_experts_; ++l) {
      const int64_t o = layout_.local_offsets[l], nl = layout_.local_offsets[l + 1] - o;
      if (nl > 0) f(l, o, nl);
    }
  }

  // This rank's rows by global expert -> the rows at its experts (all-to-allv over EP, all-gather-v over ETP, the
  // experts' order), and back (the reverse order, reduce-scatter-v over ETP, all-to-allv over EP).
  void dispatch(const float* by_expert, float* at_experts) {
    const int64_t h = hidden_;
    float* recv = recv_.ensure<float>(total(layout_.recv_rows) * h);
    float* gathered = gathered_.ensure<float>(total(layout_.gather_rows) * h);
    wire_.alltoallv(comms_[Group::Ep], by_expert, row_floats(layout_.send_rows, h), recv,
                    row_floats(layout_.recv_rows, h));
    wire_.allgatherv(comms_[Group::Etp], recv, gathered, row_floats(layout_.gather_rows, h));
    common::gpu::gather_rows(gathered, sorted_from_.ensure<int32_t>(0), layout_.expert_rows(), h, at_experts, s());
  }
  void combine(const float* at_experts, float* by_expert) {
    const int64_t h = hidden_;
    float* unsorted = gathered_.ensure<float>(total(layout_.gather_rows) * h);
    float* mine = recv_.ensure<float>(total(layout_.recv_rows) * h);
    common::gpu::scatter_rows(at_experts, sorted_from_.ensure<int32_t>(0), layout_.expert_rows(), h, unsorted, s());
    wire_.reduce_scatter_v(comms_[Group::Etp], unsorted, mine, row_floats(layout_.gather_rows, h));
    wire_.alltoallv(comms_[Group::Ep], mine, row_floats(layout_.recv_rows, h), by_expert,
                    row_floats(layout_.send_rows, h));
  }

  void moe_backward(float* dh_own) {
    const int64_t h = hidden_, T = own_rows_, E = c_.moe.experts, k = c_.moe.topk, rows = plan_.rows();
    const int64_t R = layout_.expert_rows(), fl = ffn_l_;
    const int32_t* slot_row = slot_row_.ensure<int32_t>(0);
    float* dyp = dyp_.ensure<float>(rows * h);
    float* dweight = dweight_.ensure<float>(T * k);
    gpu::fold_combine_backward(at(dy_), at(yp_), slot_row, weight_.ensure<float>(0), T, k, h, dyp, dweight, s());
    float* dye = dye_.ensure<float>(R * h);
    dispatch(dyp, dye);
    float* da = da_.ensure<float>(R * fl);
    float* dh13 = dh13_.ensure<float>(R * 2 * fl);
    float* dxe = dxe_.ensure<float>(R * h);
    const float *xe = at(xe_), *a = at(a_), *h13 = at(h13_);
    for_experts([&](int64_t l, int64_t o, int64_t nl) {
      gemm(false, true, nl, fl, h, dye + o * h, h, at(p_.w2) + l * fl * h, h, da + o * fl, fl);
      gemm(true, false, fl, h, nl, a + o * fl, fl, dye + o * h, h, at(g_.w2) + l * fl * h, h, 1.0f);
    });
    gpu::fold_swiglu_backward(h13, da, R, fl, dh13, s());
    for_experts([&](int64_t l, int64_t o, int64_t nl) {
      gemm(true, false, h, 2 * fl, nl, xe + o * h, h, dh13 + o * 2 * fl, 2 * fl, at(g_.w13) + l * h * 2 * fl, 2 * fl,
           1.0f);
      gemm(false, true, nl, h, 2 * fl, dh13 + o * 2 * fl, 2 * fl, at(p_.w13) + l * h * 2 * fl, 2 * fl, dxe + o * h, h);
    });
    float* dxp = dyp;  // dyp is spent once dispatched
    combine(dxe, dxp);
    float* dhn = dhn_.ensure<float>(T * h);
    check_cuda(cudaMemsetAsync(dhn, 0, static_cast<size_t>(T * h) * sizeof(float), s()), "cudaMemsetAsync");
    gpu::fold_unpermute_add(dxp, slot_row, T, k, h, dhn, s());
    // The router's backward on the host (route_backward), from the combine weights' gradient.
    std::vector<float> dweight_h(static_cast<size_t>(T * k)), dlogits_h(static_cast<size_t>(T * E));
    copy(s(), dweight_h.data(), dweight, dweight_h.size() * sizeof(float), cuda::Landed::OnReturn);
    route_backward(routing_, logits_h_.data(), dweight_h.data(), c_.moe, dlogits_h.data());
    const float* dlogits = upload(dlogits_, dlogits_h);
    const float* hn_own = at(hn_own_);
    gemm(true, false, h, E, T, hn_own, h, dlogits, E, at(g_.router), E, 1.0f);
    gemm(false, true, T, h, E, dlogits, E, at(p_.router), E, dhn, h, 1.0f);
    gpu::rmsnorm_backward(at(h_own_), at(p_.norm2), dhn, T, h, dh_own, at(g_.norm2), inv_.ensure<float>(T), s());
    gpu::copy_columns(dh_own, h, at(dy_), h, T, h, true, s());
    check_launch("fold gpu block: moe backward");
  }

  void attention_backward(const float* dh_own) {
    const int64_t h = hidden_, n = shard_rows_, T = own_rows_, d = head_dim_, hl = hl_, kn = kv_rows();
    const int64_t cp_i = index(Group::Cp), heads = batch_l_ * heads_l_;
    GroupComm& tp = comms_[Group::Tp];
    GroupComm& cp = comms_[Group::Cp];
    const float *ctx = at(ctx_), *qkv = at(qkv_), *kv = at(kv_), *probs = at(probs_);
    float* da = scratch_.ensure<float>(n * h);
    wire_.allgatherv(tp, dh_own, da, equal_floats(tp.size(), T, h));
    gemm(true, false, hl, h, n, ctx, hl, da, h, at(g_.wo), h, 1.0f);
    float* dctx = dctx_.ensure<float>(n * hl);
    gemm(false, true, n, hl, h, da, h, at(p_.wo), h, dctx, hl);
    float* dqkv = dqkv_.ensure<float>(n * 3 * hl);
    float* dkv = dkv_.ensure<float>(batch_l_ * kn * 2 * hl);
    float* ds = ds_.ensure<float>(heads * seq_c_ * kn);
    for (int64_t b = 0; b < batch_l_; ++b)
      for (int64_t j = 0; j < heads_l_; ++j) {
        const float* p = probs + (b * heads_l_ + j) * seq_c_ * kn;
        const float* dc = dctx + b * seq_c_ * hl + j * d;
        gemm(true, false, kn, d, seq_c_, p, kn, dc, hl, dkv + b * kn * 2 * hl + hl + j * d, 2 * hl);  // dv = p^T dctx
        gemm(false, true, seq_c_, kn, d, dc, hl, kv + b * kn * 2 * hl + hl + j * d, 2 * hl,
             ds + (b * heads_l_ + j) * seq_c_ * kn, kn);  // dp = dctx v^T
      }
    gpu::causal_softmax_backward(probs, ds, heads, seq_c_, kn, cp_i * seq_c_, 1.0f / std::sqrt(static_cast<float>(d)),
                                 s());
    for (int64_t b = 0; b < batch_l_; ++b)
      for (int64_t j = 0; j < heads_l_; ++j) {
        const float* dsb = ds + (b * heads_l_ + j) * seq_c_ * kn;
        gemm(false, false, seq_c_, d, kn, dsb, kn, kv + b * kn * 2 * hl + j * d, 2 * hl,
             dqkv + b * seq_c_ * 3 * hl + j * d, 3 * hl);  // dq = ds k
        gemm(true, false, kn, d, seq_c_, dsb, kn, qkv + b * seq_c_ * 3 * hl + j * d, 3 * hl,
             dkv + b * kn * 2 * hl + j * d, 2 * hl);  // dk = ds^T q
      }
    // dK and dV of each CP rank's chunk (zero for the chunks after this rank's), summed at their owner.
    float* blocks = gathered_.ensure<float>(cp.size() * n * 2 * hl);
    check_cuda(cudaMemsetAsync(blocks, 0, static_cast<size_t>(cp.size() * n * 2 * hl) * sizeof(float), s()),
               "cudaMemsetAsync");
    for (int64_t ch = 0; ch <= cp_i; ++ch)
      for (int64_t b = 0; b < batch_l_; ++b)
        copy(s(), blocks + (ch * n + b * seq_c_) * 2 * hl, dkv + (b * kn + ch * seq_c_) * 2 * hl,
             seq_c_ * 2 * hl * sizeof(float), cuda::Landed::Later);
    float* dkv_own = recv_.ensure<float>(n * 2 * hl);
    wire_.reduce_scatter_v(cp, blocks, dkv_own, equal_floats(cp.size(), n, 2 * hl));
    gpu::copy_columns(dqkv + hl, 3 * hl, dkv_own, 2 * hl, n, 2 * hl, false, s());  // dK | dV: the q loop wrote dQ
    gemm(true, false, h, 3 * hl, n, at(xn_), h, dqkv, 3 * hl, at(g_.wqkv), 3 * hl, 1.0f);
    float* dxn = scratch_.ensure<float>(n * h);
    gemm(false, true, n, h, 3 * hl, dqkv, 3 * hl, at(p_.wqkv), 3 * hl, dxn, h);
    float* dxn_own = dhn_.ensure<float>(T * h);
    wire_.reduce_scatter_v(tp, dxn, dxn_own, equal_floats(tp.size(), T, h));
    float* dx = dx_.ensure<float>(T * h);
    gpu::rmsnorm_backward(at(x_), at(p_.norm1), dxn_own, T, h, dx, at(g_.norm1), inv_.ensure<float>(T), s());
    gpu::copy_columns(dx, h, dh_own, h, T, h, true, s());
    check_launch("fold gpu block: attention backward");
  }

  void reduce_grads() {
    GroupComm& edp = comms_[Group::Edp];
    GroupComm& dp_cp = comms_[Group::DpCp];
    GroupComm& tp = comms_[Group::Tp];
    auto n = [](const std::vector<float>& v) { return static_cast<int64_t>(v.size()); };
    wire_.allreduce(edp, at(g_.w13), n(shape_.experts.w13));
    wire_.allreduce(edp, at(g_.w2), n(shape_.experts.w2));
    wire_.allreduce(dp_cp, at(g_.wqkv), n(shape_.attn.wqkv));
    wire_.allreduce(dp_cp, at(g_.wo), n(shape_.attn.wo));
    for (auto [d, v] : {std::pair{&g_.norm1, &shape_.norm1}, {&g_.norm2, &shape_.norm2}, {&g_.router, &shape_.router}}) {
      wire_.allreduce(tp, at(*d), n(*v));
      wire_.allreduce(dp_cp, at(*d), n(*v));
    }
  }

  RankComms& comms_;
  cuda::Stream stream_;
  cuda::BlasHandle blas_;
  DeviceWire wire_;
  int device_ = 0;
  BlockWeights shape_;  // this rank's weight shards on the host (their shapes)
  DeviceWeights p_, g_;
  BlockTimes times_;
  Routing<float> routing_;
  DispatchPlan plan_;
  DispatchLayout layout_;
  std::vector<float> logits_h_;
  // Activations kept for backward, and scratch (scratch_, gathered_ and recv_ hold one collective's rows at a time).
  DeviceMemory x_, dy_, y_, dx_, xn_own_, xn_, qkv_, kv_own_, kv_, probs_, ctx_, h_own_, hn_own_, logits_, row_token_,
      slot_row_, weight_, sorted_from_, xp_, xe_, h13_, a_, ye_, yp_;
  DeviceMemory dh_own_, dyp_, dweight_, dye_, da_, dh13_, dxe_, dhn_, dlogits_, inv_, dctx_, dqkv_, dkv_, ds_;
  DeviceMemory scratch_, gathered_, recv_;
};

}  // namespace

std::unique_ptr<GpuFoldedBlock> make_gpu_block(const BlockConfig& c, const Mapping& m, const Groups& g,
                                               RankComms& comms, int world_rank, const BlockWeights& w) {
  check_gpu_block(c, m);
  std::string why;
  if (!cuda::cuda_available(&why)) throw std::runtime_error(why);
  // Ranks on one node spread over its GPUs (several ranks share one when there are fewer GPUs).
  check_cuda(cudaSetDevice(comm::node_local_rank(world_rank) % cuda::device_count()), "cudaSetDevice");
  return std::make_unique<CudaFoldedBlock>(c, m, g, comms, world_rank, w);
}

#endif

}  // namespace mlsb::moe_train::fold
