// Host side of the CUDA MoE layer (gpu_layer.hpp): device memory, the step's schedule on one stream,
// the per-expert cuBLAS GEMMs, and the dispatch plan. Kernels: cuda/*.cu (launchers in kernels.hpp).
//
// Expert parallelism (ranks > 1): this rank's permuted rows travel over EpExchange (the CPU layer's
// exchange: counts, then rows, overlap=none or the chunked pipeline, the modelled link) into the experts'
// layout, are computed, and come back the same way. On nccl they stay in device memory (staged by
// DeviceRows on the layer's stream; NCCL moves them on its own stream); on mpi they go through pinned host
// memory. The chunked pipeline computes each local expert on the GPU when its rows have arrived, with the
// same GEMM calls on the same rows as overlap=none (bit-identical), while the next chunks travel.
//
// Host synchronisation: forward copies the routing (expert ids and weights [tokens, k], E + 1 router
// sums) back and waits once; the host builds the dispatch plan with plan_dispatch(), the CPU layer's
// own code, so capacity, drop policy and row order match it exactly, and it needs each expert's row
// count to size the GEMMs anyway. The plan goes back up asynchronously from pinned memory. step()
// waits once more at its end (timings, objective). On one rank nothing else in forward or backward
// blocks; expert parallelism also waits for the rows before they travel (on mpi for each copy down, per
// expert in the chunked pipeline; on nccl for the staging copies of each chunk), and for backward's end
// before the replicated gradients' allreduce.
//
// Precision: bf16 activations and weights into every GEMM, fp32 accumulation, fp32 router logits and
// routing, fp32 weight gradients (written by the GEMMs directly) and dx, fp32 masters and moments. Under an fp8
// recipe the experts' GEMMs (routed and shared) read FP8 operands instead (Fp8Linear: quantised from the same bf16
// tensors, the weights once per step at the start of forward) and write the same outputs.
#include "workloads/moe_train/gpu_layer.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "backends/comm/communicator.hpp"
#include "backends/cuda/device.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>

#include "backends/cuda/blas.hpp"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/cublas_api.hpp"
#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/pinned_buffer.hpp"
#include "backends/cuda/stream.hpp"
#include "backends/formats/small_floats.hpp"
#include "util/parallel.hpp"
#include "workloads/moe_train/cuda/check.hpp"
#include "workloads/moe_train/cuda/device_rows.hpp"
#include "workloads/moe_train/cuda/fp8_linear.hpp"
#include "workloads/moe_train/cuda/gemm.hpp"
#include "workloads/moe_train/cuda/gemm_fp8.hpp"
#include "workloads/moe_train/cuda/grown.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"
#include "workloads/moe_train/dispatch.hpp"
#include "workloads/moe_train/moe_layer.hpp"
#endif

namespace mlsb::moe_train {
namespace {

void check_args(const MoeConfig& config, int64_t tokens, const comm::Communicator* comm, const EpOptions& ep,
                const precision::PrecisionConfig& precision) {
  validate(config, comm ? comm->size() : 1);
  validate(ep);
  if (tokens < 0) throw std::invalid_argument("tokens: must be at least 0");
  if (const std::string why = gpu_precision_unsupported(precision, config); !why.empty())
    throw std::invalid_argument(why);
}

}  // namespace

bool gpu_fp8(precision::Recipe r) {  // the recipes that scale per tensor: what cuBLASLt's FP8 GEMMs take
  const precision::Scaling s = precision::operand_format(r, precision::Role::Input, precision::Pass::Fprop).scaling;
  return s == precision::Scaling::TensorCurrent || s == precision::Scaling::TensorDelayed;
}

std::string gpu_precision_unsupported(const precision::PrecisionConfig& p, const MoeConfig& c) {
  using precision::Recipe;
  if (p.activation_storage != precision::ActivationStorage::Full)
    return "activation_storage: quantised storage is emulated on the cpu backend; the cuda layer stores its "
           "activations in bf16 (leave activation_storage at full)";
  if (p.recipe == Recipe::Fp32 || p.recipe == Recipe::Bf16) return "";
  if (!gpu_fp8(p.recipe))
    return "precision: " + std::string(precision::name_of(p.recipe)) +
           " needs block-scaled GEMMs (Blackwell's in cuBLASLt); the cuda layer runs fp32/bf16 (its bf16 GEMMs), "
           "fp8-current and fp8-delayed, the cpu backend emulates every recipe";
  if (p.accumulate == precision::Accumulate::Fp32)
    return "accumulate: fp32 is the cpu emulation's exact sum; FP8 tensor cores accumulate in limited precision: "
           "use -p accumulate=promoted (cuBLASLt's default) or limited (its fast accumulation)";
  const std::pair<const char*, int64_t> widths[] = {{"hidden", c.hidden}, {"ffn", c.ffn}, {"shared_ffn", c.shared_inner()}};
  for (const auto& [axis, width] : widths)
    if (width % 16)
      return std::string(axis) + ": " + std::to_string(width) + " is not a multiple of 16, which cuBLASLt's FP8 GEMMs need";
  return "";
}

#ifndef MLSB_HAVE_CUDA

std::unique_ptr<GpuMoeLayer> make_gpu_layer(const MoeConfig& config, int64_t tokens, uint64_t, const AdamWConfig&,
                                            comm::Communicator* comm, const EpOptions& ep,
                                            const precision::PrecisionConfig& precision) {
  check_args(config, tokens, comm, ep, precision);
  throw std::runtime_error("built without CUDA");
}

#else

namespace {

using gpu::bf16;
using gpu::check_blas;
using gpu::check_cuda;
using gpu::check_launch;
using gpu::DeviceMemory;
using gpu::gemm_bf16;
using gpu::HostMemory;

constexpr size_t kBlasWorkspace = size_t{32} << 20;  // cuBLAS's recommendation for Hopper

/// The layer's device buffers, counted.
class Arena {
 public:
  template <typename T>
  T* alloc(int64_t n) {
    const size_t bytes = sizeof(T) * static_cast<size_t>(std::max<int64_t>(n, 0));
    buffers_.push_back(std::make_unique<cuda::DeviceBuffer>(bytes));
    bytes_ += static_cast<double>(bytes);
    return static_cast<T*>(buffers_.back()->data());
  }
  double bytes() const { return bytes_; }

