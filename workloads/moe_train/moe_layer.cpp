#include "workloads/moe_train/moe_layer.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>

#include "backends/comm/communicator.hpp"
#include "backends/cpu/gemm.hpp"
#include "harness/workload.hpp"
#include "util/clock.hpp"
#include "util/parallel.hpp"
#include "workloads/moe_train/init.hpp"

namespace mlsb::moe_train {
namespace {

std::mt19937_64 stream(uint64_t seed, int64_t id) {
  return std::mt19937_64(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(id + 2))));
}

template <typename T>
comm::ElemType elem_type() {
  return std::is_same_v<T, float> ? comm::ElemType::F32 : comm::ElemType::F64;
}

// Runs body(t) for t in [0, n) on `threads` threads, 32 rows at a time.
template <typename F>
void for_each_token(int64_t n, int threads, F&& body) {
  parallel_for_ranges(n, 32, threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) body(t);
  });
}

// Runs f() and adds its seconds to `into`.
template <typename F>
void add_time(double& into, F&& f) {
  const auto t0 = Clock::now();
  f();
  into += seconds_since(t0);
}

}  // namespace

template <typename T>
void init_expert(uint64_t seed, int64_t global_id, ExpertWeights<T>& w, int64_t hidden, int64_t ffn) {
  w.resize(1, hidden, ffn);
  auto rng = stream(seed, global_id);
  fill_normal(w.w13, 1.0 / std::sqrt(static_cast<double>(hidden)), rng);
  fill_normal(w.w2, 1.0 / std::sqrt(static_cast<double>(ffn)), rng);
}

template <typename T>
MoeLayer<T>::MoeLayer(const MoeConfig& config, comm::Communicator* comm, int threads, const EpOptions& ep)
    : c_(config), comm_(comm), ep_(ep), threads_(threads < 1 ? 1 : threads) {
  if (comm_) ranks_ = comm_->size(), rank_ = comm_->rank();
  validate(c_, ranks_);
  validate(ep_);
  if (ranks_ > 1) wire_ops_ = std::make_unique<EpExchange>(*comm_, ep_.link, times_.comm);
  local_experts_ = c_.experts / ranks_;
  p_.router.assign(c_.hidden * c_.experts, T(0));
  p_.experts.resize(local_experts_, c_.hidden, c_.ffn);
  p_.shared.resize(c_.shared_experts > 0 ? 1 : 0, c_.hidden, c_.shared_inner());
  g_ = p_;
  bias_.assign(c_.experts, 0.0f);
}

template <typename T>
void MoeLayer<T>::init(uint64_t seed) {
  auto rng = stream(seed, -2);
  fill_normal(p_.router, 1.0 / std::sqrt(static_cast<double>(c_.hidden)), rng);
  ExpertWeights<T> one;
  for (int64_t j = 0; j < local_experts_; ++j) {
    init_expert(seed, rank_ * local_experts_ + j, one, c_.hidden, c_.ffn);
    std::copy(one.w13.begin(), one.w13.end(), p_.experts.w13_of(j));
    std::copy(one.w2.begin(), one.w2.end(), p_.experts.w2_of(j));
  }
  if (p_.shared.experts) init_expert(seed, -1, p_.shared, c_.hidden, c_.shared_inner());
  std::fill(bias_.begin(), bias_.end(), 0.0f);
  zero_grad();
}

template <typename T>
void MoeLayer<T>::zero_grad() {
  std::fill(g_.router.begin(), g_.router.end(), T(0));
  std::fill(g_.experts.w13.begin(), g_.experts.w13.end(), T(0));
  std::fill(g_.experts.w2.begin(), g_.experts.w2.end(), T(0));
  std::fill(g_.shared.w13.begin(), g_.shared.w13.end(), T(0));
  std::fill(g_.shared.w2.begin(), g_.shared.w2.end(), T(0));
}

