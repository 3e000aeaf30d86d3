#include "workloads/moe_train/fold/block.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "backends/cpu/gemm.hpp"
#include "harness/workload.hpp"
#include "util/clock.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/init.hpp"
#include "workloads/moe_train/moe_layer.hpp"

namespace mlsb::moe_train::fold {
namespace {

std::mt19937_64 tensor_stream(uint64_t seed, uint64_t tensor) {
  return std::mt19937_64(splitmix64(seed ^ splitmix64(0xb10cULL + tensor)));
}

// Rows `rows` x `width` floats counts for each of `n` ranks.
std::vector<int64_t> equal_counts(int n, int64_t rows, int64_t width) { return std::vector<int64_t>(n, rows * width); }

std::vector<int64_t> scaled(const std::vector<int64_t>& rows, int64_t width) {
  std::vector<int64_t> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) out[i] = rows[i] * width;
  return out;
}

int64_t sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

}  // namespace

void validate(const BlockConfig& c) {
  if (c.heads < 1 || c.moe.hidden % c.heads != 0)
    throw std::invalid_argument("heads: " + std::to_string(c.heads) + " does not divide hidden " +
                                std::to_string(c.moe.hidden));
  if (c.moe.shared_experts != 0) throw std::invalid_argument("shared_experts: the folded block has no shared experts");
  if (c.moe.aux_coef != 0 || c.moe.z_coef != 0)
    throw std::invalid_argument("aux_coef: the folded block has no aux or z loss (both coefficients must be 0)");
  if (c.seq < 1) throw std::invalid_argument("seq: must be >= 1");
  if (c.batch < 1) throw std::invalid_argument("batch: must be >= 1");
  moe_train::validate(c.moe, 1);
}

void validate(const BlockConfig& c, const Mapping& m) {
  validate(c);
  check_model(m, c.moe.experts, c.moe.ffn, c.heads, c.seq);
  if (c.batch % m.dp != 0)
    throw std::invalid_argument("batch: " + std::to_string(c.batch) + " sequences do not divide by dp = " +
                                std::to_string(m.dp));
}

BlockWeights BlockWeights::zeros() const {
  BlockWeights z = *this;
  for (auto* v : {&z.norm1, &z.norm2, &z.attn.wqkv, &z.attn.wo, &z.router, &z.experts.w13, &z.experts.w2})
    std::fill(v->begin(), v->end(), 0.0f);
  return z;
}

BlockWeights init_block(const BlockConfig& c, uint64_t seed) {
  const int64_t h = c.moe.hidden, E = c.moe.experts;
  BlockWeights w;
  w.norm1.resize(h), w.norm2.resize(h);
  auto r1 = tensor_stream(seed, 1), r2 = tensor_stream(seed, 2);
  fill_normal(w.norm1, 0.1, r1), fill_normal(w.norm2, 0.1, r2);
  for (auto* g : {&w.norm1, &w.norm2})
    for (auto& v : *g) v += 1.0f;
  w.attn.dim = h, w.attn.heads = c.heads;
  w.attn.wqkv.resize(h * 3 * h), w.attn.wo.resize(h * h), w.router.resize(h * E);
  auto r3 = tensor_stream(seed, 3), r4 = tensor_stream(seed, 4), r5 = tensor_stream(seed, 5);
  const double fan_in = 1.0 / std::sqrt(static_cast<double>(h));
  fill_normal(w.attn.wqkv, fan_in, r3), fill_normal(w.attn.wo, fan_in, r4), fill_normal(w.router, fan_in, r5);
  w.experts.resize(E, h, c.moe.ffn);
  ExpertWeights<float> one;
  for (int64_t e = 0; e < E; ++e) {
    init_expert(seed, e, one, h, c.moe.ffn);
    std::copy(one.w13.begin(), one.w13.end(), w.experts.w13_of(e));
    std::copy(one.w2.begin(), one.w2.end(), w.experts.w2_of(e));
  }
  return w;
}