 private:
  std::vector<std::unique_ptr<cuda::DeviceBuffer>> buffers_;
  double bytes_ = 0;
};

/// One trained tensor: fp32 master, gradient and moments, and the bf16 copy the GEMMs read.
struct Param {
  int64_t n = 0;
  float *master = nullptr, *grad = nullptr, *m = nullptr, *v = nullptr;
  bf16* half = nullptr;
  void allocate(Arena& a, int64_t elems) {
    n = elems;
    master = a.alloc<float>(n), grad = a.alloc<float>(n), m = a.alloc<float>(n), v = a.alloc<float>(n);
    half = a.alloc<bf16>(n);
  }
};

class CudaMoeLayer final : public GpuMoeLayer {
 public:
  CudaMoeLayer(const MoeConfig& c, int64_t tokens, uint64_t seed, const AdamWConfig& opt, comm::Communicator* comm,
               const EpOptions& ep, const precision::PrecisionConfig& precision)
      : c_(c),
        opt_(opt),
        ep_(ep),
        comm_(comm && comm->size() > 1 ? comm : nullptr),
        ranks_(comm_ ? comm_->size() : 1),
        rank_(comm_ ? comm_->rank() : 0),
        T_(tokens),
        h_(c.hidden),
        f_(c.ffn),
        E_(c.experts),
        L_(c.experts / ranks_),
        k_(c.topk),
        S_(c.shared_inner()),
        R_(tokens * c.topk),
        blas_(stream_.get(), 0),
        h_expert_(R_),
        h_slot_row_(R_),
        h_row_token_(R_),
        h_weight_(R_),
        h_daux_(E_),
        h_bias_(E_),
        h_ydot_(T_),
        h_stats_(E_ + 1) {
    if (comm_)
      wire_ = std::make_unique<EpExchange>(
          *comm_, ep_.link, comm_times_,
          device_wire() ? std::make_unique<gpu::DeviceRows>(stream_.get()) : std::unique_ptr<RowMemory>());
    check_cuda(cudaGetDevice(&device_), "cudaGetDevice");
    shape_.experts = static_cast<int>(E_), shape_.topk = static_cast<int>(k_);
    shape_.groups = static_cast<int>(c.groups), shape_.group_topk = static_cast<int>(c.group_topk);
    shape_.router = c.router;
    allocate();
    if (gpu_fp8(precision.recipe)) make_fp8(precision);
    init_weights(seed);
  }

  void set_input(const std::vector<float>& x, const std::vector<float>& dy) override {
    const size_t n = static_cast<size_t>(T_ * h_);
    if (x.size() != n || dy.size() != n)
      throw std::invalid_argument("set_input: x and dy must hold tokens * hidden = " + std::to_string(n) + " values");
    // dx_ (fp32 [tokens, hidden]) stages each upload before its cast.
    upload(dx_, x.data(), n * sizeof(float));
    gpu::cast_to_bf16(dx_, static_cast<int64_t>(n), x_, stream_.get());
    sync("set_input");
    upload(dx_, dy.data(), n * sizeof(float));
    gpu::cast_to_bf16(dx_, static_cast<int64_t>(n), dy_, stream_.get());
    sync("set_input");
    have_input_ = true, have_grads_ = false;
  }

  GpuStepResult step() override {
    comm_times_ = {};
    const auto start = std::chrono::steady_clock::now();
    forward();
    backward();
    for (gpu::Fp8Linear* l : fp8_linears()) l->end_step();
    record(2);
    optimizer();
    record(3);
    copy(h_ydot_.data(), ydot_, static_cast<int64_t>(sizeof(float)) * T_);
    sync("step");
    for (gpu::Fp8Linear* l : fp8_linears()) l->roll();
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    have_grads_ = true;
    GpuStepResult r;
    r.wall_ms = wall_ms;
    r.forward_ms = elapsed(0, 1), r.backward_ms = elapsed(1, 2), r.optimizer_ms = elapsed(2, 3);
    r.aux_loss = aux_loss_, r.z_loss = z_loss_;
    double dot = 0;
    for (int64_t t = 0; t < T_; ++t) dot += h_ydot_[t];
    r.objective = (T_ > 0 ? dot / static_cast<double>(T_) : 0.0) + aux_loss_ + z_loss_;
    r.tokens_per_expert = plan_.tokens_per_expert();
    r.load = routing_.load;
    r.dropped = plan_.dropped;
    r.peak_memory_bytes = mem_.bytes() + static_cast<double>(h13_.size() + a_.size() + xe_.size() + ye_.size() +
                                                             dye_.size() + (device_wire() ? wire_->staging_bytes() : 0));
    for (const gpu::Fp8Linear* l : fp8_linears()) r.peak_memory_bytes += l->bytes();
    r.comm = comm_times_;
    return r;
  }

