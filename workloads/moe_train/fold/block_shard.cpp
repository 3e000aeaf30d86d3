#include "workloads/moe_train/fold/block_shard.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace mlsb::moe_train::fold {

std::vector<int64_t> row_floats(std::span<const int64_t> rows, int64_t width) {
  std::vector<int64_t> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) out[i] = rows[i] * width;
  return out;
}

std::vector<int64_t> equal_floats(int n, int64_t rows, int64_t width) { return std::vector<int64_t>(n, rows * width); }

int64_t total(std::span<const int64_t> counts) { return std::accumulate(counts.begin(), counts.end(), int64_t{0}); }

std::vector<int64_t> own_tokens(const BlockConfig& c, const Mapping& m, const Groups& g, int world_rank) {
  const int64_t batch_l = c.batch / m.dp, seq_c = c.seq / m.cp, rows = batch_l * seq_c / m.tp;
  const int64_t dp_i = g.index_of(Group::Dp, world_rank), cp_i = g.index_of(Group::Cp, world_rank),
                tp_i = g.index_of(Group::Tp, world_rank);
  std::vector<int64_t> own;
  for (int64_t f = tp_i * rows; f < (tp_i + 1) * rows; ++f)
    own.push_back((dp_i * batch_l + f / seq_c) * c.seq + cp_i * seq_c + f % seq_c);
  return own;
}

BlockShard::BlockShard(const BlockConfig& c, const Mapping& m, const Groups& g, int world_rank)
    : c_(c), m_(m), groups_(g), world_rank_(world_rank) {
  validate(c_, m_);
  hidden_ = c.moe.hidden;
  heads_l_ = c.heads / m.tp, head_dim_ = hidden_ / c.heads, hl_ = heads_l_ * head_dim_;
  batch_l_ = c.batch / m.dp, seq_c_ = c.seq / m.cp, shard_rows_ = batch_l_ * seq_c_, own_rows_ = shard_rows_ / m.tp;
  local_experts_ = c.moe.experts / m.ep, ffn_l_ = c.moe.ffn / m.etp;
  own_ = fold::own_tokens(c, m, g, world_rank);
}

BlockWeights BlockShard::shards_of(const BlockWeights& whole) const {
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

DispatchLayout BlockShard::alltoall_layout(std::span<const int64_t> counts, std::span<const int64_t> all_counts) const {
  const int64_t E = c_.moe.experts, L = local_experts_;
  const auto& tp_ep = groups_.containing(Group::TpEp, world_rank_);
  auto rows_of = [&](int world_rank, int64_t local_expert) {  // rows world_rank sends this rank's local expert
    const auto at = static_cast<int64_t>(std::find(tp_ep.begin(), tp_ep.end(), world_rank) - tp_ep.begin());
    return all_counts[static_cast<size_t>(at * E + first_expert() + local_expert)];
  };
  const auto& ep_peers = groups_.containing(Group::Ep, world_rank_);
  const auto& etp_peers = groups_.containing(Group::Etp, world_rank_);
  DispatchLayout d;
  d.send_rows.assign(ep_peers.size(), 0), d.recv_rows.assign(ep_peers.size(), 0);
  for (size_t j = 0; j < ep_peers.size(); ++j)
    for (int64_t l = 0; l < L; ++l) {
      d.send_rows[j] += counts[static_cast<size_t>(static_cast<int64_t>(j) * L + l)];
      d.recv_rows[j] += rows_of(ep_peers[j], l);
    }
  // The gathered layout is [ETP peer q][its EP peer j][local expert l]; the experts want [l][q][j].
  std::vector<const std::vector<int>*> sources(etp_peers.size());  // [q]: q's EP peers
  d.gather_rows.assign(etp_peers.size(), 0);
  for (size_t q = 0; q < etp_peers.size(); ++q) {
    sources[q] = &groups_.containing(Group::Ep, etp_peers[q]);
    for (int src : *sources[q])
      for (int64_t l = 0; l < L; ++l) d.gather_rows[q] += rows_of(src, l);
  }
  std::vector<int64_t> block_start;  // [q][j][l] -> first gathered row
  int64_t row = 0;
  for (size_t q = 0; q < etp_peers.size(); ++q)
    for (int src : *sources[q])
      for (int64_t l = 0; l < L; ++l) block_start.push_back(row), row += rows_of(src, l);
  d.local_offsets.assign(L + 1, 0);
  for (int64_t l = 0; l < L; ++l) {
    size_t b = 0;
    for (size_t q = 0; q < etp_peers.size(); ++q)
      for (int src : *sources[q]) {
        const int64_t n = rows_of(src, l), start = block_start[b * L + l];
        for (int64_t i = 0; i < n; ++i) d.sorted_from.push_back(start + i);
        ++b;
      }
    d.local_offsets[l + 1] = static_cast<int64_t>(d.sorted_from.size());
  }
  return d;
}

}  // namespace mlsb::moe_train::fold