BlockData block_data(const BlockConfig& c, uint64_t seed) {
  LayerInputs in = layer_inputs(seed, 0, c.tokens(), c.moe.hidden);
  return {std::move(in.x), std::move(in.dy)};
}

BlockResult reference_block(const BlockConfig& c, const BlockWeights& w, const BlockData& data,
                            const std::vector<std::vector<int64_t>>& capacity_groups) {
  const int64_t h = c.moe.hidden, N = c.tokens(), k = c.moe.topk;
  BlockResult r;
  r.grad = w.zeros();
  std::vector<float> xn(N * h), a(N * h), hh(N * h), hn(N * h), moe_y(N * h), dhn(N * h), dh(N * h), dxn(N * h);
  rmsnorm_forward(data.x.data(), w.norm1, N, xn.data());
  AttentionCache<float> cache;
  attention_forward(w.attn, xn.data(), c.batch, c.seq, a.data(), cache);
  for (int64_t i = 0; i < N * h; ++i) hh[i] = data.x[i] + a[i];
  rmsnorm_forward(hh.data(), w.norm2, N, hn.data());
  MoeLayer<float> layer(c.moe, nullptr, 1);
  layer.params().router = w.router;
  layer.params().experts = w.experts;
  layer.zero_grad();
  std::vector<float> in, out, din, dout;
  for (const auto& group : capacity_groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    in.resize(n * h), out.resize(n * h), din.resize(n * h), dout.resize(n * h);
    for (int64_t t = 0; t < n; ++t) {
      std::memcpy(in.data() + t * h, hn.data() + group[t] * h, h * sizeof(float));
      std::memcpy(dout.data() + t * h, data.dy.data() + group[t] * h, h * sizeof(float));
    }
    layer.forward(in.data(), n, out.data());
    layer.backward(dout.data(), din.data());
    for (int64_t t = 0; t < n; ++t) {
      std::memcpy(moe_y.data() + group[t] * h, out.data() + t * h, h * sizeof(float));
      std::memcpy(dhn.data() + group[t] * h, din.data() + t * h, h * sizeof(float));
      for (int64_t j = 0; j < k; ++j)
        if (layer.plan().slot_row[t * k + j] < 0) r.dropped_tokens.push_back(group[t] * k + j);
    }
  }
  std::sort(r.dropped_tokens.begin(), r.dropped_tokens.end());
  r.grad.router = layer.grads().router;
  r.grad.experts = layer.grads().experts;
  r.y.resize(N * h);
  for (int64_t i = 0; i < N * h; ++i) r.y[i] = hh[i] + moe_y[i];
  rmsnorm_backward(hh.data(), w.norm2, N, dhn.data(), dh.data(), r.grad.norm2);
  for (int64_t i = 0; i < N * h; ++i) dh[i] += data.dy[i];
  attention_backward(w.attn, xn.data(), c.batch, c.seq, dh.data(), cache, dxn.data(), r.grad.attn);
  r.dx.resize(N * h);
  rmsnorm_backward(data.x.data(), w.norm1, N, dxn.data(), r.dx.data(), r.grad.norm1);
  for (int64_t i = 0; i < N * h; ++i) r.dx[i] += dh[i];
  return r;
}

std::vector<int64_t> own_tokens(const BlockConfig& c, const Mapping& m, const Groups& g, int world_rank) {
  auto index = [&](Group kind) {
    const auto& members = g.containing(kind, world_rank);
    return static_cast<int64_t>(std::find(members.begin(), members.end(), world_rank) - members.begin());
  };
  const int64_t batch_l = c.batch / m.dp, seq_c = c.seq / m.cp, rows = batch_l * seq_c / m.tp;
  const int64_t dp_i = index(Group::Dp), cp_i = index(Group::Cp), tp_i = index(Group::Tp);
  std::vector<int64_t> own;
  for (int64_t f = tp_i * rows; f < (tp_i + 1) * rows; ++f)
    own.push_back((dp_i * batch_l + f / seq_c) * c.seq + cp_i * seq_c + f % seq_c);
  return own;
}