  std::vector<float> forward_output() override {
    forward();
    std::vector<bf16> y(static_cast<size_t>(T_ * h_));
    download(y.data(), y_, y.size() * sizeof(bf16));
    std::vector<float> out(y.size());
    for (size_t i = 0; i < y.size(); ++i) out[i] = formats::bf16_to_f32(y[i]);
    return out;
  }

  int device() const override { return device_; }

  std::vector<float> gradient(const std::string& name) override {
    if (!have_grads_) throw std::logic_error("gradient: call step() first");
    const float* src = nullptr;
    int64_t n = 0;
    if (name == "x") src = dx_, n = T_ * h_;
    else if (name == "router") src = router_.grad, n = router_.n;
    else if (name == "w13") src = w13_.grad, n = w13_.n;
    else if (name == "w2") src = w2_.grad, n = w2_.n;
    else if (name == "shared_w13") src = sw13_.grad, n = sw13_.n;
    else if (name == "shared_w2") src = sw2_.grad, n = sw2_.n;
    else
      throw std::invalid_argument("gradient: unknown '" + name + "' (x, router, w13, w2, shared_w13, shared_w2)");
    std::vector<float> out(static_cast<size_t>(n));
    download(out.data(), src, out.size() * sizeof(float));
    return out;
  }

 private:
  void allocate() {
    router_.allocate(mem_, h_ * E_);
    w13_.allocate(mem_, L_ * h_ * 2 * f_);
    w2_.allocate(mem_, L_ * f_ * h_);
    sw13_.allocate(mem_, h_ * 2 * S_);
    sw2_.allocate(mem_, S_ * h_);
    bias_d_ = mem_.alloc<float>(E_);
    x_ = mem_.alloc<bf16>(T_ * h_), dy_ = mem_.alloc<bf16>(T_ * h_), y_ = mem_.alloc<bf16>(T_ * h_);
    dx_ = mem_.alloc<float>(T_ * h_);
    logits_ = mem_.alloc<float>(T_ * E_), scores_ = mem_.alloc<float>(T_ * E_);
    aux_probs_ = mem_.alloc<float>(T_ * E_), select_ = mem_.alloc<float>(T_ * E_);
    group_score_ = mem_.alloc<float>(T_ * c_.groups), lse_ = mem_.alloc<float>(T_), ydot_ = mem_.alloc<float>(T_);
    dlogits_ = mem_.alloc<bf16>(T_ * E_);
    stats_ = mem_.alloc<double>(E_ + 1);
    daux_ = mem_.alloc<float>(E_);
    expert_ = mem_.alloc<int32_t>(R_), slot_row_ = mem_.alloc<int32_t>(R_), row_token_ = mem_.alloc<int32_t>(R_);
    weight_ = mem_.alloc<float>(R_), dweight_ = mem_.alloc<float>(R_);
    // This rank's permuted rows: at most tokens * k (dropless). yp_ also holds dxp in backward (yp is dead by then).
    xp_ = mem_.alloc<bf16>(R_ * h_), yp_ = mem_.alloc<bf16>(R_ * h_), dyp_ = mem_.alloc<bf16>(R_ * h_);
    hs13_ = mem_.alloc<bf16>(T_ * 2 * S_), as_ = mem_.alloc<bf16>(T_ * S_);
    if (!comm_) h13_.ensure<bf16>(R_ * 2 * f_), a_.ensure<bf16>(R_ * f_);  // one rank: its rows are at most R_
    workspace_ = mem_.alloc<uint8_t>(static_cast<int64_t>(kBlasWorkspace));
    check_blas(cuda::cublas().set_workspace(blas_.get(), workspace_, kBlasWorkspace), "cublasSetWorkspace");
  }

  /// The experts' linear layers in FP8 (routed fc1, fc2 one instance per local expert; shared fc1, fc2 one each),
  /// sharing cuBLAS's workspace: the GEMMs run one after another on the layer's stream.
  void make_fp8(const precision::PrecisionConfig& p) {
    gpu::Fp8Recipe r;
    r.recipe = p.recipe;
    r.fast_accum = p.accumulate == precision::Accumulate::Limited;
    r.amax_history = p.amax_history;
    fp8_gemm_ = std::make_unique<gpu::Fp8Gemm>(stream_.get(), workspace_, kBlasWorkspace);
    fc1_ = std::make_unique<gpu::Fp8Linear>(L_, h_, 2 * f_, r, *fp8_gemm_, stream_.get());
    fc2_ = std::make_unique<gpu::Fp8Linear>(L_, f_, h_, r, *fp8_gemm_, stream_.get());
    if (S_ > 0) {
      sfc1_ = std::make_unique<gpu::Fp8Linear>(1, h_, 2 * S_, r, *fp8_gemm_, stream_.get());
      sfc2_ = std::make_unique<gpu::Fp8Linear>(1, S_, h_, r, *fp8_gemm_, stream_.get());
      sfc1_->reserve(T_), sfc2_->reserve(T_);
    }
    if (!comm_) fc1_->reserve(R_), fc2_->reserve(R_);
  }

  std::vector<gpu::Fp8Linear*> fp8_linears() const {
    std::vector<gpu::Fp8Linear*> v;
    for (const auto* l : {&fc1_, &fc2_, &sfc1_, &sfc2_})
      if (*l) v.push_back(l->get());
    return v;
  }

