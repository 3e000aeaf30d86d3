#include "backends/comm/nccl_communicator.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "backends/cuda/check.hpp"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device.hpp"

namespace mlsb::comm {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t nccl_type(ElemType t) {
  switch (t) {
    case ElemType::U8: return ncclUint8;
    case ElemType::I32: return ncclInt32;
    case ElemType::I64: return ncclInt64;
    case ElemType::F32: return ncclFloat32;
    case ElemType::F64: return ncclFloat64;
    case ElemType::F16: return ncclFloat16;
    case ElemType::BF16: return ncclBfloat16;
  }
  throw CommError("nccl: unknown element type");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
  }
  throw CommError("nccl: unknown reduction");
}

/// What rank 0 broadcasts: whether it got an id, and the id.
struct Bootstrap {
  int32_t ok = 0;
  ncclUniqueId id{};
};

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(Communicator& parent) : boot_(duplicate(parent)) {
    timeout_s_ = boot_->timeout();
    rank_ = boot_->rank();
    size_ = boot_->size();
    const int devices = cuda::device_count();
    if (devices == 0) {
      std::string why;
      cuda::cuda_available(&why);
      throw CommError("nccl: " + (why.empty() ? std::string("no CUDA device (none visible)") : why));
    }
    device_ = node_local_rank(rank_) % devices;
    try {
      init();
    } catch (...) {
      release();
      throw;
    }
  }

  ~NcclCommunicator() override { release(); }

  void init() {
    // The collectives' connections are made inside the init (polled under the deadline), not by the first
    // blocking launch of each algorithm, which no deadline guards; a value the user set stands.
    setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
    cuda("cudaSetDevice", cudaSetDevice(device_));
    Bootstrap b;
    if (rank_ == 0) b.ok = ncclGetUniqueId(&b.id) == ncclSuccess;
    boot_->broadcast(&b, sizeof b, ElemType::U8, 0);
    if (!b.ok) throw CommError("nccl: rank 0 could not create an ncclUniqueId");
    cuda("cudaStreamCreate", cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cuda("cudaMalloc", cudaMalloc(&scratch_, 2 * static_cast<size_t>(size_) + 16));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // the init and the split return at once; their completion is polled under the deadline
    const ncclResult_t r = ncclCommInitRankConfig(&setup_, size_, b.id, rank_, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      setup_ = nullptr;
      throw CommError(std::string("nccl init: ") + ncclGetErrorString(r));
    }
    wait("init", ncclInProgress, Until::Launched);
    // The collectives run on a blocking child of the same ranks: a non-blocking communicator launches every
    // group on a thread it creates for that group (NCCL's group.cc), a cost each short all-to-all would pay
    // inside exposed_comm_ms. A blocking launch returns once the kernels are queued; their completion is
    // still polled under the deadline, and abort() still stops them.
    ncclConfig_t work = NCCL_CONFIG_INITIALIZER;
    work.blocking = 1;
    ncclComm_t child = nullptr;
    try {
      wait("split", ncclCommSplit(setup_, 0, rank_, &child, &work), Until::Launched);
    } catch (const CommError&) {
      // wait() aborted the parent, which joins the split's thread; a child it made (failed or not) is ours.
      if (ncclComm_t c = __atomic_load_n(&child, __ATOMIC_ACQUIRE)) ncclCommAbort(c);
      throw;
    }
    comm_ = __atomic_load_n(&child, __ATOMIC_ACQUIRE);  // NCCL's split thread stores it when the split is done
    if (!comm_) fail("split", "the split gave no communicator", false);
    // A blocking launch connects two ranks the first time they exchange (NCCL's runtime connection), with no
    // deadline: connect every pair now, while every rank is known to be here, with one byte each way.
    std::vector<size_t> one(static_cast<size_t>(size_), 1);
    one[static_cast<size_t>(rank_)] = 0;
    alltoallv(scratch_, one, static_cast<uint8_t*>(scratch_) + size_, one);
  }

  std::string name() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_buffers() const override { return true; }
  Communicator& host_side() override { return *boot_; }
  void set_timeout(double seconds) override {
    Communicator::set_timeout(seconds);
    boot_->set_timeout(seconds);
  }
  void set_cancel_flag(const std::atomic<bool>* flag) override {
    Communicator::set_cancel_flag(flag);
    boot_->set_cancel_flag(flag);
  }
  void set_settle_time(double seconds) override {
    Communicator::set_settle_time(seconds);
    boot_->set_settle_time(seconds);
  }

  void barrier() override {
    begin("barrier");
    wait("barrier", ncclAllReduce(scratch_, scratch_, 1, ncclInt32, ncclSum, comm_, stream_));
  }

  void allreduce(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) override {
    begin("allreduce");
    wait("allreduce", ncclAllReduce(send, recv, count, nccl_type(type), nccl_op(op), comm_, stream_));
  }

  void allgather(const void* send, void* recv, size_t count, ElemType type) override {
    begin("allgather");
    wait("allgather", ncclAllGather(send, recv, count, nccl_type(type), comm_, stream_));
  }

  void allgatherv(const void* send, size_t send_bytes, void* recv, std::span<const size_t> recv_bytes) override {
    begin("allgatherv");
    check_peers("allgatherv", recv_bytes);
    if (send_bytes != recv_bytes[rank_])
      throw CommError("nccl allgatherv: rank " + std::to_string(rank_) + " sends " + std::to_string(send_bytes) +
                      " bytes but recv_bytes says " + std::to_string(recv_bytes[rank_]));
    auto* out = static_cast<uint8_t*>(recv);
    size_t own = 0;
    for (int r = 0; r < rank_; ++r) own += recv_bytes[r];
    if (send_bytes && out + own != send) copy(out + own, send, send_bytes);
    size_t off = 0;
    ncclGroupStart();
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) {
        if (send_bytes) ncclSend(send, send_bytes, ncclUint8, r, comm_, stream_);
        if (recv_bytes[r]) ncclRecv(out + off, recv_bytes[r], ncclUint8, r, comm_, stream_);
      }
      off += recv_bytes[r];
    }
    wait("allgatherv", ncclGroupEnd());
  }

  void reduce_scatter(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) override {
    begin("reduce_scatter");
    wait("reduce_scatter", ncclReduceScatter(send, recv, count, nccl_type(type), nccl_op(op), comm_, stream_));
  }

  void reduce_scatter_v(const void* send, void* recv, std::span<const size_t> counts, ElemType type,
                        ReduceOp op) override {
    begin("reduce_scatter_v");
    check_peers("reduce_scatter_v", counts);
    const auto* in = static_cast<const uint8_t*>(send);
    size_t off = 0;
    ncclGroupStart();
    for (int r = 0; r < size_; ++r) {
      // Every rank skips the same empty blocks (counts agree); recv is read only at the root.
      if (counts[r]) ncclReduce(in + off, recv, counts[r], nccl_type(type), nccl_op(op), r, comm_, stream_);
      off += counts[r] * elem_size(type);
    }
    wait("reduce_scatter_v", ncclGroupEnd());
  }

  void alltoall(const void* send, void* recv, size_t count, ElemType type) override {
    begin("alltoall");
    const size_t bytes = count * elem_size(type);
    std::vector<size_t> each(static_cast<size_t>(size_), bytes);
    wait("alltoall", exchange(send, each, recv, each));
  }

  void alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                 std::span<const size_t> recv_bytes) override {
    begin("alltoallv");
    check_alltoallv("alltoallv", send_bytes, recv_bytes);
    wait("alltoallv", exchange(send, send_bytes, recv, recv_bytes));
  }

  std::unique_ptr<CommRequest> ialltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                                          std::span<const size_t> recv_bytes) override {
    begin("ialltoallv");
    check_alltoallv("ialltoallv", send_bytes, recv_bytes);
    cudaEvent_t done = nullptr;
    cuda("cudaEventCreate", cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    auto request = std::make_unique<Request>(*this, done);
    wait("ialltoallv", exchange(send, send_bytes, recv, recv_bytes), Until::Launched);
    enqueued("cudaEventRecord", cudaEventRecord(done, stream_));
    return request;
  }

  void broadcast(void* buf, size_t count, ElemType type, int root) override {
    begin("broadcast");
    check_rank("broadcast root", root);
    wait("broadcast", ncclBroadcast(buf, buf, count, nccl_type(type), root, comm_, stream_));
  }

  void sendrecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes, int src) override {
    begin("sendrecv");
    check_rank("sendrecv dst", dst);
    check_rank("sendrecv src", src);
    if (dst == rank_ && src == rank_) {
      if (send_bytes != recv_bytes)
        throw CommError("nccl sendrecv: rank " + std::to_string(rank_) + " sends itself " + std::to_string(send_bytes) +
                        " bytes but expects " + std::to_string(recv_bytes));
      if (send_bytes && recv != send) copy(recv, send, send_bytes);
      wait("sendrecv", ncclSuccess);
      return;
    }
    ncclGroupStart();
    if (send_bytes) ncclSend(send, send_bytes, ncclUint8, dst, comm_, stream_);
    if (recv_bytes) ncclRecv(recv, recv_bytes, ncclUint8, src, comm_, stream_);
    wait("sendrecv", ncclGroupEnd());
  }

  std::unique_ptr<Communicator> make_duplicate() override { return make_nccl_communicator(*boot_); }
  std::unique_ptr<Communicator> make_split(int color, int key) override {
    const auto part = split(*boot_, color, key);
    return make_nccl_communicator(*part);
  }

 private:
  /// An ialltoallv in flight: its ncclSend/ncclRecv are on the communication stream, `done_` recorded after them.
  class Request final : public CommRequest {
   public:
    Request(NcclCommunicator& comm, cudaEvent_t done) : comm_(comm), done_(done) {}
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;
    ~Request() override {
      if (!complete_ && comm_.broken_.empty()) comm_.settle_request(done_);
      cudaEventDestroy(done_);
    }
    bool test() override {
      if (!complete_) complete_ = comm_.poll("ialltoallv", done_);
      return complete_;
    }
    void wait() override {
      if (!complete_) comm_.wait("ialltoallv", ncclSuccess, Until::Event, done_);
      complete_ = true;
    }

   private:
    NcclCommunicator& comm_;
    cudaEvent_t done_;
    bool complete_ = false;
  };

  /// What wait() waits for: the library's launch (its asynchronous state no longer ncclInProgress), the
  /// communication stream drained, or an event on it reached.
  enum class Until { Launched, Drained, Event };

  void cuda(const char* what, cudaError_t e) {
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw CommError(std::string("nccl: ") + what + ": " + cudaGetErrorString(e));
    }
  }

  /// Every collective starts here: refuses a broken communicator and selects this rank's GPU.
  void begin(const char* what) {
    if (!broken_.empty()) throw CommError("nccl " + std::string(what) + ": communicator unusable (" + broken_ + ")");
    cuda("cudaSetDevice", cudaSetDevice(device_));
  }

  void check_rank(const char* what, int r) const {
    if (r < 0 || r >= size_)
      throw CommError("nccl: " + std::string(what) + " " + std::to_string(r) + " is not a rank of " + std::to_string(size_));
  }
  void check_peers(const char* what, std::span<const size_t> bytes) const {
    if (bytes.size() != static_cast<size_t>(size_))
      throw CommError("nccl " + std::string(what) + ": " + std::to_string(bytes.size()) + " byte counts for " +
                      std::to_string(size_) + " ranks");
  }
  void check_alltoallv(const char* what, std::span<const size_t> send_bytes, std::span<const size_t> recv_bytes) {
    check_peers(what, send_bytes);
    check_peers(what, recv_bytes);
    if (send_bytes[rank_] != recv_bytes[rank_])
      throw CommError("nccl " + std::string(what) + ": rank " + std::to_string(rank_) + " sends itself " +
                      std::to_string(send_bytes[rank_]) + " bytes but expects " + std::to_string(recv_bytes[rank_]));
  }

  /// A CUDA call on the communication stream after NCCL work was enqueued on it: a failure aborts the
  /// communicator (that work may still use the caller's buffers) and throws CommError.
  void enqueued(const char* what, cudaError_t e) {
    if (e != cudaSuccess) {
      cudaGetLastError();
      fail(what, cudaGetErrorString(e), false);
    }
  }
  static bool launched_ok(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

  /// The own block of a grouped exchange, queued on the communication stream before the group: a non-blocking
  /// communicator may still be launching the group on its own thread after ncclGroupEnd (ncclInProgress), and
  /// NCCL forbids other work on its stream until then; a throw inside the group would also leave it open.
  void copy(void* dst, const void* src, size_t bytes) {
    enqueued("own block copy", cuda::copy_on(stream_, dst, src, bytes, cuda::Landed::Later, "nccl own block"));
  }

  /// Enqueues a grouped point-to-point exchange on the communication stream: send_bytes[r] from the prefix
  /// offset of send go to rank r, recv_bytes[r] from rank r land at the prefix offset of recv; the own block is
  /// a device copy on the same stream. Returns ncclGroupEnd's result, for wait().
  ncclResult_t exchange(const void* send, std::span<const size_t> send_bytes, void* recv,
                        std::span<const size_t> recv_bytes) {
    const auto* in = static_cast<const uint8_t*>(send);
    auto* out = static_cast<uint8_t*>(recv);
    size_t own_in = 0, own_out = 0;
    for (int r = 0; r < rank_; ++r) own_in += send_bytes[r], own_out += recv_bytes[r];
    if (send_bytes[rank_]) copy(out + own_out, in + own_in, send_bytes[rank_]);
    size_t so = 0, ro = 0;
    ncclGroupStart();
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) {
        if (send_bytes[r]) ncclSend(in + so, send_bytes[r], ncclUint8, r, comm_, stream_);
        if (recv_bytes[r]) ncclRecv(out + ro, recv_bytes[r], ncclUint8, r, comm_, stream_);
      }
      so += send_bytes[r];
      ro += recv_bytes[r];
    }
    return ncclGroupEnd();
  }

  /// One look at enqueued work: true once the library has launched it and, unless `until` is Launched, the
  /// stream has drained or `event` has been reached; a library or CUDA error aborts the communicator.
  bool poll(const char* what, cudaEvent_t event, Until until = Until::Event) {
    if (!broken_.empty()) throw CommError("nccl " + std::string(what) + ": communicator unusable (" + broken_ + ")");
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm_ ? comm_ : setup_, &state) != ncclSuccess)
      fail(what, "ncclCommGetAsyncError failed", false);
    if (state != ncclSuccess && state != ncclInProgress) fail(what, ncclGetErrorString(state), false);
    if (state != ncclSuccess) return false;
    if (until == Until::Launched) return true;
    cudaError_t error = cudaSuccess;
    if (cuda::query_done(until == Until::Event ? cudaEventQuery(event) : cudaStreamQuery(stream_), &error)) return true;
    if (error != cudaSuccess) fail(what, cudaGetErrorString(error), false);
    return false;
  }

  /// Polls until the enqueued work is done (see poll), the library reports an error, the case is
  /// cancelled, or the timeout passes; the last three abort the communicator.
  void wait(const char* what, ncclResult_t launched, Until until = Until::Drained, cudaEvent_t event = nullptr) {
    if (!launched_ok(launched)) fail(what, ncclGetErrorString(launched), false);
    const auto start = Clock::now();
    for (long polls = 0;; ++polls) {
      if (poll(what, event, until)) return;
      if (cancelled()) fail(what, "cancelled", false);
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (waited > timeout_s_)
        fail(what, "rank " + std::to_string(rank_) + " waited " + std::to_string(timeout_s_) +
                       " s for the other ranks (timeout)", true);
      // The first 10 ms only yield: a sleep of 1 us lasts about 50 us on Linux (timer slack), which would be
      // counted as exposed communication; after that the poll sleeps 100 us between looks.
      if (polls > 1000) {
        if (waited < 0.01) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
  }

  [[noreturn]] void fail(const char* what, const std::string& why, bool timeout) {
    abort(std::string(what) + ": " + why);
    const std::string msg = "nccl " + broken_;
    if (timeout) throw CommTimeout(msg);
    throw CommError(msg);
  }

  /// Marks the communicator unusable and aborts the NCCL communicators: that stops kernels waiting for peers,
  /// so the stream drains.
  void abort(const std::string& why) {
    broken_ = why;
    for (ncclComm_t* c : {&comm_, &setup_})
      if (*c) {
        ncclCommAbort(*c);
        *c = nullptr;
      }
  }

  /// A request dropped before it completed: waits up to the settle time for its event, never throws; if it is
  /// still in flight then (a peer never came), aborts, so the library stops writing the caller's buffers.
  void settle_request(cudaEvent_t event) {
    const auto until = Clock::now() + std::chrono::duration<double>(settle_s_);
    try {
      while (!poll("ialltoallv", event)) {
        if (Clock::now() >= until) return abort("ialltoallv: dropped in flight (a peer never came)");
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    } catch (const CommError&) {  // poll aborted the communicator: nothing is in flight any more
    }
  }

  /// Destroys the blocking child (healthy: every call has drained its stream, and NCCL 2.28's destroy is local to
  /// the rank) or aborts it, finalises the setup communicator (healthy: within 10 s) or aborts it, and frees the
  /// rest.
  void release() {
    cudaSetDevice(device_);
    if (comm_) broken_.empty() ? ncclCommDestroy(comm_) : ncclCommAbort(comm_);
    comm_ = nullptr;
    if (setup_) {
      const ncclResult_t f = broken_.empty() ? ncclCommFinalize(setup_) : ncclInternalError;
      if ((f == ncclSuccess || f == ncclInProgress) && settle(10.0))
        ncclCommDestroy(setup_);
      else
        ncclCommAbort(setup_);
      setup_ = nullptr;
    }
    if (scratch_) cudaFree(scratch_);
    if (stream_) cudaStreamDestroy(stream_);
    scratch_ = nullptr;
    stream_ = nullptr;
  }

  /// Polls a non-blocking finalize to completion within `seconds`; false on error or timeout.
  bool settle(double seconds) {
    const auto start = Clock::now();
    for (;;) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(setup_, &state) != ncclSuccess) return false;
      if (state == ncclSuccess) return true;
      if (state != ncclInProgress) return false;
      if (std::chrono::duration<double>(Clock::now() - start).count() > seconds) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  std::unique_ptr<Communicator> boot_;  // a duplicate of the bootstrap it was made from: host values travel over it
  int rank_ = 0, size_ = 1, device_ = 0;
  ncclComm_t setup_ = nullptr;  // non-blocking: the init, the split and the final teardown, under deadlines
  ncclComm_t comm_ = nullptr;   // the blocking child every collective runs on
  cudaStream_t stream_ = nullptr;
  void* scratch_ = nullptr;
  std::string broken_;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& mpi_bootstrap) {
  return std::make_unique<NcclCommunicator>(mpi_bootstrap);
}

}  // namespace mlsb::comm