FoldedBlock::FoldedBlock(const BlockConfig& c, const Mapping& m, const Groups& g, RankComms& comms, int world_rank,
                         int threads)
    : c_(c), m_(m), groups_(g), comms_(comms), world_rank_(world_rank), threads_(std::max(threads, 1)) {
  validate(c_, m_);
  hidden_ = c.moe.hidden;
  heads_l_ = c.heads / m.tp, head_dim_ = hidden_ / c.heads, hl_ = heads_l_ * head_dim_;
  batch_l_ = c.batch / m.dp, seq_c_ = c.seq / m.cp, shard_rows_ = batch_l_ * seq_c_, own_rows_ = shard_rows_ / m.tp;
  local_experts_ = c.moe.experts / m.ep, ffn_l_ = c.moe.ffn / m.etp;
  own_ = fold::own_tokens(c, m, g, world_rank);
}

int FoldedBlock::index(Group g) const {
  const auto& members = groups_.containing(g, world_rank_);
  return static_cast<int>(std::find(members.begin(), members.end(), world_rank_) - members.begin());
}

BlockWeights FoldedBlock::shards_of(const BlockWeights& whole) const {
  const int64_t h = hidden_, F = c_.moe.ffn, f0 = first_ffn(), h0 = first_head() * head_dim_;
  BlockWeights s;
  s.norm1 = whole.norm1, s.norm2 = whole.norm2, s.router = whole.router;
  s.attn.dim = h, s.attn.heads = heads_l_;
  s.attn.wqkv.resize(h * 3 * hl_), s.attn.wo.resize(hl_ * h);
  for (int64_t i = 0; i < h; ++i)
    for (int64_t part = 0; part < 3; ++part)
      std::memcpy(s.attn.wqkv.data() + i * 3 * hl_ + part * hl_, whole.attn.wqkv.data() + i * 3 * h + part * h + h0,
                  hl_ * sizeof(float));
  std::memcpy(s.attn.wo.data(), whole.attn.wo.data() + h0 * h, hl_ * h * sizeof(float));
  s.experts.resize(local_experts_, h, ffn_l_);
  for (int64_t l = 0; l < local_experts_; ++l) {
    const int64_t e = first_expert() + l;
    for (int64_t i = 0; i < h; ++i) {
      const float* row = whole.experts.w13_of(e) + i * 2 * F;
      float* to = s.experts.w13_of(l) + i * 2 * ffn_l_;
      std::memcpy(to, row + f0, ffn_l_ * sizeof(float));               // gate
      std::memcpy(to + ffn_l_, row + F + f0, ffn_l_ * sizeof(float));  // up
    }
    std::memcpy(s.experts.w2_of(l), whole.experts.w2_of(e) + f0 * h, ffn_l_ * h * sizeof(float));
  }
  return s;
}

void FoldedBlock::load(const BlockWeights& w) {
  p_ = shards_of(w);
  g_ = p_.zeros();
}

void FoldedBlock::zero_grad() { g_ = p_.zeros(); }

std::vector<int64_t> FoldedBlock::local_expert_rows() const {
  std::vector<int64_t> rows(local_experts_);
  for (int64_t l = 0; l < local_experts_; ++l) rows[l] = local_offsets_[l + 1] - local_offsets_[l];
  return rows;
}

