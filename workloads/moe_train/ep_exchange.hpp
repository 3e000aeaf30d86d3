#pragma once
// The all-to-alls of the expert-parallel layer, timed and with the modelled link waited out: one at a time
// (overlap=none: each row all-to-allv started and finished at once; the token counts of both schedules
// block), and the chunked pipeline of overlap.hpp that runs dispatch, the experts and combine with
// non-blocking all-to-allv in flight.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "util/clock.hpp"
#include "workloads/moe_train/overlap.hpp"

namespace mlsb::moe_train {

/// Seconds of communication, summed since the last reset.
struct CommTimes {
  double comm_s = 0;     ///< communicating: the wall time during which at least one all-to-all is in flight (from
                         ///< its start until its completion, seen at a poll between experts or at its wait) or a
                         ///< communication call runs; the union of those intervals, so never above the step
  double blocked_s = 0;  ///< inside communication calls (starts, polls, waits): what the step could not hide
};

/// Where the rows of one expert-parallel exchange go, seen from one rank with `local_experts` experts per rank.
struct EpLayout {
  std::vector<int64_t> recv_counts;    ///< [source rank][local expert]: rows each rank sends this rank's experts
  std::vector<int64_t> local_offsets;  ///< [local_experts + 1]: local expert j's rows (from every source, in rank
                                       ///< order) start at local_offsets[j] of the experts' layout
  std::vector<size_t> send_bytes, recv_bytes;  ///< per rank, rows of `row_bytes` bytes

  /// The layout of this rank's rows per global expert `counts` ([ranks * local_experts]) and the received
  /// `recv_counts`. Throws std::invalid_argument when their sizes are not ranks * local_experts.
  static EpLayout make(std::span<const int64_t> counts, std::vector<int64_t> recv_counts, int ranks,
                       int64_t local_experts, size_t row_bytes);
  /// Calls copy(wire_row, expert_row, rows) for each (source, local expert) block: `wire_row` in the row
  /// all-to-allv's layout ([source][local expert]), `expert_row` in the experts' ([local expert][source]).
  void for_each_block(const std::function<void(int64_t, int64_t, int64_t)>& copy) const;
  int64_t rows_in() const { return local_offsets.back(); }  ///< rows this rank's experts compute
};

/// Where the chunked pipeline stages rows between the layer's buffers and the wire, and how it copies them:
/// host memory and memcpy (EpExchange's default), or device memory and copies queued on the layer's stream
/// when the communicator's buffers are device memory (nccl; the GPU layer's DeviceRows).
class RowMemory {
 public:
  virtual ~RowMemory() = default;
  /// Staging buffer `which` (0 dispatch out, 1 dispatch in, 2 combine out, 3 combine in) of at least `bytes`
  /// bytes; what it held is lost when it grows.
  virtual unsigned char* stage(int which, size_t bytes) = 0;
  /// Copies `bytes` bytes between the layer's buffers and staging. May return before the copy is done, if
  /// whatever reads the destination next is ordered after it (the layer's stream) or calls ready() first.
  virtual void copy(void* to, const void* from, size_t bytes) = 0;
  /// Returns once every copy made so far is done: called before an all-to-all reads staging.
  virtual void ready() = 0;
  /// Bytes the staging buffers hold now (they only grow: also their peak).
  virtual size_t bytes() const = 0;
};

/// Communication of one layer over `comm` (every rank calls the same sequence). With an active link
/// model, an all-to-all completes no earlier than its start plus LinkModel::alltoallv_s of its byte
/// counts: the calling thread waits out the rest (in slices that watch the communicator's cancel flag).
/// Both schedules move rows the same way: a non-blocking all-to-allv (Communicator::ialltoallv) finished
/// by the same wait, while a helper thread calls Communicator::progress() whenever an all-to-all of this
/// exchange is in flight; they differ only in what runs between the start and the wait. Rows travel in the
/// communicator's buffers (host, or device on nccl: `memory` then stages them on the device); counts travel
/// over its host_side(). Throws comm::CommError (cancelled: "cancelled") like the communicator.
class EpExchange {
 public:
  /// `memory` nullptr: host memory.
  EpExchange(comm::Communicator& comm, const comm::LinkModel& link, CommTimes& times,
             std::unique_ptr<RowMemory> memory = nullptr);

