// The CUDA executor (executor.hpp): cache slots in device memory, the expert store in pinned host
// memory, a copy stream and a compute stream ordered by events, fp32 cuBLAS GEMMs. Kernels:
// cuda/*.cu (launchers in cuda/kernels.hpp); host-side routing lists: cuda/routing_lists.hpp.
//
// A replay first uploads, untimed, the initial hidden states [P, h] (initial_hidden() on the host),
// each (step, expert)'s gather/scatter rows and the combine weights [P, L, k], then enqueues every
// step without blocking the host (except to recycle timing events, cuda/timeline.hpp):
//   compute stream, per step (b, l): record `step_begin`; per lookup of the plan: wait for the slot's
//     copy (when one was made), gather the expert's rows x [m, h], gu [m, 2f] = x · w13^T, a =
//     silu(g) * u (in place), out [m, h] = a · w2^T, scatter into y [n, k, h] at (token, slot j),
//     record the slot's `freed` event; then hidden += sum_j w_j * y_j, j in the trace's order.
//   copy stream, per Miss or Prefetch (in plan order): wait for `step_begin` of its step and for the
//     slot's `freed` (its last computation), copy the expert from the store into the slot, record the
//     slot's `ready` event.
// Served in any order, every expert writes its own rows of y and the combine always adds them in the
// trace's order, so an offloaded replay and the all-resident one give bit-identical hidden states.
//
// Timing (event marks on each stream, cuda/timeline.hpp): total_s is the compute stream from the
// first step's start to the last combine; compute_s sums the expert FFNs and combines on it; stall_s
// sums the gaps before computations that waited for a copy (the wait itself, plus any launch gap in
// it); total_s = compute_s + stall_s up to rounding. copy_s sums the copies on the copy stream;
// batch_s[b] sums batch b's intervals on the compute stream.
//
// All-resident (plan == nullptr): when the whole store fits in free device memory (with 1 GiB to
// spare) it is uploaded, untimed, into one slot per (layer, expert) and every lookup is a Hit there;
// otherwise each step's experts are staged through E slots (copied and counted in bytes_h2d, the
// hidden states being the same either way). Slots of every array start 256-byte aligned, so cuBLAS
// sees the same alignments, and picks the same kernels, whichever slot an expert sits in.
#include <stdexcept>
#include <string>

#include "backends/cuda/device.hpp"
#include "workloads/moe_offload/executor.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "backends/cuda/blas.hpp"
#include "backends/cuda/check.hpp"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/stream.hpp"
#include "workloads/common/cuda/rows.hpp"
#include "workloads/moe_offload/cuda/kernels.hpp"
#include "workloads/moe_offload/cuda/routing_lists.hpp"
#include "workloads/moe_offload/cuda/timeline.hpp"
#endif

namespace mlsb::moe_offload {

#ifndef MLSB_HAVE_CUDA

std::unique_ptr<Executor> make_cuda_executor(const ExpertStore&, int64_t, uint64_t) {
  throw std::runtime_error("built without CUDA");
}

#else

namespace {

constexpr const char* kContext = "moe_offload gpu";
constexpr int64_t kSlotAlignFloats = 64;        // 256 bytes
constexpr size_t kResidentMargin = size_t{1} << 30;

enum Label { kIdle = 0, kStall = 1, kCompute = 2, kCopy = 3 };

void check(cudaError_t err, const char* what) { cuda::check_cuda(err, what, kContext); }

std::invalid_argument plan_error(int64_t step, const std::string& what) {
  return std::invalid_argument("plan: step " + std::to_string(step) + ": " + what);
}

/// Device memory for at least n elements of T, kept between replays and grown when too small.
template <typename T>
class Scratch {
 public:
  T* ensure(size_t n) {
    if (!buf_ || buf_->size() < n * sizeof(T))
      buf_ = std::make_unique<cuda::DeviceBuffer>(std::max<size_t>(n, 1) * sizeof(T));
    return static_cast<T*>(buf_->data());
  }