template <typename T>
void MoeLayer<T>::exchange(const std::vector<T>& by_expert, std::vector<T>& by_local_expert) {
  const int64_t h = c_.hidden;
  std::vector<T>& recv = wire_;
  recv.resize(layout_.rows_in() * h);
  wire_ops_->alltoallv(by_expert.data(), layout_.send_bytes, recv.data(), layout_.recv_bytes);
  // recv is [source][local expert][rows]; the experts want [local expert][source][rows].
  by_local_expert.resize(recv.size());
  layout_.for_each_block([&](int64_t wire_row, int64_t expert_row, int64_t n) {
    std::memcpy(by_local_expert.data() + expert_row * h, recv.data() + wire_row * h, n * h * sizeof(T));
  });
}

template <typename T>
void MoeLayer<T>::exchange_back(const std::vector<T>& by_local_expert, std::vector<T>& by_expert) {
  const int64_t h = c_.hidden;
  std::vector<T>& send = wire_;
  send.resize(by_local_expert.size());
  layout_.for_each_block([&](int64_t wire_row, int64_t expert_row, int64_t n) {
    std::memcpy(send.data() + wire_row * h, by_local_expert.data() + expert_row * h, n * h * sizeof(T));
  });
  by_expert.resize(plan_.rows() * h);
  wire_ops_->alltoallv(send.data(), layout_.recv_bytes, by_expert.data(), layout_.send_bytes);
}

template <typename T>
void MoeLayer<T>::set_layout(std::vector<int64_t>* everyone) {
  const std::vector<int64_t> counts = plan_.tokens_per_expert();
  auto recv = wire_ops_->counts_to_experts(counts, local_experts_, everyone);
  layout_ = EpLayout::make(counts, std::move(recv), ranks_, local_experts_, c_.hidden * sizeof(T));
  local_offsets_ = layout_.local_offsets;
}

template <typename T>
void MoeLayer<T>::pipeline(int dir, const T* out, T* in, const T* results, T* back,
                           const std::function<void(int64_t)>& expert, const std::function<void()>& shared) {
  PipelinePieces& piece = times_.pieces[dir];
  piece.expert_s.resize(local_experts_);
  const double blocked = times_.comm.blocked_s;
  wire_ops_->chunked(
      chunks_, c_.hidden * sizeof(T), out, plan_.offsets, in, local_offsets_,
      [&](int64_t j) { add_time(piece.expert_s[j], [&] { expert(j); }); }, results, back,
      [&] { add_time(piece.shared_s, shared); }, ep_.shared_slot[dir]);
  piece.wait_s += times_.comm.blocked_s - blocked;
}

