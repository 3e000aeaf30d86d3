#include "workloads/moe_train/fold/block.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "backends/cpu/gemm.hpp"
#include "harness/workload.hpp"
#include "util/clock.hpp"
#include "workloads/moe_train/case_config.hpp"
#include "workloads/moe_train/init.hpp"
#include "workloads/moe_train/moe_layer.hpp"

namespace mlsb::moe_train::fold {

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

FoldedBlock::FoldedBlock(const BlockConfig& c, const Mapping& m, const Groups& g, RankComms& comms, int world_rank,
                         int threads)
    : BlockShard(c, m, g, world_rank), comms_(comms), threads_(std::max(threads, 1)) {}

void FoldedBlock::load(const BlockWeights& w) {
  p_ = shards_of(w);
  g_ = p_.zeros();
}

void FoldedBlock::zero_grad() { g_ = p_.zeros(); }

std::vector<int64_t> FoldedBlock::local_expert_rows() const {
  std::vector<int64_t> rows(local_experts_);
  for (int64_t l = 0; l < local_experts_; ++l) rows[l] = layout_.local_offsets[l + 1] - layout_.local_offsets[l];
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
  tp.allgatherv(xn_own_.data(), xn_.data(), equal_floats(tp.size(), T, h));
  qkv_.resize(n * 3 * hl_);
  cpu::gemm<float>(false, false, n, 3 * hl_, h, xn_.data(), p_.attn.wqkv.data(), 0.0f, qkv_.data());
  // K and V of every CP rank's chunk, laid out per sequence up to this rank's last position.
  std::vector<float> kv_own(n * 2 * hl_), gathered(static_cast<size_t>(cp.size()) * n * 2 * hl_);
  for (int64_t r = 0; r < n; ++r) std::memcpy(kv_own.data() + r * 2 * hl_, qkv_.data() + r * 3 * hl_ + hl_, 2 * hl_ * sizeof(float));
  cp.allgatherv(kv_own.data(), gathered.data(), equal_floats(cp.size(), n, 2 * hl_));
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
  tp.reduce_scatter_v(part.data(), h_own, equal_floats(tp.size(), T, h));
  for (int64_t i = 0; i < T * h; ++i) h_own[i] += x_own[i];
}

void FoldedBlock::attention_backward(const float* dh_own, float* dx_own) {
  const int64_t h = hidden_, n = shard_rows_, T = own_rows_, d = head_dim_, cp_i = index(Group::Cp);
  const int64_t kn = (cp_i + 1) * seq_c_;
  GroupComm& tp = comms_[Group::Tp];
  GroupComm& cp = comms_[Group::Cp];
  std::vector<float> da(n * h), dctx(n * hl_), dqkv(n * 3 * hl_), dkv(batch_l_ * kn * 2 * hl_), work;
  tp.allgatherv(dh_own, da.data(), equal_floats(tp.size(), T, h));
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
  cp.reduce_scatter_v(blocks.data(), dkv_own.data(), equal_floats(cp.size(), n, 2 * hl_));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < 2 * hl_; ++i) dqkv[r * 3 * hl_ + hl_ + i] += dkv_own[r * 2 * hl_ + i];
  cpu::gemm<float>(true, false, h, 3 * hl_, n, xn_.data(), dqkv.data(), 1.0f, g_.attn.wqkv.data());
  std::vector<float> dxn(n * h), dxn_own(T * h);
  cpu::gemm<float>(false, true, n, h, 3 * hl_, dqkv.data(), p_.attn.wqkv.data(), 0.0f, dxn.data());
  tp.reduce_scatter_v(dxn.data(), dxn_own.data(), equal_floats(tp.size(), T, h));
  rmsnorm_backward(x_own_.data(), p_.norm1, T, dxn_own.data(), dx_own, g_.norm1);
  for (int64_t i = 0; i < T * h; ++i) dx_own[i] += dh_own[i];
}

void FoldedBlock::dispatch(const std::vector<float>& by_expert, std::vector<float>& at_experts) {
  const int64_t h = hidden_;
  GroupComm& ep = comms_[Group::Ep];
  GroupComm& etp = comms_[Group::Etp];
  std::vector<float> recv(total(layout_.recv_rows) * h), gathered(total(layout_.gather_rows) * h);
  ep.alltoallv(by_expert.data(), row_floats(layout_.send_rows, h), recv.data(), row_floats(layout_.recv_rows, h));
  etp.allgatherv(recv.data(), gathered.data(), row_floats(layout_.gather_rows, h));
  at_experts.resize(gathered.size());
  for (size_t r = 0; r < layout_.sorted_from.size(); ++r)
    std::memcpy(at_experts.data() + r * h, gathered.data() + layout_.sorted_from[r] * h, h * sizeof(float));
}

void FoldedBlock::combine(const std::vector<float>& at_experts, std::vector<float>& by_expert) {
  const int64_t h = hidden_;
  GroupComm& ep = comms_[Group::Ep];
  GroupComm& etp = comms_[Group::Etp];
  std::vector<float> unsorted(at_experts.size()), mine(total(layout_.recv_rows) * h);
  for (size_t r = 0; r < layout_.sorted_from.size(); ++r)
    std::memcpy(unsorted.data() + layout_.sorted_from[r] * h, at_experts.data() + r * h, h * sizeof(float));
  etp.reduce_scatter_v(unsorted.data(), mine.data(), row_floats(layout_.gather_rows, h));
  by_expert.resize(plan_.rows() * h);
  ep.alltoallv(mine.data(), row_floats(layout_.recv_rows, h), by_expert.data(), row_floats(layout_.send_rows, h));
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
  const int64_t h = hidden_, T = own_rows_, k = c_.moe.topk;
  xp_.resize(plan_.rows() * h);
  for (int64_t r = 0; r < plan_.rows(); ++r)
    std::memcpy(xp_.data() + r * h, hn_own_.data() + plan_.row_token[r] * h, h * sizeof(float));
  // The dispatcher's layout: every ETP x EP rank's rows per expert, gathered.
  const std::vector<int64_t> counts = plan_.tokens_per_expert();
  layout_ = alltoall_layout(counts, comms_[Group::TpEp].allgather_i64(counts));
  dispatch(xp_, xe_);
  ye_.resize(xe_.size());
  experts_forward(p_.experts, xe_.data(), layout_.local_offsets, ye_.data(), cache_, threads_, times_.experts);
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
  experts_backward(p_.experts, xe_.data(), layout_.local_offsets, dye.data(), cache_, dxe.data(), g_.experts, threads_,
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