void FoldedBlock::attention_forward(const float* x_own, float* h_own) {
  const int64_t h = hidden_, n = shard_rows_, T = own_rows_, d = head_dim_, cp_i = index(Group::Cp);
  const int64_t kn = (cp_i + 1) * seq_c_;  // the keys this rank's queries can see
  GroupComm& tp = comms_[Group::Tp];
  GroupComm& cp = comms_[Group::Cp];
  x_own_.assign(x_own, x_own + T * h);
  xn_own_.resize(T * h);
  rmsnorm_forward(x_own, p_.norm1, T, xn_own_.data());
  xn_.resize(n * h);
  tp.allgatherv(xn_own_.data(), xn_.data(), equal_counts(tp.size(), T, h));
  qkv_.resize(n * 3 * hl_);
  cpu::gemm<float>(false, false, n, 3 * hl_, h, xn_.data(), p_.attn.wqkv.data(), 0.0f, qkv_.data());
  // K and V of every CP rank's chunk, laid out per sequence up to this rank's last position.
  std::vector<float> kv_own(n * 2 * hl_), gathered(static_cast<size_t>(cp.size()) * n * 2 * hl_);
  for (int64_t r = 0; r < n; ++r) std::memcpy(kv_own.data() + r * 2 * hl_, qkv_.data() + r * 3 * hl_ + hl_, 2 * hl_ * sizeof(float));
  cp.allgatherv(kv_own.data(), gathered.data(), equal_counts(cp.size(), n, 2 * hl_));
  kv_.resize(batch_l_ * kn * 2 * hl_);
  for (int64_t ch = 0; ch <= cp_i; ++ch)
    for (int64_t b = 0; b < batch_l_; ++b)
      std::memcpy(kv_.data() + (b * kn + ch * seq_c_) * 2 * hl_, gathered.data() + (ch * n + b * seq_c_) * 2 * hl_,
                  seq_c_ * 2 * hl_ * sizeof(float));
  probs_.resize(batch_l_ * heads_l_ * seq_c_ * kn);
  ctx_.resize(n * hl_);
  for (int64_t b = 0; b < batch_l_; ++b)
    for (int64_t j = 0; j < heads_l_; ++j) {
      const float* k = kv_.data() + b * kn * 2 * hl_ + j * d;
      causal_head_forward(qkv_.data() + b * seq_c_ * 3 * hl_ + j * d, 3 * hl_, k, k + hl_, 2 * hl_, seq_c_, kn,
                          cp_i * seq_c_, d, probs_.data() + (b * heads_l_ + j) * seq_c_ * kn,
                          ctx_.data() + b * seq_c_ * hl_ + j * d, hl_);
    }
  std::vector<float> part(n * h);
  cpu::gemm<float>(false, false, n, h, hl_, ctx_.data(), p_.attn.wo.data(), 0.0f, part.data());
  tp.reduce_scatter_v(part.data(), h_own, equal_counts(tp.size(), T, h));
  for (int64_t i = 0; i < T * h; ++i) h_own[i] += x_own[i];
}

