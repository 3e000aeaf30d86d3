#include "workloads/moe_train/moe_lm.hpp"

#include <cmath>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "backends/cpu/gemm.hpp"
#include "harness/workload.hpp"
#include "workloads/moe_train/init.hpp"

namespace mlsb::moe_train {
namespace {

template <typename T>
void zero(std::vector<T>& v) {
  std::fill(v.begin(), v.end(), T(0));
}

}  // namespace

template <typename T>
MoeLm<T>::MoeLm(const LmConfig& config, int threads) : cfg_(config), threads_(threads) {
  const int64_t D = cfg_.moe.hidden;
  if (cfg_.heads < 1 || D % cfg_.heads != 0)
    throw std::invalid_argument("heads: hidden = " + std::to_string(D) + " does not divide into " +
                                std::to_string(cfg_.heads) + " heads");
  tok_.resize(cfg_.vocab * D), pos_.resize(cfg_.seq * D), gf_.assign(D, T(1)), head_.resize(D * cfg_.vocab);
  blocks_.resize(cfg_.layers);
  for (auto& b : blocks_) {
    b.g1.assign(D, T(1)), b.g2.assign(D, T(1));
    b.attn.dim = D, b.attn.heads = cfg_.heads;
    b.attn.wqkv.resize(D * 3 * D), b.attn.wo.resize(D * D);
    b.dattn = b.attn;
    b.moe = std::make_unique<MoeLayer<T>>(cfg_.moe, nullptr, threads);
  }
  zero_grad();
}

template <typename T>
void MoeLm<T>::init(uint64_t seed) {
  const int64_t D = cfg_.moe.hidden;
  std::mt19937_64 rng(splitmix64(seed ^ 0x4c4d));
  fill_normal(tok_, 0.02, rng);
  fill_normal(pos_, 0.02, rng);
  fill_normal(head_, 0.02, rng);  // near-uniform logits at init: the loss starts at about ln 256
  std::fill(gf_.begin(), gf_.end(), T(1));
  for (size_t l = 0; l < blocks_.size(); ++l) {
    auto& b = blocks_[l];
    fill_normal(b.attn.wqkv, 1.0 / std::sqrt(double(D)), rng);
    // Residual branches start small (GPT-2's scaled init of output projections).
    fill_normal(b.attn.wo, 1.0 / std::sqrt(double(D)) / std::sqrt(2.0 * cfg_.layers), rng);
    std::fill(b.g1.begin(), b.g1.end(), T(1)), std::fill(b.g2.begin(), b.g2.end(), T(1));
    b.moe->init(splitmix64(seed + 101 * (l + 1)));
  }
  zero_grad();
}

template <typename T>
void MoeLm<T>::zero_grad() {
  const int64_t D = cfg_.moe.hidden;
  dtok_.assign(tok_.size(), T(0)), dpos_.assign(pos_.size(), T(0)), dgf_.assign(D, T(0));
  dhead_.assign(head_.size(), T(0));
  for (auto& b : blocks_) {
    b.dg1.assign(D, T(0)), b.dg2.assign(D, T(0));
    zero(b.dattn.wqkv), zero(b.dattn.wo);
    b.moe->zero_grad();
  }
}

template <typename T>
void MoeLm<T>::set_precision(const precision::Precision& p) {
  using precision::Site;
  if (!p.sites().empty() && static_cast<int64_t>(p.sites().size()) != cfg_.layers * precision::kSites)
    throw std::invalid_argument("precision: the recipe's sites are for another number of blocks than layers = " +
                                std::to_string(cfg_.layers));
  for (size_t l = 0; l < blocks_.size(); ++l) {
    auto& b = blocks_[l];
    const auto at = static_cast<int64_t>(l);
    b.sites = {p.site(at, Site::AttnQkv), p.site(at, Site::AttnProj)};
    b.moe->set_precision({p.site(at, Site::ExpertFc1), p.site(at, Site::ExpertFc2)},
                         {p.site(at, Site::SharedFc1), p.site(at, Site::SharedFc2)});
  }
}

template <typename T>
void MoeLm<T>::store_activations(precision::ActivationStore& store) {
  if constexpr (std::is_same_v<T, float>) {
    const int64_t D = cfg_.moe.hidden, N = batch_ * cfg_.seq;
    for (auto& b : blocks_) {
      using precision::LayerType;
      for (auto [v, type] : {std::pair{&b.x_in, LayerType::Norm}, std::pair{&b.x_mid, LayerType::Norm},
                             std::pair{&b.a, LayerType::Attention}, std::pair{&b.cache.ctx, LayerType::Attention},
                             std::pair{&b.m, LayerType::Moe}})
        store.quantised(v->data(), N, D, type);
      store.quantised(b.cache.qkv.data(), N, 3 * D, precision::LayerType::Attention);
      store.kept(static_cast<int64_t>(b.cache.probs.size()));
      b.moe->store_activations(store);
    }
    store.kept(static_cast<int64_t>(x_out_.size() + f_.size() + probs_.size()));
  }
}

template <typename T>
T MoeLm<T>::forward(const uint8_t* tokens, int64_t batch) {
  const int64_t D = cfg_.moe.hidden, S = cfg_.seq, V = cfg_.vocab, N = batch * S;
  batch_ = batch;
  tokens_.assign(tokens, tokens + batch * (S + 1));
  std::vector<T> x(N * D), branch(N * D);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t tok = tokens[b * (S + 1) + s];
      for (int64_t i = 0; i < D; ++i) x[(b * S + s) * D + i] = tok_[tok * D + i] + pos_[s * D + i];
    }
  for (auto& blk : blocks_) {
    blk.x_in = x;
    blk.a.resize(N * D);
    rmsnorm_forward(x.data(), blk.g1, N, blk.a.data());
    attention_forward(blk.attn, blk.a.data(), batch, S, branch.data(), blk.cache, blk.sites);
    for (int64_t i = 0; i < N * D; ++i) x[i] += branch[i];
    blk.x_mid = x;
    blk.m.resize(N * D);
    rmsnorm_forward(x.data(), blk.g2, N, blk.m.data());
    blk.moe->forward(blk.m.data(), N, branch.data());
    for (int64_t i = 0; i < N * D; ++i) x[i] += branch[i];
  }
  x_out_ = x;
  f_.resize(N * D);
  rmsnorm_forward(x.data(), gf_, N, f_.data());
  probs_.resize(N * V);
  cpu::gemm<T>(false, false, N, V, D, f_.data(), head_.data(), T(0), probs_.data());
  T loss = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < S; ++s) {
      T* row = probs_.data() + (b * S + s) * V;
      const T m = *std::max_element(row, row + V);
      T sum = 0;
      for (int64_t v = 0; v < V; ++v) sum += row[v] = std::exp(row[v] - m);
      for (int64_t v = 0; v < V; ++v) row[v] /= sum;
      loss -= std::log(std::max(row[tokens[b * (S + 1) + s + 1]], std::numeric_limits<T>::min()));
    }
  return loss / T(N);
}