  /// The weights of MoeLayer<float>::init(seed) on this rank: the router from a layer of the same h and E
  /// (its router stream does not depend on the experts), each local expert (global id rank * L + j) and the
  /// shared experts from init_expert, as init() makes them.
  void init_weights(uint64_t seed) {
    {
      MoeConfig light = c_;
      light.ffn = 1, light.shared_experts = 0, light.shared_ffn = 0;
      MoeLayer<float> layer(light, nullptr, 1);
      layer.init(seed);
      upload(router_.master, layer.params().router.data(), sizeof(float) * static_cast<size_t>(router_.n));
    }
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    parallel_for(L_, std::min(hw, 8), [&](int64_t j, int) {
      check_cuda(cudaSetDevice(device_), "cudaSetDevice");  // a worker thread starts on device 0
      ExpertWeights<float> one;
      init_expert(seed, rank_ * L_ + j, one, h_, f_);
      upload(w13_.master + j * h_ * 2 * f_, one.w13.data(), one.w13.size() * sizeof(float));
      upload(w2_.master + j * f_ * h_, one.w2.data(), one.w2.size() * sizeof(float));
    });
    if (S_ > 0) {
      ExpertWeights<float> shared;
      init_expert(seed, -1, shared, h_, S_);
      upload(sw13_.master, shared.w13.data(), shared.w13.size() * sizeof(float));
      upload(sw2_.master, shared.w2.data(), shared.w2.size() * sizeof(float));
    }
    for (Param* p : params()) {
      gpu::cast_to_bf16(p->master, p->n, p->half, stream_.get());
      for (float* z : {p->grad, p->m, p->v}) zero(z, p->n);
    }
    zero(bias_d_, E_);
    bias_.assign(static_cast<size_t>(E_), 0.0f);
    check_launch("weight casts");
    sync("init");
  }

  void forward() {
    if (!have_input_) throw std::logic_error("forward: call set_input() first");
    cudaStream_t st = stream_.get();
    record(0);
    if (fc1_) {  // this step's FP8 weights (their casts are forward's work, as in Transformer Engine)
      fc1_->begin(w13_.half), fc2_->begin(w2_.half);
      if (sfc1_) sfc1_->begin(sw13_.half), sfc2_->begin(sw2_.half);
    }
    if (T_ > 0) {
      gemm_bf16(blas_.get(), false, false, T_, E_, h_, x_, h_, router_.half, E_, logits_, E_, true);
      gpu::RouteForward rf;
      rf.logits = logits_, rf.bias = c_.router == RouterKind::Sigmoid ? bias_d_ : nullptr;
      rf.expert = expert_, rf.weight = weight_, rf.scores = scores_, rf.aux_probs = aux_probs_, rf.lse = lse_;
      rf.select = select_, rf.group_score = group_score_;
      gpu::route_forward(shape_, T_, rf, st);
      gpu::route_stats(aux_probs_, lse_, T_, static_cast<int>(E_), stats_, st);
      check_launch("routing");
      copy(h_expert_.data(), expert_, sizeof(int32_t) * R_);
      copy(h_weight_.data(), weight_, sizeof(float) * R_);
      copy(h_stats_.data(), stats_, sizeof(double) * (E_ + 1));
      sync("routing");  // the one wait of forward on one GPU: the plan needs the routing
    }
    plan_on_host();
    copy(slot_row_, h_slot_row_.data(), sizeof(int32_t) * R_);
    copy(row_token_, h_row_token_.data(), sizeof(int32_t) * plan_.rows());
    copy(daux_, h_daux_.data(), sizeof(float) * E_);
    gpu::permute_rows(x_, row_token_, plan_.rows(), h_, xp_, st);
    // y = the shared experts of x (none: zero, as combine then writes it): needs none of the exchange.
    auto shared = [&] {
      if (S_ == 0) return;
      if (sfc1_)
        sfc1_->fprop(0, x_, T_, hs13_);
      else
        gemm_bf16(blas_.get(), false, false, T_, 2 * S_, h_, x_, h_, sw13_.half, 2 * S_, hs13_, 2 * S_, false);
      gpu::swiglu_forward(hs13_, T_, S_, as_, st);
      if (sfc2_)
        sfc2_->fprop(0, as_, T_, y_);
      else
        gemm_bf16(blas_.get(), false, false, T_, h_, S_, as_, S_, sw2_.half, h_, y_, h_, false);
    };
    if (!comm_) {
      offsets_ = plan_.offsets;
      experts_forward(xp_, 0, E_, yp_);
      shared();
    } else {
      std::vector<int64_t> everyone;
      const bool chunked = ep_.overlap == Overlap::Chunked;
      const auto counts = plan_.tokens_per_expert();
      layout_ = EpLayout::make(counts, wire_->counts_to_experts(counts, L_, chunked ? &everyone : nullptr), ranks_, L_,
                               static_cast<size_t>(h_) * sizeof(bf16));
      if (chunked) chunks_ = plan_chunks(std::move(everyone), ranks_, rank_, L_, ep_.chunks);
      offsets_ = layout_.local_offsets;
      bf16* xe = xe_.ensure<bf16>(layout_.rows_in() * h_);
      bf16* ye = ye_.ensure<bf16>(layout_.rows_in() * h_);
      // Sized before the exchange: cudaMalloc/cudaFree inside it would wait for the rows in flight.
      h13_.ensure<bf16>(layout_.rows_in() * 2 * f_), a_.ensure<bf16>(layout_.rows_in() * f_);
      if (fc1_) fc1_->reserve(layout_.rows_in()), fc2_->reserve(layout_.rows_in());
      exchange(
          0, xp_, xe, ye, yp_, [&](int64_t j0, int64_t j1) { experts_forward(xe, j0, j1, ye); }, shared);
    }
    gpu::combine(yp_, slot_row_, weight_, T_, static_cast<int>(k_), h_, S_ > 0, dy_, y_, ydot_, st);
    check_launch("forward");
    record(1);
  }