void FoldedBlock::attention_backward(const float* dh_own, float* dx_own) {
  const int64_t h = hidden_, n = shard_rows_, T = own_rows_, d = head_dim_, cp_i = index(Group::Cp);
  const int64_t kn = (cp_i + 1) * seq_c_;
  GroupComm& tp = comms_[Group::Tp];
  GroupComm& cp = comms_[Group::Cp];
  std::vector<float> da(n * h), dctx(n * hl_), dqkv(n * 3 * hl_), dkv(batch_l_ * kn * 2 * hl_), work;
  tp.allgatherv(dh_own, da.data(), equal_counts(tp.size(), T, h));
  cpu::gemm<float>(true, false, hl_, h, n, ctx_.data(), da.data(), 1.0f, g_.attn.wo.data());
  cpu::gemm<float>(false, true, n, hl_, h, da.data(), p_.attn.wo.data(), 0.0f, dctx.data());
  for (int64_t b = 0; b < batch_l_; ++b)
    for (int64_t j = 0; j < heads_l_; ++j) {
      const float* k = kv_.data() + b * kn * 2 * hl_ + j * d;
      float* dk = dkv.data() + b * kn * 2 * hl_ + j * d;
      causal_head_backward(qkv_.data() + b * seq_c_ * 3 * hl_ + j * d, 3 * hl_, k, k + hl_, 2 * hl_, seq_c_, kn,
                           cp_i * seq_c_, d, probs_.data() + (b * heads_l_ + j) * seq_c_ * kn,
                           dctx.data() + b * seq_c_ * hl_ + j * d, hl_, dqkv.data() + b * seq_c_ * 3 * hl_ + j * d,
                           3 * hl_, dk, dk + hl_, 2 * hl_, work);
    }
  // dK and dV of each CP rank's chunk (zero for the chunks after this rank's), summed at their owner.
  std::vector<float> blocks(static_cast<size_t>(cp.size()) * n * 2 * hl_, 0.0f), dkv_own(n * 2 * hl_);
  for (int64_t ch = 0; ch <= cp_i; ++ch)
    for (int64_t b = 0; b < batch_l_; ++b)
      std::memcpy(blocks.data() + (ch * n + b * seq_c_) * 2 * hl_, dkv.data() + (b * kn + ch * seq_c_) * 2 * hl_,
                  seq_c_ * 2 * hl_ * sizeof(float));
  cp.reduce_scatter_v(blocks.data(), dkv_own.data(), equal_counts(cp.size(), n, 2 * hl_));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < 2 * hl_; ++i) dqkv[r * 3 * hl_ + hl_ + i] += dkv_own[r * 2 * hl_ + i];
  cpu::gemm<float>(true, false, h, 3 * hl_, n, xn_.data(), dqkv.data(), 1.0f, g_.attn.wqkv.data());
  std::vector<float> dxn(n * h), dxn_own(T * h);
  cpu::gemm<float>(false, true, n, h, 3 * hl_, dqkv.data(), p_.attn.wqkv.data(), 0.0f, dxn.data());
  tp.reduce_scatter_v(dxn.data(), dxn_own.data(), equal_counts(tp.size(), T, h));
  rmsnorm_backward(x_own_.data(), p_.norm1, T, dxn_own.data(), dx_own, g_.norm1);
  for (int64_t i = 0; i < T * h; ++i) dx_own[i] += dh_own[i];
}

void FoldedBlock::dispatch(const std::vector<float>& by_expert, std::vector<float>& at_experts) {
  const int64_t h = hidden_;
  GroupComm& ep = comms_[Group::Ep];
  GroupComm& etp = comms_[Group::Etp];
  std::vector<float> recv(sum(recv_counts_) * h), gathered(sum(gather_counts_) * h);
  ep.alltoallv(by_expert.data(), scaled(send_counts_, h), recv.data(), scaled(recv_counts_, h));
  etp.allgatherv(recv.data(), gathered.data(), scaled(gather_counts_, h));
  at_experts.resize(gathered.size());
  for (size_t r = 0; r < sorted_from_.size(); ++r)
    std::memcpy(at_experts.data() + r * h, gathered.data() + sorted_from_[r] * h, h * sizeof(float));
}

void FoldedBlock::combine(const std::vector<float>& at_experts, std::vector<float>& by_expert) {
  const int64_t h = hidden_;
  GroupComm& ep = comms_[Group::Ep];
  GroupComm& etp = comms_[Group::Etp];
  std::vector<float> unsorted(at_experts.size()), mine(sum(recv_counts_) * h);
  for (size_t r = 0; r < sorted_from_.size(); ++r)
    std::memcpy(unsorted.data() + sorted_from_[r] * h, at_experts.data() + r * h, h * sizeof(float));
  etp.reduce_scatter_v(unsorted.data(), mine.data(), scaled(gather_counts_, h));
  by_expert.resize(plan_.rows() * h);
  ep.alltoallv(mine.data(), scaled(recv_counts_, h), by_expert.data(), scaled(send_counts_, h));
}