template <typename T>
void MoeLayer<T>::forward(const T* x, int64_t tokens, T* y) {
  const int64_t h = c_.hidden, E = c_.experts, L = local_experts_;
  x_ = x, tokens_ = tokens;
  logits_.resize(tokens * E);
  cpu::gemm<T>(false, false, tokens, E, h, x, p_.router.data(), T(0), logits_.data());
  routing_ = route(logits_.data(), tokens, c_, c_.router == RouterKind::Sigmoid ? bias_.data() : nullptr);
  plan_ = plan_dispatch(routing_, c_);
  const int64_t rows = plan_.rows();
  xp_.resize(rows * h);
  for_each_token(rows, threads_, [&](int64_t r) {
    std::memcpy(xp_.data() + r * h, x + plan_.row_token[r] * h, h * sizeof(T));
  });
  yp_.resize(rows * h);
  // y = the shared experts of x (0 without): needs none of the exchange, so the chunked pipeline may run it.
  auto shared_forward = [&] {
    const int64_t so[2] = {0, tokens};
    if (p_.shared.experts)
      experts_forward(p_.shared, x, so, y, shared_cache_, threads_, times_.experts, 0, -1, shared_sites_);
    else
      std::fill(y, y + tokens * h, T(0));
  };
  if (ranks_ == 1) {
    local_offsets_ = plan_.offsets;
    experts_forward(p_.experts, xp_.data(), local_offsets_, yp_.data(), cache_, threads_, times_.experts, 0, -1,
                    routed_sites_);
  } else if (ep_.overlap == Overlap::None) {
    // Counts first (all-to-all of E/ranks counts per rank pair), then the rows themselves.
    set_layout(nullptr);
    exchange(xp_, xe_);
    ye_.resize(xe_.size());
    experts_forward(p_.experts, xe_.data(), local_offsets_, ye_.data(), cache_, threads_, times_.experts, 0, -1,
                    routed_sites_);
    exchange_back(ye_, yp_);
  } else {
    // Every rank's counts (each rank plans every step of every peer), then the pipeline of chunks.
    std::vector<int64_t> all;
    set_layout(&all);
    chunks_ = plan_chunks(std::move(all), ranks_, rank_, L, ep_.chunks);
    xe_.resize(local_offsets_[L] * h), ye_.resize(xe_.size());
    pipeline(
        0, xp_.data(), xe_.data(), ye_.data(), yp_.data(),
        [&](int64_t j) {
          experts_forward(p_.experts, xe_.data(), local_offsets_, ye_.data(), cache_, threads_, times_.experts, j,
                          j + 1, routed_sites_);
        },
        shared_forward);
  }
  local_rows_.assign(L, 0);
  for (int64_t j = 0; j < L; ++j) local_rows_[j] = local_offsets_[j + 1] - local_offsets_[j];
  // Combine: y[t] = sum over kept assignments of weight * expert output (+ the shared experts).
  if (ranks_ == 1 || ep_.overlap == Overlap::None) shared_forward();
  const int64_t k = c_.topk;
  for_each_token(tokens, threads_, [&](int64_t t) {
    T* yt = y + t * h;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = plan_.slot_row[t * k + j];
      if (r < 0) continue;
      const T w = routing_.weight[t * k + j];
      const T* yr = yp_.data() + r * h;
      for (int64_t i = 0; i < h; ++i) yt[i] += w * yr[i];
    }
  });
}

