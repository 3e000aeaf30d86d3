#pragma once
// Communicators: how ranks talk. `local` (one rank), `mpi` (Open MPI processes, launched by mpirun or
// srun), `nccl` (one GPU per rank, bootstrapped over MPI). Collectives take host pointers except on
// `nccl`, whose buffers are device memory (device_buffers() says which).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::comm {

/// A collective failed: a rank disagreed (sizes), died, or the library reported an error.
struct CommError : std::runtime_error { using std::runtime_error::runtime_error; };
/// A collective did not complete within the communicator's timeout (a rank never arrived).
struct CommTimeout : CommError { using CommError::CommError; };

/// Element types of collective buffers. Bf16/F16 are 2-byte IEEE-style floats; their reductions
/// accumulate in fp32 and round to nearest-even once per reduction step.
enum class ElemType { U8, I32, I64, F32, F64, F16, BF16 };
size_t elem_size(ElemType t);
std::string_view to_string(ElemType t);

enum class ReduceOp { Sum, Max, Min };

/// A non-blocking collective in flight (Communicator::ialltoallv). Its buffers and byte counts belong to
/// the caller and must stay alive and untouched until it completes. Destroying one that has not completed
/// waits for it up to the communicator's settle time (not when the communicator already refuses calls:
/// the call that broke it has waited) and never throws; if it is still in flight then, the communicator
/// refuses further calls (as after a timeout).
class CommRequest {
 public:
  virtual ~CommRequest() = default;
  /// Progresses the operation without blocking; true once it has completed. Throws CommError.
  virtual bool test() = 0;
  /// Blocks until the operation completes, under the communicator's timeout and cancel flag; throws
  /// CommTimeout or CommError like the blocking collectives.
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string name() const = 0;  ///< "local" | "mpi" | "nccl"
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// True when collective buffers must be device (CUDA) memory.
  virtual bool device_buffers() const { return false; }

  /// Every collective throws CommTimeout when it has not completed after this many seconds
  /// (default 60), and CommError on any other failure. Never hangs past the timeout.
  virtual void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }
  /// While `*flag` is true, a collective waiting for other ranks stops and throws CommError
  /// ("cancelled"); the runner passes its case-cancel flag so a timed-out or interrupted case never
  /// waits out the full timeout. nullptr (the default) = never cancelled.
  virtual void set_cancel_flag(const std::atomic<bool>* flag) { cancel_ = flag; }
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
  const std::atomic<bool>* cancel_flag() const { return cancel_; }
  /// A collective that gives up (cancelled, timed out, failed) first waits up to this many seconds
  /// (default 2) for its operations still in flight: until they finish, the library reads and writes the
  /// caller's buffers, which the caller frees as the error unwinds. 0 gives up at once, for a rank that
  /// makes no further calls after a cancellation. Honoured by mpi and by nccl's non-blocking all-to-allv
  /// (local has nothing in flight).
  virtual void set_settle_time(double seconds) { settle_s_ = seconds; }
  double settle_time() const { return settle_s_; }

  /// A communicator over the same ranks whose collectives take host buffers: this one, or, for nccl, its
  /// own MPI bootstrap (which follows this one's timeout, cancel flag and settle time). A workload whose
  /// tensors travel between device buffers sends its host values (counts, times) over it.
  virtual Communicator& host_side() { return *this; }

  virtual void barrier() = 0;
  /// recv[i] = op over ranks of send[i], i < count. send == recv is allowed (in place).
  virtual void allreduce(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) = 0;
  /// recv = concat over ranks r of send_r (count elements each; recv holds count * size()).
  virtual void allgather(const void* send, void* recv, size_t count, ElemType type) = 0;
  /// Bytes: rank r contributes recv_bytes[r] bytes (send_bytes == recv_bytes[rank()]), placed at the
  /// prefix sum of recv_bytes in recv.
  virtual void allgatherv(const void* send, size_t send_bytes, void* recv, std::span<const size_t> recv_bytes) = 0;
  /// send holds count * size() elements; rank r receives the op-reduction of block r (count elements).
  virtual void reduce_scatter(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) = 0;
  /// A reduce-scatter of unequal blocks: send holds counts[0] + ... + counts[size() - 1] elements (block r,
  /// at the prefix sum of counts, for rank r); recv (counts[rank()] elements) gets the op-reduction over ranks
  /// of this rank's block. The default, for host buffers, is an alltoallv of the blocks and the reduction of
  /// what arrived in rank order (deterministic); nccl groups one ncclReduce per rank (rank r the root of
  /// block r). Throws CommError when counts does not have size() entries.
  virtual void reduce_scatter_v(const void* send, void* recv, std::span<const size_t> counts, ElemType type,
                                ReduceOp op);
  /// send block r (count elements) goes to rank r; recv block r came from rank r.
  virtual void alltoall(const void* send, void* recv, size_t count, ElemType type) = 0;
  /// Bytes: send_bytes[r] bytes at the prefix-sum offset of send go to rank r; recv_bytes[r] bytes
  /// arrive from rank r at the prefix-sum offset of recv.
  virtual void alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                         std::span<const size_t> recv_bytes) = 0;
  /// alltoallv started without blocking: the same contract, completed by the returned request's wait()
  /// (or a test() that returns true). Every rank starts its non-blocking collectives in the same order.
  /// The default runs the blocking alltoallv and returns a completed request (local); mpi starts
  /// MPI_Ialltoallv, which Open MPI progresses inside MPI calls (test() and wait() among them); nccl
  /// enqueues grouped ncclSend/ncclRecv on its communication stream and completes at an event after them.
  virtual std::unique_ptr<CommRequest> ialltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                                                  std::span<const size_t> recv_bytes);
  /// Lets the library move non-blocking operations in flight forward without waiting for them: Open MPI
  /// progresses them only inside MPI calls, so a thread computing for long holds up its peers. Safe to call
  /// from a second thread while the first one computes or tests (mpi: MPI_Iprobe under
  /// MPI_THREAD_MULTIPLE). The default does nothing (local and nccl have nothing to progress on the host).
  virtual void progress() {}
  /// buf (count elements) of rank `root` is copied to every rank.
  virtual void broadcast(void* buf, size_t count, ElemType type, int root) = 0;
  /// Sends send_bytes to rank `dst` while receiving recv_bytes from rank `src` (ring steps).
  virtual void sendrecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes, int src) = 0;

  /// Checks that every rank passes the same value (a tensor's size, a case id): throws CommError
  /// naming `what`, this rank's value and the first rank whose value differs. Host values on every
  /// communicator.
  void expect_same(std::string_view what, uint64_t value);
  /// The largest of every rank's `value` (a time, say); host values on every communicator.
  double max_over_ranks(double value);

  /// A fresh communicator over the same ranks (what duplicate() returns). Collective: every rank calls
  /// it. The default throws CommError (the kind cannot be duplicated).
  virtual std::unique_ptr<Communicator> make_duplicate();
  /// A fresh communicator over the ranks that pass the same `color` (>= 0), numbered by `key` (ties by
  /// this communicator's rank): what split() returns. Collective: every rank calls it. mpi: MPI_Comm_split;
  /// nccl: a split of its MPI bootstrap, then a NCCL communicator over it; local: a copy of itself. The
  /// default throws CommError (the kind cannot be split).
  virtual std::unique_ptr<Communicator> make_split(int color, int key);

 protected:
  /// One host value from every rank, in rank order (expect_same's transport): an allgather on host_side().
  std::vector<uint64_t> allgather_host_u64(uint64_t value);

  double timeout_s_ = 60.0;
  double settle_s_ = 2.0;
  const std::atomic<bool>* cancel_ = nullptr;
};