void FoldedBlock::moe_forward(const float* h_own, float* y_own) {
  const int64_t h = hidden_, T = own_rows_, E = c_.moe.experts;
  h_own_.assign(h_own, h_own + T * h);
  hn_own_.resize(T * h);
  rmsnorm_forward(h_own, p_.norm2, T, hn_own_.data());
  logits_.resize(T * E);
  cpu::gemm<float>(false, false, T, E, h, hn_own_.data(), p_.router.data(), 0.0f, logits_.data());
  routing_ = route(logits_.data(), T, c_.moe, nullptr);
  plan_ = plan_dispatch(routing_, c_.moe);
  std::copy(h_own, h_own + T * h, y_own);  // the residual; the dispatchers add the experts' combined output
  if (c_.dispatcher == Dispatcher::AllGather)
    allgather_forward(y_own);
  else
    alltoall_forward(y_own);
}

void FoldedBlock::alltoall_forward(float* y_own) {
  const int64_t h = hidden_, T = own_rows_, E = c_.moe.experts, k = c_.moe.topk, L = local_experts_;
  xp_.resize(plan_.rows() * h);
  for (int64_t r = 0; r < plan_.rows(); ++r)
    std::memcpy(xp_.data() + r * h, hn_own_.data() + plan_.row_token[r] * h, h * sizeof(float));
  // The dispatcher's layout: every ETP x EP rank's rows per expert, gathered.
  GroupComm& tp_ep = comms_[Group::TpEp];
  const std::vector<int64_t> counts = plan_.tokens_per_expert();
  const std::vector<int64_t> all = tp_ep.allgather_i64(counts);
  auto rows_of = [&](int world_rank, int64_t local_expert) {  // rows world_rank sends this rank's local expert
    const auto& m = tp_ep.members();
    const size_t at = static_cast<size_t>(std::find(m.begin(), m.end(), world_rank) - m.begin());
    return all[at * E + first_expert() + local_expert];
  };
  const auto& ep_peers = comms_[Group::Ep].members();
  const auto& etp_peers = comms_[Group::Etp].members();
  send_counts_.assign(ep_peers.size(), 0), recv_counts_.assign(ep_peers.size(), 0);
  for (size_t j = 0; j < ep_peers.size(); ++j)
    for (int64_t l = 0; l < L; ++l) {
      send_counts_[j] += counts[j * L + l];
      recv_counts_[j] += rows_of(ep_peers[j], l);
    }
  // The gathered layout is [ETP peer q][its EP peer j][local expert l]; the experts want [l][q][j].
  std::vector<std::vector<int>> sources(etp_peers.size());  // [q]: q's EP peers
  gather_counts_.assign(etp_peers.size(), 0);
  for (size_t q = 0; q < etp_peers.size(); ++q) {
    sources[q] = groups_.containing(Group::Ep, etp_peers[q]);
    for (int src : sources[q])
      for (int64_t l = 0; l < L; ++l) gather_counts_[q] += rows_of(src, l);
  }
  std::vector<int64_t> block_start;  // [q][j][l] -> first gathered row
  int64_t row = 0;
  for (size_t q = 0; q < etp_peers.size(); ++q)
    for (int src : sources[q])
      for (int64_t l = 0; l < L; ++l) block_start.push_back(row), row += rows_of(src, l);
  local_offsets_.assign(L + 1, 0);
  sorted_from_.clear();
  for (int64_t l = 0; l < L; ++l) {
    size_t b = 0;
    for (size_t q = 0; q < etp_peers.size(); ++q)
      for (int src : sources[q]) {
        const int64_t n = rows_of(src, l), start = block_start[b * L + l];
        for (int64_t i = 0; i < n; ++i) sorted_from_.push_back(start + i);
        ++b;
      }
    local_offsets_[l + 1] = static_cast<int64_t>(sorted_from_.size());
  }
  dispatch(xp_, xe_);
  ye_.resize(xe_.size());
  experts_forward(p_.experts, xe_.data(), local_offsets_, ye_.data(), cache_, threads_, times_.experts);
  combine(ye_, yp_);
  for (int64_t t = 0; t < T; ++t) {
    float* yt = y_own + t * h;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = plan_.slot_row[t * k + j];
      if (r < 0) continue;
      const float w = routing_.weight[t * k + j];
      for (int64_t i = 0; i < h; ++i) yt[i] += w * yp_[r * h + i];
    }
  }
}

