#include "workloads/moe_train/overlap.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mlsb::moe_train {

Overlap parse_overlap(std::string_view name) {
  if (name == "none") return Overlap::None;
  if (name == "chunked") return Overlap::Chunked;
  throw std::invalid_argument("overlap: unknown '" + std::string(name) + "' (none, chunked)");
}

void validate(const EpOptions& o) {
  if (o.chunks < 1 || o.chunks > kMaxChunks)
    throw std::invalid_argument("chunks: " + std::to_string(o.chunks) + " must lie in [1, " +
                                std::to_string(kMaxChunks) + "]");
  const char* axes[2] = {"shared_slot_fwd", "shared_slot_bwd"};
  for (int d = 0; d < 2; ++d)
    if (o.shared_slot[d] < -1 || o.shared_slot[d] >= pipeline_waits(o.chunks))
      throw std::invalid_argument(std::string(axes[d]) + ": " + std::to_string(o.shared_slot[d]) +
                                  " must be -1 (after the pipeline) or a wait of the pipeline of " +
                                  std::to_string(o.chunks) + " chunks, 0.." +
                                  std::to_string(pipeline_waits(o.chunks) - 1));
}

int64_t ChunkPlan::combine_rows(int s, int d, int64_t i) const {
  int64_t n = 0;
  for (int64_t j = first_expert(d, i); j < first_expert(d, i + 1); ++j) n += rows(s, d, j);
  return n;
}

ChunkPlan plan_chunks(std::vector<int64_t> counts, int ranks, int rank, int64_t local_experts, int64_t chunks) {
  if (static_cast<int64_t>(counts.size()) != ranks * ranks * local_experts)
    throw std::invalid_argument("plan_chunks: " + std::to_string(counts.size()) + " counts for " +
                                std::to_string(ranks) + " ranks of " + std::to_string(local_experts) + " experts");
  ChunkPlan p;
  p.ranks = ranks, p.rank = rank, p.chunks = chunks, p.local_experts = local_experts;
  p.counts = std::move(counts);
  const int64_t C = chunks, L = local_experts;
  auto block = [&](int s, int d) {
    int64_t n = 0;
    for (int64_t j = 0; j < L; ++j) n += p.rows(s, d, j);
    return n;
  };
  p.send_begin_.resize((C + 1) * ranks), p.recv_begin_.resize((C + 1) * ranks);
  for (int r = 0; r < ranks; ++r) {
    const int64_t out = block(rank, r), in = block(r, rank);
    for (int64_t c = 0; c <= C; ++c)
      p.send_begin_[c * ranks + r] = out * c / C, p.recv_begin_[c * ranks + r] = in * c / C;
  }
  p.first_expert_.resize(ranks * (C + 1));
  for (int d = 0; d < ranks; ++d) {
    std::vector<int64_t> done(L, 0);  // the step after which expert j's rows have all arrived
    for (int s = 0; s < ranks; ++s) {
      const int64_t n = block(s, d);
      int64_t end = 0;
      for (int64_t j = 0; j < L; ++j) {
        if (p.rows(s, d, j) == 0) continue;
        end += p.rows(s, d, j);
        // Chunk c holds positions [n*c/C, n*(c+1)/C): the last row's chunk is the largest c with n*c/C <= end-1.
        done[j] = std::max(done[j], (end * C - 1) / n);
      }
    }
    for (int64_t j = 1; j < L; ++j) done[j] = std::max(done[j], done[j - 1]);  // experts in order
    for (int64_t i = 0; i <= C; ++i)
      p.first_expert_[d * (C + 1) + i] = std::count_if(done.begin(), done.end(), [&](int64_t s) { return s < i; });
  }
  return p;
}

}  // namespace mlsb::moe_train