  EpExchange(const EpExchange&) = delete;
  EpExchange& operator=(const EpExchange&) = delete;
  ~EpExchange();

  /// alltoallv (Communicator's contract) started and finished at once, as the pipeline starts and
  /// finishes each of its own: timed, the link waited out.
  void alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv, std::span<const size_t> recv_bytes);
  /// The rows each rank sends this rank's `local_experts` experts ([source][local expert]), given this rank's
  /// rows per global expert: an all-to-all of counts, or, when `everyone` is given, an allgather of every
  /// rank's counts into it ([rank][global expert]: what plan_chunks needs). Timed, the link waited out.
  std::vector<int64_t> counts_to_experts(std::span<const int64_t> counts, int64_t local_experts,
                                         std::vector<int64_t>* everyone);
  /// Runs `body` (blocking communication the link model does not cover: gradient allreduce), timed.
  void timed(const std::function<void()>& body);

  /// One chunked exchange of rows of `row_bytes` bytes (overlap=chunked), every buffer in the memory the
  /// communicator takes (on nccl: device; `compute` ordered after the memory's copies). `out` holds this rank's rows by
  /// global expert (row r of global expert e at `expert_offsets[e] + r`); `in` receives the rows of this
  /// rank's experts in the layout `local_offsets` gives (expert j's rows from source 0, then 1, ...).
  /// `compute(j)` runs local expert j once its rows are in `in` and writes its rows of `results` (laid
  /// out as `in`), which travel home into `back` (laid out as `out`). Step i: start dispatch i+1, finish
  /// dispatch i, compute step i's experts (polling what is in flight between them), start combine i,
  /// finish combine i-1. `side` (work that needs none of the exchange: the shared experts) runs once, just
  /// before the wait number `side_slot` (waits in order as pipeline_waits counts them), or after the pipeline
  /// when side_slot lies outside them (-1).
  void chunked(const ChunkPlan& plan, size_t row_bytes, const void* out, std::span<const int64_t> expert_offsets,
               void* in, std::span<const int64_t> local_offsets, const std::function<void(int64_t)>& compute,
               const void* results, void* back, const std::function<void()>& side, int64_t side_slot);

  /// Bytes of its row staging (RowMemory::bytes): device memory on nccl, pinned host memory otherwise.
  size_t staging_bytes() const { return memory_->bytes(); }

 private:
  class ProgressThread;
  struct EndInFlight {
    void operator()(ProgressThread* p) const;
  };
  struct InFlight {
    std::unique_ptr<comm::CommRequest> req;
    std::unique_ptr<ProgressThread, EndInFlight> progressing;  // counts the transport in flight until reset
    Clock::time_point start, ready;  // ready: start + the modelled link time
    Clock::time_point arrived_at;    // when the transport was first seen complete
    bool arrived = false, done = true;
  };
  // Blocking alltoall of `count` int64 per rank pair, timed, the link waited out.
  void alltoall_i64(const int64_t* send, int64_t* recv, size_t count);
  // Blocking allgather of `count` int64 per rank, timed, the link waited out (as an all-to-all that sends
  // every peer the same block).
  void allgather_i64(const int64_t* send, int64_t* recv, size_t count);
  // Runs `call`, waits out the modelled link for these byte counts, and times both.
  void blocking(const std::function<void()>& call, std::span<const size_t> send_bytes,
                std::span<const size_t> recv_bytes);
  InFlight start(const void* send, std::span<const size_t> send_bytes, void* recv, std::span<const size_t> recv_bytes);
  void poll(InFlight& op);
  void finish(InFlight& op);
  void arrive(InFlight& op);             // op's transport seen complete: no more progress calls for it
  void complete(InFlight& op);           // op seen complete: its interval [start, max(arrival, ready)] is busy
  void wait_until(Clock::time_point t);  // the modelled link's wait, watching the cancel flag
  void busy(Clock::time_point from, Clock::time_point to) { busy_.emplace_back(from, to); }
  // Adds the union of the busy intervals to comm_s; called when nothing is in flight (every later interval
  // starts after every recorded one ends).
  void account_busy();

  comm::Communicator& comm_;
  comm::LinkModel link_;
  CommTimes& times_;
  std::unique_ptr<RowMemory> memory_;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> busy_;
  std::unique_ptr<ProgressThread> progress_;  // started with the first all-to-allv
};

}  // namespace mlsb::moe_train