  /// Local experts [j0, j1) on the rows `offsets_` lays out in x: x -> h13 -> a -> y (h13 and a kept for
  /// backward). One expert or all, the GEMM calls per expert are the same.
  void experts_forward(const bf16* x, int64_t j0, int64_t j1, bf16* y) {
    const int64_t in = offsets_.back();
    bf16* h13 = h13_.ensure<bf16>(in * 2 * f_);
    bf16* a = a_.ensure<bf16>(in * f_);
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t o = offsets_[j], m = offsets_[j + 1] - o;
      if (fc1_)
        fc1_->fprop(j, x + o * h_, m, h13 + o * 2 * f_);
      else
        gemm_bf16(blas_.get(), false, false, m, 2 * f_, h_, x + o * h_, h_, w13_.half + j * h_ * 2 * f_, 2 * f_,
                  h13 + o * 2 * f_, 2 * f_, false);
    }
    const int64_t o0 = offsets_[j0], rows = offsets_[j1] - o0;
    gpu::swiglu_forward(h13 + o0 * 2 * f_, rows, f_, a + o0 * f_, stream_.get());
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t o = offsets_[j], m = offsets_[j + 1] - o;
      if (fc2_)
        fc2_->fprop(j, a + o * f_, m, y + o * h_);
      else
        gemm_bf16(blas_.get(), false, false, m, h_, f_, a + o * f_, f_, w2_.half + j * f_ * h_, h_, y + o * h_, h_,
                  false);
    }
  }