/// Which communicator a run uses: "local", "mpi", "nccl", or "auto" (mpi when the process was started
/// by an MPI launcher — mpirun/srun set OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE — else local).
std::string resolve_comm_kind(std::string_view kind);

/// The node-local rank the launcher gives (Open MPI, Slurm, MPICH), else `rank`: which GPU a rank of
/// several on one node takes (node_local_rank % devices).
int node_local_rank(int rank);

/// The rank count the launcher gives (Open MPI's OMPI_COMM_WORLD_SIZE, PMI_SIZE, Slurm's SLURM_NTASKS), else 1:
/// what a plan made before any communicator exists (run --dry-run) can assume.
int launcher_world_size();
/// This process's rank as the launcher numbers it (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID),
/// else 0: which process prints what every rank would print alike before any communicator exists.
int launcher_rank();

/// Creates the communicator of a kind ("local", "mpi", "nccl"). MPI is initialised on first use and
/// finalised at exit. Throws CommError when the kind is unavailable (no GPU for nccl, say) and
/// std::invalid_argument for an unknown kind.
std::unique_ptr<Communicator> make_communicator(std::string_view kind);

/// A fresh communicator over the same ranks whose traffic cannot match a collective left pending on
/// `parent` (MPI_Comm_dup on mpi; the runner gives each case one so a failed case cannot poison the next).
/// Calls parent.make_duplicate(); the copy inherits the parent's timeout (not its cancel flag).
std::unique_ptr<Communicator> duplicate(Communicator& parent);

/// The sub-communicator of `parent`'s ranks that pass the same `color` (a rank group: tensor, expert,
/// data parallel), numbered by `key`; it inherits the parent's timeout, settle time and cancel flag (a part
/// of the case's communicator stops with the case). Calls parent.make_split(). Throws std::invalid_argument
/// for a negative color.
std::unique_ptr<Communicator> split(Communicator& parent, int color, int key);

}  // namespace mlsb::comm
