#pragma once
// The schedule of overlapped expert parallelism: the options (overlap, chunks, the modelled link) and the
// chunk plan that splits each rank's routed rows into chunks, so the dispatch of chunk i+1 and the combine
// of chunk i-1 travel while the experts compute chunk i.
//
// Chunks cut rows, experts compute whole: each (source, destination) pair's rows, ordered by the
// destination's local expert, are cut into `chunks` near-equal contiguous ranges (chunk c holds positions
// [n*c/chunks, n*(c+1)/chunks)); a local expert is computed at the first step by which all of its rows from
// every source have arrived (and not before the expert before it). Each expert's GEMMs are therefore the
// same calls on the same rows as without overlap, which is what keeps the result bit-identical: a BLAS
// GEMM's rows depend on how many rows the call had (OpenBLAS's edge kernels round differently).
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "backends/comm/link_model.hpp"

namespace mlsb::moe_train {

/// none: one all-to-all at a time, finished before anything else runs (the reference). chunked: the pipeline
/// above. Both start and finish their row all-to-alls the same way (EpExchange): they differ in the schedule only.
enum class Overlap { None, Chunked };
Overlap parse_overlap(std::string_view name);  ///< "none" | "chunked"; else std::invalid_argument("overlap: ...")

/// The most chunks a step may be split into (each chunk costs two all-to-allv per direction pair).
constexpr int64_t kMaxChunks = 64;

/// The waits of a pipeline of `chunks` steps, in order: dispatch 0, then at each step i >= 1 dispatch i and
/// combine i-1, then combine chunks-1.
constexpr int64_t pipeline_waits(int64_t chunks) { return 2 * chunks; }

/// How the expert-parallel layer communicates.
struct EpOptions {
  Overlap overlap = Overlap::None;
  int64_t chunks = 1;    ///< chunked: 1..kMaxChunks
  comm::LinkModel link;  ///< modelled link waited out by every all-to-all (inactive: the real transport)
  /// chunked, forward and backward: the shared experts compute just before the pipeline's wait number
  /// shared_slot (0 .. pipeline_waits(chunks) - 1: 0 hides the first dispatch, the last hides the last
  /// combine), or after the pipeline (-1). Where they compute changes when, not what (bit-identical).
  std::array<int64_t, 2> shared_slot = {-1, -1};
};

/// Throws std::invalid_argument naming the axis ("chunks: ...", "shared_slot_fwd: ...", "shared_slot_bwd: ...")
/// when chunks lies outside [1, kMaxChunks] or a shared slot outside [-1, pipeline_waits(chunks)).
void validate(const EpOptions& o);

/// Who sends which rows in which step, seen from rank `rank`. `counts` is every rank's rows per global
/// expert after capacity ([ranks][experts], row-major; experts = ranks * local_experts).
struct ChunkPlan {
  int ranks = 1, rank = 0;
  int64_t chunks = 1, local_experts = 0;
  std::vector<int64_t> counts;  ///< [ranks][experts]

  /// Rows source `s` routes to local expert `j` of rank `d`.
  int64_t rows(int s, int d, int64_t j) const { return counts[(s * ranks + d) * local_experts + j]; }
  /// Dispatch step c from this rank to d: rows [begin, begin + n) of this rank's block for d (the block
  /// is ordered by d's local expert, as a DispatchPlan lays rows out by global expert).
  int64_t send_begin(int64_t c, int d) const { return send_begin_[c * ranks + d]; }
  int64_t send_rows(int64_t c, int d) const { return send_begin_[(c + 1) * ranks + d] - send_begin(c, d); }
  /// Dispatch step c from s to this rank: rows [begin, begin + n) of s's block for this rank.
  int64_t recv_begin(int64_t c, int s) const { return recv_begin_[c * ranks + s]; }
  int64_t recv_rows(int64_t c, int s) const { return recv_begin_[(c + 1) * ranks + s] - recv_begin(c, s); }
  /// Rank d computes its local experts [first_expert(d, i), first_expert(d, i + 1)) at step i, and its
  /// combine step i returns their rows. first_expert(d, 0) = 0, first_expert(d, chunks) = local_experts.
  int64_t first_expert(int d, int64_t i) const { return first_expert_[d * (chunks + 1) + i]; }
  /// Rows combine step i carries from rank d home to rank s: s's rows of d's experts computed at step i.
  int64_t combine_rows(int s, int d, int64_t i) const;

  std::vector<int64_t> send_begin_, recv_begin_;  // [chunks + 1][ranks]
  std::vector<int64_t> first_expert_;             // [ranks][chunks + 1]
};

/// The plan of `chunks` steps (>= 1) for `rank` of `ranks` with `local_experts` experts per rank.
/// Throws std::invalid_argument when counts does not hold ranks * ranks * local_experts entries.
ChunkPlan plan_chunks(std::vector<int64_t> counts, int ranks, int rank, int64_t local_experts, int64_t chunks);

}  // namespace mlsb::moe_train