  /// Backward of experts_forward for [j0, j1): dy -> dW2, da (in a), SwiGLU backward in place in h13,
  /// dW13, dx. An expert without rows gets zero weight gradients.
  void experts_backward(const bf16* x, const bf16* dy, int64_t j0, int64_t j1, bf16* dx) {
    bf16* h13 = h13_.ensure<bf16>(offsets_.back() * 2 * f_);
    bf16* a = a_.ensure<bf16>(offsets_.back() * f_);
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t o = offsets_[j], m = offsets_[j + 1] - o;
      if (m == 0) {
        zero(w13_.grad + j * h_ * 2 * f_, h_ * 2 * f_);
        zero(w2_.grad + j * f_ * h_, f_ * h_);
        continue;
      }
      if (fc2_)
        fc2_->wgrad(j, a + o * f_, dy + o * h_, m, w2_.grad + j * f_ * h_);
      else
        gemm_bf16(blas_.get(), true, false, f_, h_, m, a + o * f_, f_, dy + o * h_, h_, w2_.grad + j * f_ * h_, h_,
                  true);
    }
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t o = offsets_[j], m = offsets_[j + 1] - o;
      if (fc2_)
        fc2_->dgrad(j, dy + o * h_, m, a + o * f_, false);
      else
        gemm_bf16(blas_.get(), false, true, m, f_, h_, dy + o * h_, h_, w2_.half + j * f_ * h_, h_, a + o * f_, f_,
                  false);
    }
    const int64_t o0 = offsets_[j0], rows = offsets_[j1] - o0;
    gpu::swiglu_backward(h13 + o0 * 2 * f_, a + o0 * f_, rows, f_, stream_.get());
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t o = offsets_[j], m = offsets_[j + 1] - o;
      if (fc1_) {
        fc1_->wgrad(j, x + o * h_, h13 + o * 2 * f_, m, w13_.grad + j * h_ * 2 * f_);
        fc1_->dgrad(j, h13 + o * 2 * f_, m, dx + o * h_, false);
        continue;
      }
      gemm_bf16(blas_.get(), true, false, h_, 2 * f_, m, x + o * h_, h_, h13 + o * 2 * f_, 2 * f_,
                w13_.grad + j * h_ * 2 * f_, 2 * f_, true);
      gemm_bf16(blas_.get(), false, true, m, h_, 2 * f_, h13 + o * 2 * f_, 2 * f_, w13_.half + j * h_ * 2 * f_, 2 * f_,
                dx + o * h_, h_, false);
    }
  }

  /// One direction (0 forward, 1 backward) of the expert-parallel exchange: this rank's rows `mine` (by global
  /// expert) go to the experts' ranks into `in` (the experts' layout, layout_), `experts(j0, j1)` computes
  /// local experts into `out`, whose rows come home into `back` (laid out as `mine`). On a device-buffer
  /// communicator (nccl) the rows travel between device buffers on its communication stream, staged on the
  /// device; otherwise through pinned host memory. overlap=chunked runs EpExchange's pipeline, computing each
  /// local expert when its rows have arrived, and `side` (the shared experts) where shared_slot puts it;
  /// overlap=none runs `side` after the exchange.
  void exchange(int dir, const bf16* mine, bf16* in, bf16* out, bf16* back,
                const std::function<void(int64_t, int64_t)>& experts, const std::function<void()>& side) {
    const int64_t rows = plan_.rows(), rows_in = layout_.rows_in();
    const int64_t row = h_ * static_cast<int64_t>(sizeof(bf16));
    if (device_wire()) {
      sync("expert-parallel rows");  // the communication stream reads what this stream wrote
      if (ep_.overlap == Overlap::None) {
        exchange_whole(mine, d_in_.ensure<unsigned char>(rows_in * row), in, out,
                       d_out_.ensure<unsigned char>(rows_in * row), back, experts, side);
      } else {
        // The pipeline's staging copies are on this stream (DeviceRows): each expert's GEMMs follow its rows.
        wire_->chunked(
            chunks_, static_cast<size_t>(row), mine, plan_.offsets, in, offsets_, [&](int64_t j) { experts(j, j + 1); },
            out, back, side, ep_.shared_slot[dir]);
      }
      return;
    }
    unsigned char* h_mine = h_mine_.ensure<unsigned char>(rows * row);
    unsigned char* h_back = h_back_.ensure<unsigned char>(rows * row);
    unsigned char* h_in = h_in_.ensure<unsigned char>(rows_in * row);
    unsigned char* h_out = h_out_.ensure<unsigned char>(rows_in * row);
    copy(h_mine, mine, rows * row);
    sync("expert-parallel rows");
    if (ep_.overlap == Overlap::None) {
      exchange_whole(h_mine, h_in, in, out, h_out, h_back, experts, side);
    } else {
      wire_->chunked(
          chunks_, static_cast<size_t>(row), h_mine, plan_.offsets, h_in, offsets_,
          [&](int64_t j) {
            const int64_t o = offsets_[j], n = (offsets_[j + 1] - o) * row;
            copy(in + o * h_, h_in + o * row, n);
            experts(j, j + 1);
            copy(h_out + o * row, out + o * h_, n);
            sync("expert-parallel results");
          },
          h_out, h_back, side, ep_.shared_slot[dir]);
    }
    copy(back, h_back, rows * row);
  }

  /// overlap=none: every row out at once (`send` -> the wire layout `wire_in`), copied into the experts' layout
  /// `in`, all local experts computed into `out`, copied into the wire layout `wire_out`, every result home at
  /// once into `recv`; then `side`. The wire buffers are pinned host memory or, on nccl, device memory.
  void exchange_whole(const void* send, unsigned char* wire_in, bf16* in, bf16* out, unsigned char* wire_out,
                      void* recv, const std::function<void(int64_t, int64_t)>& experts,
                      const std::function<void()>& side) {
    const int64_t row = h_ * static_cast<int64_t>(sizeof(bf16));
    wire_->alltoallv(send, layout_.send_bytes, wire_in, layout_.recv_bytes);
    layout_.for_each_block([&](int64_t wire_row, int64_t expert_row, int64_t n) {
      copy(in + expert_row * h_, wire_in + wire_row * row, n * row);
    });
    experts(0, L_);
    layout_.for_each_block([&](int64_t wire_row, int64_t expert_row, int64_t n) {
      copy(wire_out + wire_row * row, out + expert_row * h_, n * row);
    });
    sync("expert-parallel results");
    wire_->alltoallv(wire_out, layout_.recv_bytes, recv, layout_.send_bytes);
    side();
  }

  /// Routing copied back -> the CPU layer's dispatch plan, loads, aux and z losses, d(aux)/d(probs).
  void plan_on_host() {
    routing_.tokens = T_, routing_.experts = E_, routing_.topk = k_;
    routing_.expert.assign(h_expert_.data(), h_expert_.data() + R_);
    routing_.weight.assign(h_weight_.data(), h_weight_.data() + R_);
    routing_.load.assign(static_cast<size_t>(E_), 0);
    for (int32_t e : routing_.expert) {
      if (e < 0 || e >= E_) throw std::runtime_error("moe_train gpu: router chose expert " + std::to_string(e));
      ++routing_.load[e];
    }
    plan_ = plan_dispatch(routing_, c_);
    aux_loss_ = z_loss_ = 0;
    for (int64_t i = 0; i < E_; ++i) h_daux_[i] = 0;
    if (T_ > 0) {
      const double assignments = static_cast<double>(T_ * k_), tokens = static_cast<double>(T_);
      double aux = 0;
      for (int64_t i = 0; i < E_; ++i) {
        const double f = static_cast<double>(routing_.load[i]) / assignments;
        aux += f * (h_stats_[i] / tokens);
        h_daux_[i] = static_cast<float>(c_.aux_coef * static_cast<double>(E_) * f / tokens);
      }
      aux_loss_ = c_.aux_coef * static_cast<double>(E_) * aux;
      z_loss_ = c_.z_coef * h_stats_[E_] / tokens;
    }
    for (int64_t s = 0; s < R_; ++s) h_slot_row_[s] = static_cast<int32_t>(plan_.slot_row[s]);
    for (int64_t r = 0; r < plan_.rows(); ++r) h_row_token_[r] = static_cast<int32_t>(plan_.row_token[r]);
  }

  void backward() {
    cudaStream_t st = stream_.get();
    // Without tokens the GEMMs below enqueue nothing (their outputs untouched): the replicated gradients are 0.
    // A rank without tokens still computes its experts' rows from other ranks.
    if (T_ == 0)
      for (Param* p : {&router_, &sw13_, &sw2_}) zero(p->grad, p->n);
    const int k = static_cast<int>(k_);
    gpu::combine_backward(dy_, yp_, slot_row_, weight_, T_, k, h_, dyp_, dweight_, st);
    gpu::RouteBackward rb;
    rb.logits = logits_, rb.scores = scores_, rb.aux_probs = aux_probs_, rb.lse = lse_;
    rb.expert = expert_, rb.weight = weight_, rb.dweight = dweight_, rb.daux = daux_;
    rb.z_scale = static_cast<float>(T_ > 0 ? 2 * c_.z_coef / static_cast<double>(T_) : 0.0), rb.aux = c_.aux_coef > 0;
    rb.dlogits = dlogits_;
    gpu::route_backward(shape_, T_, rb, st);
    gemm_bf16(blas_.get(), true, false, h_, E_, T_, x_, h_, dlogits_, E_, router_.grad, E_, true);
    // The shared experts on every token, from dy itself; their dx starts dx_.
    auto shared = [&] {
      if (S_ == 0) return;
      if (sfc2_) {
        sfc2_->wgrad(0, as_, dy_, T_, sw2_.grad);
        sfc2_->dgrad(0, dy_, T_, as_, false);
      } else {
        gemm_bf16(blas_.get(), true, false, S_, h_, T_, as_, S_, dy_, h_, sw2_.grad, h_, true);
        gemm_bf16(blas_.get(), false, true, T_, S_, h_, dy_, h_, sw2_.half, h_, as_, S_, false);
      }
      gpu::swiglu_backward(hs13_, as_, T_, S_, st);
      if (sfc1_) {
        sfc1_->wgrad(0, x_, hs13_, T_, sw13_.grad);
        sfc1_->dgrad(0, hs13_, T_, dx_, true);
      } else {
        gemm_bf16(blas_.get(), true, false, h_, 2 * S_, T_, x_, h_, hs13_, 2 * S_, sw13_.grad, 2 * S_, true);
        gemm_bf16(blas_.get(), false, true, T_, h_, 2 * S_, hs13_, 2 * S_, sw13_.half, 2 * S_, dx_, h_, true);
      }
    };
    bf16* dxp = yp_;  // yp is dead
    if (!comm_) {
      experts_backward(xp_, dyp_, 0, E_, dxp);
      shared();
    } else {
      bf16* xe = xe_.ensure<bf16>(layout_.rows_in() * h_);
      bf16* dye = dye_.ensure<bf16>(layout_.rows_in() * h_);
      bf16* dxe = ye_.ensure<bf16>(layout_.rows_in() * h_);  // ye is dead
      exchange(
          1, dyp_, dye, dxe, dxp, [&](int64_t j0, int64_t j1) { experts_backward(xe, dye, j0, j1, dxe); }, shared);
    }
    gpu::unpermute_add(dxp, slot_row_, T_, k, h_, S_ > 0, dx_, st);
    gemm_bf16(blas_.get(), false, true, T_, h_, E_, dlogits_, E_, router_.half, E_, dx_, h_, true, 1.0f);
    check_launch("backward");
    if (comm_) {
      sync("backward");  // the allreduce's time is communication only
      wire_->timed([&] { allreduce_replicated(); });
    }
  }

  /// The replicated weights' gradients (router, shared experts) summed over ranks: in place on a device-buffer
  /// communicator, else through pinned host memory.
  void allreduce_replicated() {
    for (Param* p : {&router_, &sw13_, &sw2_}) {
      if (p->n == 0) continue;
      if (device_wire()) {
        comm_->allreduce(p->grad, p->grad, static_cast<size_t>(p->n), comm::ElemType::F32, comm::ReduceOp::Sum);
        continue;
      }
      float* host = h_grad_.ensure<float>(p->n);
      copy(host, p->grad, p->n * static_cast<int64_t>(sizeof(float)));
      sync("gradient allreduce");
      comm_->allreduce(host, host, static_cast<size_t>(p->n), comm::ElemType::F32, comm::ReduceOp::Sum);
      copy(p->grad, host, p->n * static_cast<int64_t>(sizeof(float)));
      sync("gradient allreduce");
    }
  }

  void optimizer() {
    ++steps_;
    const double bc1 = 1 - std::pow(opt_.beta1, static_cast<double>(steps_));
    const double bc2 = 1 - std::pow(opt_.beta2, static_cast<double>(steps_));
    gpu::math::AdamWStep s;
    s.lr = static_cast<float>(opt_.lr), s.beta1 = static_cast<float>(opt_.beta1), s.beta2 = static_cast<float>(opt_.beta2);
    s.eps = static_cast<float>(opt_.eps), s.weight_decay = static_cast<float>(opt_.weight_decay);
    s.inv_bc1 = static_cast<float>(1 / bc1), s.inv_bc2 = static_cast<float>(1 / bc2);
    for (Param* p : params()) gpu::adamw_update(p->master, p->grad, p->m, p->v, p->half, p->n, s, stream_.get());
    check_launch("adamw");
    if (c_.router == RouterKind::Sigmoid && c_.bias_rate != 0) {
      std::vector<int64_t> load = routing_.load;  // summed over ranks, as MoeLayer::update_bias
      if (comm_)
        comm_->host_side().allreduce(load.data(), load.data(), load.size(), comm::ElemType::I64, comm::ReduceOp::Sum);
      update_expert_bias(bias_, load, c_.bias_rate);
      std::copy(bias_.begin(), bias_.end(), h_bias_.data());
      copy(bias_d_, h_bias_.data(), sizeof(float) * E_);
    }
  }

  std::vector<Param*> params() { return {&router_, &w13_, &w2_, &sw13_, &sw2_}; }

  void record(int i) { check_cuda(cudaEventRecord(ev_[i].get(), stream_.get()), "cudaEventRecord"); }
  double elapsed(int a, int b) const { return cuda::elapsed_ms(ev_[a], ev_[b], "moe_train gpu"); }
  void sync(const char* what) const { check_cuda(cudaStreamSynchronize(stream_.get()), what); }
  void zero(void* d, int64_t floats) {
    if (floats > 0)
      check_cuda(cudaMemsetAsync(d, 0, sizeof(float) * static_cast<size_t>(floats), stream_.get()), "cudaMemset");
  }
  /// Expert parallelism's rows travel between device buffers (nccl), not through host memory.
  bool device_wire() const { return comm_ && comm_->device_buffers(); }
  // An asynchronous copy on the layer's stream between device and pinned host memory, either way.
  void copy(void* to, const void* from, int64_t bytes) {
    if (bytes > 0)
      check_cuda(cuda::copy_on(stream_.get(), to, from, static_cast<size_t>(bytes), cuda::Landed::Later, "gpu layer"),
                 "copy");
  }
  // Synchronous copies from or to pageable memory (through the layer's stream, so they order with its work).
  void upload(void* dev, const void* host, size_t bytes) {
    copy(dev, host, static_cast<int64_t>(bytes));
    sync("upload");
  }
  void download(void* host, const void* dev, size_t bytes) {
    copy(host, dev, static_cast<int64_t>(bytes));
    sync("download");
  }

  MoeConfig c_;
  AdamWConfig opt_;
  EpOptions ep_;
  comm::Communicator* comm_;  // nullptr: one rank
  int ranks_, rank_;
  int device_ = 0;
  // tokens, hidden, ffn, experts, local experts, topk, shared inner size, tokens * k
  int64_t T_, h_, f_, E_, L_, k_, S_, R_;
  gpu::math::RouteShape shape_;
  cuda::Stream stream_;
  cuda::BlasHandle blas_;  // its workspace comes from mem_ (counted with the layer's memory)
  void* workspace_ = nullptr;
  cuda::Event ev_[4];      // forward start, forward end = backward start, backward end, optimizer end
  Arena mem_;
  Param router_, w13_, w2_, sw13_, sw2_;
  float* bias_d_ = nullptr;
  bf16 *x_ = nullptr, *dy_ = nullptr, *y_ = nullptr;
  float* dx_ = nullptr;
  float *logits_ = nullptr, *scores_ = nullptr, *aux_probs_ = nullptr, *select_ = nullptr, *group_score_ = nullptr;
  float *lse_ = nullptr, *ydot_ = nullptr, *daux_ = nullptr, *weight_ = nullptr, *dweight_ = nullptr;
  bf16* dlogits_ = nullptr;
  double* stats_ = nullptr;
  int32_t *expert_ = nullptr, *slot_row_ = nullptr, *row_token_ = nullptr;
  bf16 *xp_ = nullptr, *yp_ = nullptr, *dyp_ = nullptr, *hs13_ = nullptr, *as_ = nullptr;
  // The experts' side: their rows' offsets (by local expert; one rank: plan_.offsets), SwiGLU activations,
  // and with expert parallelism their inputs xe, outputs ye (dx in backward) and upstream gradients dye.
  std::vector<int64_t> offsets_;
  DeviceMemory h13_, a_, xe_, ye_, dye_;
  HostMemory h_mine_, h_in_, h_out_, h_back_, h_grad_;  // expert parallelism's pinned staging
  DeviceMemory d_in_, d_out_;                           // overlap=none's wire layout on a device-buffer communicator
  cuda::PinnedBuffer<int32_t> h_expert_, h_slot_row_, h_row_token_;
  cuda::PinnedBuffer<float> h_weight_, h_daux_, h_bias_, h_ydot_;
  cuda::PinnedBuffer<double> h_stats_;
  std::vector<float> bias_;
  Routing<float> routing_;
  DispatchPlan plan_;
  CommTimes comm_times_;
  std::unique_ptr<EpExchange> wire_;  // ranks > 1
  // fp8 recipes: the experts' GEMMs (routed fc1, fc2; shared fc1, fc2 when there are shared experts).
  std::unique_ptr<gpu::Fp8Gemm> fp8_gemm_;
  std::unique_ptr<gpu::Fp8Linear> fc1_, fc2_, sfc1_, sfc2_;
  EpLayout layout_;
  ChunkPlan chunks_;  // overlap=chunked
  double aux_loss_ = 0, z_loss_ = 0;
  int64_t steps_ = 0;
  bool have_input_ = false, have_grads_ = false;
};

}  // namespace