void FoldedBlock::moe_backward(const float* dy_own, float* dh_own) {
  const int64_t h = hidden_, T = own_rows_, E = c_.moe.experts, k = c_.moe.topk;
  std::vector<float> dweight(T * k, 0.0f), dhn(T * h, 0.0f);
  if (c_.dispatcher == Dispatcher::AllGather)
    allgather_backward(dy_own, dweight, dhn);
  else
    alltoall_backward(dy_own, dweight, dhn);
  std::vector<float> dlogits(T * E);
  route_backward(routing_, logits_.data(), dweight.data(), c_.moe, dlogits.data());
  cpu::gemm<float>(true, false, h, E, T, hn_own_.data(), dlogits.data(), 1.0f, g_.router.data());
  cpu::gemm<float>(false, true, T, h, E, 1.0f, dlogits.data(), E, p_.router.data(), E, 1.0f, dhn.data(), h);
  rmsnorm_backward(h_own_.data(), p_.norm2, T, dhn.data(), dh_own, g_.norm2);
  for (int64_t i = 0; i < T * h; ++i) dh_own[i] += dy_own[i];
}

void FoldedBlock::alltoall_backward(const float* dy_own, std::vector<float>& dweight, std::vector<float>& dhn) {
  const int64_t h = hidden_, T = own_rows_, k = c_.moe.topk, rows = plan_.rows();
  std::vector<float> dyp(rows * h), dye, dxe(xe_.size()), dxp;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = plan_.slot_row[t * k + j];
      if (r < 0) continue;
      const float w = routing_.weight[t * k + j];
      float dot = 0;
      for (int64_t i = 0; i < h; ++i) dyp[r * h + i] = w * dy_own[t * h + i], dot += dy_own[t * h + i] * yp_[r * h + i];
      dweight[t * k + j] = dot;
    }
  dispatch(dyp, dye);
  experts_backward(p_.experts, xe_.data(), local_offsets_, dye.data(), cache_, dxe.data(), g_.experts, threads_,
                   times_.experts);
  combine(dxe, dxp);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < h; ++i) dhn[plan_.row_token[r] * h + i] += dxp[r * h + i];
}

void FoldedBlock::reduce_grads() {
  GroupComm& edp = comms_[Group::Edp];
  GroupComm& dp_cp = comms_[Group::DpCp];
  GroupComm& tp = comms_[Group::Tp];
  edp.allreduce(g_.experts.w13.data(), g_.experts.w13.size());
  edp.allreduce(g_.experts.w2.data(), g_.experts.w2.size());
  dp_cp.allreduce(g_.attn.wqkv.data(), g_.attn.wqkv.size());
  dp_cp.allreduce(g_.attn.wo.data(), g_.attn.wo.size());
  for (auto* v : {&g_.norm1, &g_.norm2, &g_.router}) {
    tp.allreduce(v->data(), v->size());
    dp_cp.allreduce(v->data(), v->size());
  }
}

void FoldedBlock::forward(const float* x_own, float* y_own) {
  const auto t0 = Clock::now();
  std::vector<float> h_own(own_rows_ * hidden_);
  attention_forward(x_own, h_own.data());
  moe_forward(h_own.data(), y_own);
  times_.forward_s += seconds_since(t0);
}

void FoldedBlock::backward(const float* dy_own, float* dx_own) {
  auto t0 = Clock::now();
  std::vector<float> dh_own(own_rows_ * hidden_);
  moe_backward(dy_own, dh_own.data());
  attention_backward(dh_own.data(), dx_own);
  times_.backward_s += seconds_since(t0);
  t0 = Clock::now();
  reduce_grads();
  times_.grad_sync_s += seconds_since(t0);
}

}  // namespace mlsb::moe_train::fold