 private:
  std::unique_ptr<cuda::DeviceBuffer> buf_;
};

/// `count` expert slots of `stride` floats in device memory and, when copies go into them, per slot
/// the event of its latest copy (`ready`, copy stream) and of its latest computation (`freed`,
/// compute stream), with flags telling whether this replay recorded them.
struct SlotArray {
  SlotArray(int64_t n, int64_t stride_floats, bool copies)
      : count(n), stride(stride_floats), mem(static_cast<size_t>(n * stride_floats) * sizeof(float)) {
    if (copies) {
      ready.reserve(static_cast<size_t>(n));
      freed.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) ready.emplace_back(false), freed.emplace_back(false);
    }
    copied.assign(static_cast<size_t>(n), 0);
    computed.assign(static_cast<size_t>(n), 0);
  }
  float* slot(int64_t i) const { return static_cast<float*>(mem.data()) + i * stride; }
  bool has_events() const { return !ready.empty(); }

  int64_t count, stride;
  cuda::DeviceBuffer mem;
  std::vector<cuda::Event> ready, freed;
  std::vector<char> copied, computed;
};

/// The all-resident plan: each step's experts ascending, a Hit in slot l * E + e (`staged` false)
/// or a Miss into slot e (`staged` true).
CachePlan resident_plan(const gpu::RoutingLists& lists, int64_t experts, bool staged) {
  CachePlan p;
  p.events.reserve(static_cast<size_t>(lists.entries()));
  for (int64_t step = 0; step < lists.steps(); ++step) {
    const auto l = static_cast<int32_t>(step % lists.layers);
    for (int64_t i = lists.step_start[step]; i < lists.step_start[step + 1]; ++i) {
      const int32_t e = lists.expert[i];
      p.events.push_back(staged ? CacheEvent{l, e, e, Access::Miss}
                                : CacheEvent{l, e, static_cast<int32_t>(l * experts + e), Access::Hit});
    }
    p.step_start.push_back(static_cast<int64_t>(p.events.size()));
  }
  return p;
}

/// Checks `plan` against the schedule's lists and a slot table (every lookup of a step's experts
/// exactly once, from the slot holding it) and returns each event's list entry (-1 for a Prefetch).
/// The slots start empty, or with `preloaded`, slot i holding expert i of the flattened (layer, expert)
/// index (the all-resident layout). Throws std::invalid_argument("plan: ...") naming the step.
std::vector<int64_t> match_plan(const CachePlan& plan, const gpu::RoutingLists& lists, int64_t slots, int64_t experts,
                                bool preloaded = false) {
  const int64_t steps = lists.steps(), L = lists.layers;
  if (static_cast<int64_t>(plan.step_start.size()) != steps + 1 || plan.step_start.front() != 0 ||
      plan.step_start.back() != static_cast<int64_t>(plan.events.size()))
    throw std::invalid_argument("plan: " + std::to_string(static_cast<int64_t>(plan.step_start.size()) - 1) +
                                " steps for a schedule of " + std::to_string(steps));
  std::vector<int64_t> entry(plan.events.size(), -1);
  std::vector<int64_t> held(static_cast<size_t>(slots), -1);
  if (preloaded) std::iota(held.begin(), held.end(), int64_t{0});
  std::vector<char> served(static_cast<size_t>(lists.entries()), 0);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t begin = plan.step_start[step], end = plan.step_start[step + 1];
    if (begin > end || end > static_cast<int64_t>(plan.events.size()))
      throw plan_error(step, "step_start out of order");
    int64_t lookups = 0;
    for (int64_t i = begin; i < end; ++i) {
      const CacheEvent& ev = plan.events[i];
      if (ev.slot < 0 || ev.slot >= slots)
        throw plan_error(step, "slot " + std::to_string(ev.slot) + " outside the " + std::to_string(slots) + " slots");
      if (ev.layer < 0 || ev.layer >= L || ev.expert < 0 || ev.expert >= experts)
        throw plan_error(step, "expert " + std::to_string(ev.expert) + " of layer " + std::to_string(ev.layer) +
                                   " outside the model");
      const int64_t key = static_cast<int64_t>(ev.layer) * experts + ev.expert;
      if (ev.kind == Access::Miss || ev.kind == Access::Prefetch) held[ev.slot] = key;
      if (ev.kind == Access::Prefetch) continue;
      if (held[ev.slot] != key)
        throw plan_error(step, "expert " + std::to_string(ev.expert) + " served from slot " + std::to_string(ev.slot) +
                                   ", which holds another");
      if (ev.layer != step % L) throw plan_error(step, "a lookup of layer " + std::to_string(ev.layer));
      const int64_t e = lists.find(step, ev.expert);
      if (e < 0 || served[e])
        throw plan_error(step, "expert " + std::to_string(ev.expert) +
                                   (e < 0 ? " is needed by no token of the batch" : " served twice"));
      served[e] = 1, entry[i] = e, ++lookups;
    }
    const int64_t needed = lists.step_start[step + 1] - lists.step_start[step];
    if (lookups != needed)
      throw plan_error(step, "serves " + std::to_string(lookups) + " of the " + std::to_string(needed) +
                                 " experts the batch needs");
  }
  return entry;
}

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(const ExpertStore& store, int64_t slots, uint64_t seed)
      : store_(store), m_(store.shape()), seed_(seed),
        stride_((store.expert_floats() + kSlotAlignFloats - 1) / kSlotAlignFloats * kSlotAlignFloats),
        blas_(compute_.get()), cache_(make_slots(slots, stride_, m_.expert_bytes())) {}

  ReplayResult replay(const RoutingTrace& t, const Schedule& s, const CachePlan* plan) override {
    check_against_model(t, m_.layers, m_.experts);
    const gpu::RoutingLists lists = gpu::build_routing_lists(t, s);
    if (plan) {
      const std::vector<int64_t> entry = match_plan(*plan, lists, cache_->count, m_.experts);
      return run(t, s, lists, *plan, entry, prepare(t, s, lists), *cache_);
    }

    const Inputs in = prepare(t, s, lists);  // first, so the free memory below excludes it
    const int64_t L = m_.layers, E = m_.experts;
    size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const double need = static_cast<double>(L * E * stride_) * sizeof(float);
    const bool fits = need + static_cast<double>(kResidentMargin) <= static_cast<double>(free_bytes);
    const CachePlan all = resident_plan(lists, E, !fits);
    const std::vector<int64_t> entry = match_plan(all, lists, fits ? L * E : E, E, fits);
    if (!fits) {
      SlotArray staging(E, stride_, true);
      return run(t, s, lists, all, entry, in, staging);
    }
    SlotArray resident(L * E, stride_, false);
    for (int64_t l = 0; l < L; ++l)
      for (int64_t e = 0; e < E; ++e)
        check(cuda::copy_on(compute_.get(), resident.slot(l * E + e), store_.expert(l, e),
                            static_cast<size_t>(m_.expert_bytes()), cuda::Landed::Later, kContext),
              "copy (resident experts)");
    check(cudaStreamSynchronize(compute_.get()), "cudaStreamSynchronize (resident experts)");
    return run(t, s, lists, all, entry, in, resident);
  }

 private:
  static std::unique_ptr<SlotArray> make_slots(int64_t slots, int64_t stride, int64_t expert_bytes) {
    if (slots < 1) throw std::invalid_argument("slots: must be at least 1");
    try {
      return std::make_unique<SlotArray>(slots, stride, true);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string(kContext) + ": a cache of " + std::to_string(slots) + " slots (" +
                               std::to_string(static_cast<double>(slots * expert_bytes) / 1e9) +
                               " GB) does not fit on the device: " + e.what());
    }
  }

  template <typename T>
  void upload(T* dst, const std::vector<T>& src) {
    check(cuda::copy_on(compute_.get(), dst, src.data(), src.size() * sizeof(T), cuda::Landed::Later, kContext),
          "copy (replay inputs)");
  }

  /// Device pointers of one replay's inputs and work buffers.
  struct Inputs {
    float* hidden;       ///< [P, h] hidden states, initialised
    const int32_t* src;  ///< routing lists (gpu::RoutingLists)
    const int32_t* dst;
    const float* weight;  ///< [P, L, k] combine weights
    float *y, *xs, *gu, *ys;  ///< [nmax * k, h], [nmax, h], [nmax, 2f], [nmax, h]
  };

  /// Uploads, untimed, a replay's initial hidden states (initial_hidden() on the host), routing lists
  /// and combine weights, and sizes the work buffers; returns when the uploads have landed.
  Inputs prepare(const RoutingTrace& t, const Schedule& s, const gpu::RoutingLists& lists) {
    const int64_t h = m_.hidden, f = m_.ffn, k = t.topk, P = static_cast<int64_t>(s.tokens.size());
    const int64_t nmax = lists.max_batch;
    std::vector<float> init(static_cast<size_t>(P * h));
    for (int64_t p = 0; p < P; ++p) initial_hidden(seed_, s.tokens[p], h, &init[static_cast<size_t>(p * h)]);
    Inputs in{};
    in.hidden = hidden_.ensure(init.size());
    int32_t* src = src_.ensure(lists.src.size());
    int32_t* dst = dst_.ensure(lists.dst.size());
    float* weight = weight_.ensure(lists.weight.size());
    upload(in.hidden, init), upload(src, lists.src), upload(dst, lists.dst), upload(weight, lists.weight);
    in.src = src, in.dst = dst, in.weight = weight;
    in.y = y_.ensure(static_cast<size_t>(nmax * k * h));
    in.xs = xs_.ensure(static_cast<size_t>(nmax * h));
    in.gu = gu_.ensure(static_cast<size_t>(nmax * 2 * f));
    in.ys = ys_.ensure(static_cast<size_t>(nmax * h));
    check(cudaStreamSynchronize(compute_.get()), "cudaStreamSynchronize (replay inputs)");
    return in;
  }

  /// Enqueues the whole replay of `plan` (checked by match_plan; entry_of its events' list entries)
  /// from `slots`, waits for it, and downloads the hidden states.
  ReplayResult run(const RoutingTrace& t, const Schedule& s, const gpu::RoutingLists& lists, const CachePlan& plan,
                   const std::vector<int64_t>& entry_of, const Inputs& in, SlotArray& slots) {
    const int64_t h = m_.hidden, k = t.topk, L = t.layers, P = static_cast<int64_t>(s.tokens.size());
    const cudaStream_t cs = compute_.get(), ps = copy_.get();
    const size_t bytes = static_cast<size_t>(m_.expert_bytes());
    ReplayResult r;
    std::fill(slots.copied.begin(), slots.copied.end(), 0);
    std::fill(slots.computed.begin(), slots.computed.end(), 0);

    compute_time_.start(cs, s.batches());
    bool copying = false;
    for (int64_t b = 0; b < s.batches(); ++b) {
      const int64_t first = s.batch_start[b], n = s.batch_start[b + 1] - first;
      for (int64_t l = 0; l < L; ++l) {
        const int64_t step = b * L + l;
        check(cudaEventRecord(step_begin_.get(), cs), "cudaEventRecord (step)");
        bool copy_after_begin = false;
        for (int64_t i = plan.step_start[step]; i < plan.step_start[step + 1]; ++i) {
          const CacheEvent& ev = plan.events[i];
          const auto slot = static_cast<size_t>(ev.slot);
          float* w = slots.slot(ev.slot);
          if (ev.kind == Access::Miss || ev.kind == Access::Prefetch) {
            if (!copy_after_begin) check(cudaStreamWaitEvent(ps, step_begin_.get(), 0), "cudaStreamWaitEvent (step)");
            copy_after_begin = true;
            if (slots.computed[slot])
              check(cudaStreamWaitEvent(ps, slots.freed[slot].get(), 0), "cudaStreamWaitEvent (slot)");
            if (copying) copy_time_.mark(kIdle);
            else copy_time_.start(ps, 0), copying = true;
            check(cuda::copy_on(ps, w, store_.expert(ev.layer, ev.expert), bytes, cuda::Landed::Later, kContext),
                  "copy (expert)");
            copy_time_.mark(kCopy);
            check(cudaEventRecord(slots.ready[slot].get(), ps), "cudaEventRecord (copy)");
            slots.copied[slot] = 1;
            r.bytes_h2d += static_cast<double>(bytes);
          }
          if (ev.kind == Access::Prefetch) continue;
          const bool waits = slots.copied[slot] != 0;
          if (waits) check(cudaStreamWaitEvent(cs, slots.ready[slot].get(), 0), "cudaStreamWaitEvent (copy)");
          compute_time_.mark(waits ? kStall : kCompute, b);
          expert_ffn(lists, entry_of[i], w, in);
          compute_time_.mark(kCompute, b);
          if (slots.has_events()) {
            check(cudaEventRecord(slots.freed[slot].get(), cs), "cudaEventRecord (computation)");
            slots.computed[slot] = 1;
          }
        }
        gpu::combine_add(in.hidden + first * h, in.y, in.weight + (first * L + l) * k, n, k, h, L * k, cs);
        cuda::check_launch("combine", kContext);
        compute_time_.mark(kCompute, b);
      }
    }
    compute_time_.finish();
    if (copying) copy_time_.finish();

    r.total_s = compute_time_.total();
    r.compute_s = compute_time_.sum(kCompute);
    r.stall_s = compute_time_.sum(kStall);
    r.copy_s = copying ? copy_time_.sum(kCopy) : 0.0;
    r.batch_s = compute_time_.batch_sums();
    r.hidden.resize(static_cast<size_t>(P * h));
    check(cuda::copy_on(cs, r.hidden.data(), in.hidden, r.hidden.size() * sizeof(float), cuda::Landed::OnReturn,
                        kContext),
          "copy (hidden states)");
    return r;
  }

  /// Enqueues list entry `e`'s expert FFN from weights `w` (w13 [2f, h] then w2 [h, f]) on the
  /// compute stream: its rows of in.hidden in, its rows of in.y [n * k, h] out.
  void expert_ffn(const gpu::RoutingLists& lists, int64_t e, const float* w, const Inputs& in) {
    const int64_t h = m_.hidden, f = m_.ffn, off = lists.row_start[e], m = lists.row_start[e + 1] - off;
    const cudaStream_t cs = compute_.get();
    const cublasHandle_t blas = blas_.get();
    common::gpu::gather_rows(in.hidden, in.src + off, m, h, in.xs, cs);
    cuda::gemm_f32(blas, false, true, m, 2 * f, h, in.xs, h, w, h, in.gu, 2 * f);  // gu [m, 2f] = x · w13^T
    gpu::swiglu_inplace(in.gu, m, f, cs);                                            // a = silu(g) * u, stride 2f
    cuda::gemm_f32(blas, false, true, m, h, f, in.gu, 2 * f, w + 2 * f * h, f, in.ys, h);  // out = a · w2^T
    common::gpu::scatter_rows(in.ys, in.dst + off, m, h, in.y, cs);
    cuda::check_launch("expert FFN", kContext);
  }

  const ExpertStore& store_;
  ModelShape m_;
  uint64_t seed_;
  int64_t stride_;  ///< floats per slot: expert_floats() rounded up to 256 bytes
  cuda::Stream compute_, copy_;
  cuda::BlasHandle blas_;
  std::unique_ptr<SlotArray> cache_;
  cuda::Event step_begin_{false};
  gpu::Timeline compute_time_, copy_time_{1024};
  Scratch<float> hidden_, weight_, y_, xs_, gu_, ys_;
  Scratch<int32_t> src_, dst_;
};

/// Throws std::invalid_argument unless the store's memory is page-locked (cudaHostAlloc'd).
void require_pinned(const ExpertStore& store) {
  cudaPointerAttributes a{};
  const cudaError_t err = cudaPointerGetAttributes(&a, store.expert(0, 0));
  if (err != cudaSuccess) cudaGetLastError();
  if (err != cudaSuccess || a.type != cudaMemoryTypeHost)
    throw std::invalid_argument("store: not in pinned host memory (allocate it with cuda_pinned_alloc)");
}

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(const ExpertStore& store, int64_t slots, uint64_t seed) {
  std::string why;
  if (!cuda::cuda_available(&why)) throw std::runtime_error(why);
  require_pinned(store);
  return std::make_unique<CudaExecutor>(store, slots, seed);
}

#endif

}  // namespace mlsb::moe_offload