std::unique_ptr<GpuMoeLayer> make_gpu_layer(const MoeConfig& config, int64_t tokens, uint64_t seed,
                                            const AdamWConfig& optimizer, comm::Communicator* comm,
                                            const EpOptions& ep, const precision::PrecisionConfig& precision) {
  check_args(config, tokens, comm, ep, precision);
  std::string why;
  if (!cuda::cuda_available(&why)) throw std::runtime_error(why);
  // Ranks on one node spread over its GPUs (several ranks share one when there are fewer GPUs).
  if (comm && comm->size() > 1)
    check_cuda(cudaSetDevice(comm::node_local_rank(comm->rank()) % cuda::device_count()), "cudaSetDevice");
  if (gpu_fp8(precision.recipe)) {
    int dev = 0;
    cudaDeviceProp prop{};
    check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
    check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    if (prop.major * 10 + prop.minor < 89)
      throw std::runtime_error("precision: " + std::string(precision::name_of(precision.recipe)) +
                               " needs FP8 tensor cores (compute capability 8.9 or newer); GPU " + prop.name + " is " +
                               std::to_string(prop.major) + "." + std::to_string(prop.minor));
  }
  return std::make_unique<CudaMoeLayer>(config, tokens, seed, optimizer, comm, ep, precision);
}

#endif

}  // namespace mlsb::moe_train
