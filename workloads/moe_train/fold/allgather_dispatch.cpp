// The all-gather token dispatcher of the folded block (Megatron-Core's MoEAllGatherTokenDispatcher): every token of
// the ETP x EP group is gathered with the experts its rank chose for it (after that rank's capacity) and their
// weights; each rank computes the rows of its E/ep experts on its ffn/etp shard; the weighted outputs, partial
// over the experts and shards of the group, are reduce-scattered home.
#include <cstring>

#include "workloads/moe_train/fold/block.hpp"

namespace mlsb::moe_train::fold {

void FoldedBlock::allgather_forward(float* y_own) {
  const int64_t h = hidden_, T = own_rows_, k = c_.moe.topk, L = local_experts_;
  GroupComm& group = comms_[Group::TpEp];
  const int n = group.size();
  // The group's tokens, and where each of their assignments goes (-1: dropped by its rank's capacity).
  std::vector<float> xg(n * T * h), weights(routing_.weight.begin(), routing_.weight.end()), all_weights(n * T * k);
  group.allgatherv(hn_own_.data(), xg.data(), std::vector<int64_t>(n, T * h));
  std::vector<int64_t> chosen(T * k);
  for (int64_t a = 0; a < T * k; ++a) chosen[a] = plan_.slot_row[a] < 0 ? -1 : routing_.expert[a];
  const std::vector<int64_t> all_chosen = group.allgather_i64(chosen);
  group.allgatherv(weights.data(), all_weights.data(), std::vector<int64_t>(n, T * k));
  // This rank's rows: by local expert, then in the group's token order.
  layout_.local_offsets.assign(L + 1, 0);
  gathered_slot_.clear(), gathered_weight_.clear();
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t a = 0; a < n * T * k; ++a)
      if (all_chosen[a] == first_expert() + l) gathered_slot_.push_back(a), gathered_weight_.push_back(all_weights[a]);
    layout_.local_offsets[l + 1] = static_cast<int64_t>(gathered_slot_.size());
  }
  const int64_t rows = layout_.local_offsets[L];
  xe_.resize(rows * h), ye_.resize(rows * h);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(xe_.data() + r * h, xg.data() + gathered_slot_[r] / k * h, h * sizeof(float));
  experts_forward(p_.experts, xe_.data(), layout_.local_offsets, ye_.data(), cache_, threads_, times_.experts);
  std::vector<float> yg(n * T * h, 0.0f), mine(T * h);
  for (int64_t r = 0; r < rows; ++r) {
    float* to = yg.data() + gathered_slot_[r] / k * h;
    for (int64_t i = 0; i < h; ++i) to[i] += gathered_weight_[r] * ye_[r * h + i];
  }
  group.reduce_scatter_v(yg.data(), mine.data(), std::vector<int64_t>(n, T * h));
  for (int64_t i = 0; i < T * h; ++i) y_own[i] += mine[i];
}

void FoldedBlock::allgather_backward(const float* dy_own, std::vector<float>& dweight, std::vector<float>& dhn) {
  const int64_t h = hidden_, T = own_rows_, k = c_.moe.topk, rows = layout_.local_offsets[local_experts_];
  GroupComm& group = comms_[Group::TpEp];
  const int n = group.size();
  std::vector<float> dyg(n * T * h), dye(rows * h), dxe(rows * h), dwg(n * T * k, 0.0f), dxg(n * T * h, 0.0f), mine(T * h);
  group.allgatherv(dy_own, dyg.data(), std::vector<int64_t>(n, T * h));
  // d(rows) = weight * dy of their token; d(weight) = <dy, the row's output>, partial over the ETP shards.
  for (int64_t r = 0; r < rows; ++r) {
    const float* d = dyg.data() + gathered_slot_[r] / k * h;
    float dot = 0;
    for (int64_t i = 0; i < h; ++i) dye[r * h + i] = gathered_weight_[r] * d[i], dot += d[i] * ye_[r * h + i];
    dwg[gathered_slot_[r]] += dot;
  }
  group.reduce_scatter_v(dwg.data(), dweight.data(), std::vector<int64_t>(n, T * k));
  experts_backward(p_.experts, xe_.data(), layout_.local_offsets, dye.data(), cache_, dxe.data(), g_.experts, threads_,
                   times_.experts);
  for (int64_t r = 0; r < rows; ++r) {
    float* to = dxg.data() + gathered_slot_[r] / k * h;
    for (int64_t i = 0; i < h; ++i) to[i] += dxe[r * h + i];
  }
  group.reduce_scatter_v(dxg.data(), mine.data(), std::vector<int64_t>(n, T * h));
  for (int64_t i = 0; i < T * h; ++i) dhn[i] += mine[i];
}

}  // namespace mlsb::moe_train::fold
