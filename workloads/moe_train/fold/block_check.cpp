#include "workloads/moe_train/fold/block_check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace mlsb::moe_train::fold {

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d, norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

BlockCheck check_block(const BlockConfig& c, const Mapping& m, const Groups& g, const BlockWeights& w,
                       const BlockData& data, const BlockShard& shard, const BlockWeights& grads,
                       const DispatchPlan& plan, const std::vector<float>& y_own, const std::vector<float>& dx_own) {
  std::vector<std::vector<int64_t>> groups;
  for (int r = 0; r < m.world; ++r) groups.push_back(own_tokens(c, m, g, r));
  const BlockResult ref = reference_block(c, w, data, groups);
  const int64_t h = c.moe.hidden, k = c.moe.topk;
  const auto& own = shard.own_tokens();
  std::vector<float> ref_y(own.size() * h), ref_dx(own.size() * h);
  for (size_t t = 0; t < own.size(); ++t) {
    std::copy_n(ref.y.begin() + own[t] * h, h, ref_y.begin() + t * h);
    std::copy_n(ref.dx.begin() + own[t] * h, h, ref_dx.begin() + t * h);
  }
  BlockCheck out;
  auto compare = [&](const char* what, const std::vector<float>& a, const std::vector<float>& b) {
    const double e = rel_l2(a, b);
    if (!(e <= out.worst_rel_err)) out.worst_rel_err = e, out.worst_what = what;
  };
  const BlockWeights want = shard.shards_of(ref.grad);
  const BlockWeights& got = grads;
  compare("y", y_own, ref_y);
  compare("dx", dx_own, ref_dx);
  compare("grad norm1", got.norm1, want.norm1);
  compare("grad norm2", got.norm2, want.norm2);
  compare("grad wqkv", got.attn.wqkv, want.attn.wqkv);
  compare("grad wo", got.attn.wo, want.attn.wo);
  compare("grad router", got.router, want.router);
  compare("grad expert w13", got.experts.w13, want.experts.w13);
  compare("grad expert w2", got.experts.w2, want.experts.w2);
  // The assignments this rank dropped, as global assignment ids, against the reference's for its tokens.
  std::vector<int64_t> mine;
  const std::set<int64_t> own_set(own.begin(), own.end());
  for (size_t t = 0; t < own.size(); ++t)
    for (int64_t j = 0; j < k; ++j)
      if (plan.slot_row[t * k + j] < 0) mine.push_back(own[t] * k + j);
  std::sort(mine.begin(), mine.end());
  std::vector<int64_t> theirs;
  for (int64_t a : ref.dropped_tokens)
    if (own_set.count(a / k)) theirs.push_back(a);
  out.drops_differ = mine != theirs;
  return out;
}

}  // namespace mlsb::moe_train::fold