template <typename T>
void MoeLayer<T>::backward(const T* dy, T* dx) {
  const int64_t h = c_.hidden, E = c_.experts, k = c_.topk, tokens = tokens_, rows = plan_.rows();
  // Through the combine: d(expert output) = weight * dy, d(weight) = <dy, expert output>.
  std::vector<T>& dyp = dyp_;
  std::vector<T>& dweight = dweight_;
  dyp.resize(rows * h);
  dweight.assign(tokens * k, T(0));
  for_each_token(tokens, threads_, [&](int64_t t) {
    const T* dyt = dy + t * h;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = plan_.slot_row[t * k + j];
      if (r < 0) continue;
      const T w = routing_.weight[t * k + j];
      const T* yr = yp_.data() + r * h;
      T* d = dyp.data() + r * h;
      T dot = 0;
      for (int64_t i = 0; i < h; ++i) d[i] = w * dyt[i], dot += dyt[i] * yr[i];
      dweight[t * k + j] = dot;
    }
  });
  std::vector<T>& dxp = dxp_;
  dxp.resize(rows * h);
  // dx = the shared experts' input gradient (0 without), their weight gradients accumulated: as shared_forward.
  auto shared_backward = [&] {
    const int64_t so[2] = {0, tokens};
    if (p_.shared.experts)
      experts_backward(p_.shared, x_, so, dy, shared_cache_, dx, g_.shared, threads_, times_.experts, 0, -1,
                       shared_sites_);
    else
      std::fill(dx, dx + tokens * h, T(0));
  };
  if (ranks_ == 1) {
    experts_backward(p_.experts, xp_.data(), local_offsets_, dyp.data(), cache_, dxp.data(), g_.experts, threads_,
                     times_.experts, 0, -1, routed_sites_);
  } else if (ep_.overlap == Overlap::None) {
    dxe_.resize(xe_.size());
    exchange(dyp, dye_);
    experts_backward(p_.experts, xe_.data(), local_offsets_, dye_.data(), cache_, dxe_.data(), g_.experts, threads_,
                     times_.experts, 0, -1, routed_sites_);
    exchange_back(dxe_, dxp);
  } else {
    dxe_.resize(xe_.size()), dye_.resize(xe_.size());
    pipeline(
        1, dyp.data(), dye_.data(), dxe_.data(), dxp.data(),
        [&](int64_t j) {
          experts_backward(p_.experts, xe_.data(), local_offsets_, dye_.data(), cache_, dxe_.data(), g_.experts,
                           threads_, times_.experts, j, j + 1, routed_sites_);
        },
        shared_backward);
  }
  if (ranks_ == 1 || ep_.overlap == Overlap::None) shared_backward();
  for_each_token(tokens, threads_, [&](int64_t t) {
    T* dxt = dx + t * h;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = plan_.slot_row[t * k + j];
      if (r < 0) continue;
      const T* d = dxp.data() + r * h;
      for (int64_t i = 0; i < h; ++i) dxt[i] += d[i];
    }
  });
  // Router: dlogits from the weights, aux and z losses; then the router GEMM's two gradients.
  std::vector<T>& dlogits = dlogits_;
  dlogits.resize(tokens * E);
  route_backward(routing_, logits_.data(), dweight.data(), c_, dlogits.data());
  cpu::gemm<T>(true, false, h, E, tokens, x_, dlogits.data(), T(1), g_.router.data());
  cpu::gemm<T>(false, true, tokens, h, E, T(1), dlogits.data(), E, p_.router.data(), E, T(1), dx, h);
  if (ranks_ > 1) {
    wire_ops_->timed([&] {
      comm_->allreduce(g_.router.data(), g_.router.data(), g_.router.size(), elem_type<T>(), comm::ReduceOp::Sum);
      if (p_.shared.experts) {
        comm_->allreduce(g_.shared.w13.data(), g_.shared.w13.data(), g_.shared.w13.size(), elem_type<T>(),
                         comm::ReduceOp::Sum);
        comm_->allreduce(g_.shared.w2.data(), g_.shared.w2.data(), g_.shared.w2.size(), elem_type<T>(),
                         comm::ReduceOp::Sum);
      }
    });
  }
}

template <typename T>
void MoeLayer<T>::store_activations(precision::ActivationStore& store) {
  if constexpr (std::is_same_v<T, float>) {
    const int64_t h = c_.hidden;
    auto rows_of = [&](std::vector<T>& v, int64_t cols) {
      store.quantised(v.data(), static_cast<int64_t>(v.size()) / cols, cols, precision::LayerType::Moe);
    };
    rows_of(ranks_ == 1 ? xp_ : xe_, h);
    rows_of(yp_, h);
    for (auto [cache, f] : {std::pair{&cache_, c_.ffn}, std::pair{&shared_cache_, c_.shared_inner()}}) {
      if (cache->a.empty()) continue;
      rows_of(cache->h13, 2 * f);
      rows_of(cache->a, f);
    }
    store.kept(static_cast<int64_t>(logits_.size()));
  }
}

template <typename T>
void MoeLayer<T>::update_bias() {
  if (c_.router != RouterKind::Sigmoid || c_.bias_rate == 0) return;
  std::vector<int64_t> load = routing_.load;
  if (ranks_ > 1) comm_->allreduce(load.data(), load.data(), load.size(), comm::ElemType::I64, comm::ReduceOp::Sum);
  update_expert_bias(bias_, load, c_.bias_rate);
}

template void init_expert(uint64_t, int64_t, ExpertWeights<float>&, int64_t, int64_t);
template void init_expert(uint64_t, int64_t, ExpertWeights<double>&, int64_t, int64_t);
template class MoeLayer<float>;
template class MoeLayer<double>;

}  // namespace mlsb::moe_train