template <typename T>
void MoeLm<T>::backward() {
  const int64_t D = cfg_.moe.hidden, S = cfg_.seq, V = cfg_.vocab, N = batch_ * S;
  std::vector<T> dlogits = probs_;
  for (int64_t b = 0; b < batch_; ++b)
    for (int64_t s = 0; s < S; ++s) dlogits[(b * S + s) * V + tokens_[b * (S + 1) + s + 1]] -= T(1);
  for (auto& v : dlogits) v /= T(N);
  std::vector<T> df(N * D), dx(N * D), dbranch(N * D), tmp(N * D);
  cpu::gemm<T>(true, false, D, V, N, f_.data(), dlogits.data(), T(1), dhead_.data());
  cpu::gemm<T>(false, true, N, D, V, dlogits.data(), head_.data(), T(0), df.data());
  rmsnorm_backward(x_out_.data(), gf_, N, df.data(), dx.data(), dgf_);
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto& blk = *it;
    blk.moe->backward(dx.data(), dbranch.data());
    rmsnorm_backward(blk.x_mid.data(), blk.g2, N, dbranch.data(), tmp.data(), blk.dg2);
    for (int64_t i = 0; i < N * D; ++i) dx[i] += tmp[i];
    attention_backward(blk.attn, blk.a.data(), batch_, S, dx.data(), blk.cache, dbranch.data(), blk.dattn,
                       blk.sites);
    rmsnorm_backward(blk.x_in.data(), blk.g1, N, dbranch.data(), tmp.data(), blk.dg1);
    for (int64_t i = 0; i < N * D; ++i) dx[i] += tmp[i];
  }
  for (int64_t b = 0; b < batch_; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t tok = tokens_[b * (S + 1) + s];
      for (int64_t i = 0; i < D; ++i) {
        dtok_[tok * D + i] += dx[(b * S + s) * D + i];
        dpos_[s * D + i] += dx[(b * S + s) * D + i];
      }
    }
}

template <typename T>
std::vector<std::pair<std::string, std::pair<std::span<T>, std::span<T>>>> MoeLm<T>::parameters() {
  std::vector<std::pair<std::string, std::pair<std::span<T>, std::span<T>>>> out;
  auto add = [&](std::string name, std::vector<T>& p, std::vector<T>& g) {
    if (!p.empty()) out.push_back({std::move(name), {std::span<T>(p), std::span<T>(g)}});
  };
  add("tok_emb", tok_, dtok_);
  add("pos_emb", pos_, dpos_);
  for (size_t l = 0; l < blocks_.size(); ++l) {
    auto& b = blocks_[l];
    const std::string n = "block" + std::to_string(l) + ".";
    add(n + "norm1", b.g1, b.dg1);
    add(n + "attn.wqkv", b.attn.wqkv, b.dattn.wqkv);
    add(n + "attn.wo", b.attn.wo, b.dattn.wo);
    add(n + "norm2", b.g2, b.dg2);
    auto& p = b.moe->params();
    auto& g = b.moe->grads();
    add(n + "moe.router", p.router, g.router);
    add(n + "moe.w13", p.experts.w13, g.experts.w13);
    add(n + "moe.w2", p.experts.w2, g.experts.w2);
    add(n + "moe.shared.w13", p.shared.w13, g.shared.w13);
    add(n + "moe.shared.w2", p.shared.w2, g.shared.w2);
  }
  add("final_norm", gf_, dgf_);
  add("head", head_, dhead_);
  return out;
}

template class MoeLm<float>;
template class MoeLm<double>;

}  // namespace mlsb::moe_train
