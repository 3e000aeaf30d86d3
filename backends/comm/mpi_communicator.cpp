#include "backends/comm/mpi_communicator.hpp"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/comm/mpi_env.hpp"
#include "backends/comm/reduce.hpp"

namespace mlsb::comm {
namespace {

std::atomic<size_t> g_message_limit{size_t{1} << 30};
constexpr int kTag = 71;  // point-to-point traffic (sendrecv and the split all-to-all paths)

std::string mpi_error(int rc) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(buf, static_cast<size_t>(len));
}

MPI_Datatype mpi_type(ElemType t) {
  switch (t) {
    case ElemType::U8: return MPI_UINT8_T;
    case ElemType::I32: return MPI_INT32_T;
    case ElemType::I64: return MPI_INT64_T;
    case ElemType::F32: return MPI_FLOAT;
    case ElemType::F64: return MPI_DOUBLE;
    case ElemType::F16:
    case ElemType::BF16: return MPI_UINT16_T;  // reduced by the user-defined ops below
  }
  throw CommError("mpi: unknown element type");
}

template <ElemType T, ReduceOp O>
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_into(inout, in, static_cast<size_t>(*len), T, O);
}

MPI_Op mpi_op(ElemType t, ReduceOp op) {
  if (t != ElemType::F16 && t != ElemType::BF16) {
    switch (op) {
      case ReduceOp::Sum: return MPI_SUM;
      case ReduceOp::Max: return MPI_MAX;
      case ReduceOp::Min: return MPI_MIN;
    }
  }
  static MPI_Op ops[2][3];  // [bf16, f16][sum, max, min]; freed by MPI_Finalize
  static std::once_flag once;
  std::call_once(once, [] {
    MPI_Op_create(half_op<ElemType::BF16, ReduceOp::Sum>, 1, &ops[0][0]);
    MPI_Op_create(half_op<ElemType::BF16, ReduceOp::Max>, 1, &ops[0][1]);
    MPI_Op_create(half_op<ElemType::BF16, ReduceOp::Min>, 1, &ops[0][2]);
    MPI_Op_create(half_op<ElemType::F16, ReduceOp::Sum>, 1, &ops[1][0]);
    MPI_Op_create(half_op<ElemType::F16, ReduceOp::Max>, 1, &ops[1][1]);
    MPI_Op_create(half_op<ElemType::F16, ReduceOp::Min>, 1, &ops[1][2]);
  });
  return ops[t == ElemType::F16 ? 1 : 0][static_cast<int>(op)];
}

const unsigned char* cbytes(const void* p) { return static_cast<const unsigned char*>(p); }
unsigned char* bytes(void* p) { return static_cast<unsigned char*>(p); }

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && !finalized) MPI_Comm_free(&comm_);  // deferred by MPI while operations are pending
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void barrier() override {
    Requests q(*this, "barrier");
    q.check(MPI_Ibarrier(comm_, q.next()));
    q.wait();
  }

  void allreduce(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) override {
    Requests q(*this, "allreduce");
    const size_t es = elem_size(type), step = chunk_elems(es);
    const MPI_Datatype dt = mpi_type(type);
    const MPI_Op mop = mpi_op(type, op);
    for (size_t off = 0; off < count; off += step) {
      const int n = static_cast<int>(std::min(step, count - off));
      const void* s = send == recv ? MPI_IN_PLACE : cbytes(send) + off * es;
      q.check(MPI_Iallreduce(s, bytes(recv) + off * es, n, dt, mop, comm_, q.next()));
    }
    q.wait();
  }

  void allgather(const void* send, void* recv, size_t count, ElemType type) override {
    Requests q(*this, "allgather");
    const size_t block = total_bytes(count, type, q.what);
    if (block == 0) return;
    if (block <= limit()) {
      const int n = static_cast<int>(block);
      const void* s = send == bytes(recv) + block * rank_ ? MPI_IN_PLACE : send;
      q.check(MPI_Iallgather(s, n, MPI_BYTE, recv, n, MPI_BYTE, comm_, q.next()));
    } else {
      std::memmove(bytes(recv) + block * rank_, send, block);
      for (int r = 0; r < size_; ++r) bcast_bytes(q, bytes(recv) + block * r, block, r);
    }
    q.wait();
  }

  void allgatherv(const void* send, size_t send_bytes, void* recv, std::span<const size_t> recv_bytes) override {
    Requests q(*this, "allgatherv");
    if (recv_bytes.size() != static_cast<size_t>(size_))
      throw CommError("mpi allgatherv: recv_bytes has " + std::to_string(recv_bytes.size()) + " entries for " +
                      std::to_string(size_) + " ranks");
    if (send_bytes != recv_bytes[rank_])
      throw CommError("mpi allgatherv: send_bytes " + std::to_string(send_bytes) + " != recv_bytes[" +
                      std::to_string(rank_) + "] " + std::to_string(recv_bytes[rank_]));
    std::vector<size_t> displ(recv_bytes.size());
    size_t total = 0;
    for (size_t r = 0; r < recv_bytes.size(); ++r) {
      displ[r] = total;
      total = add(total, recv_bytes[r], q.what);
    }
    if (total == 0) return;
    std::vector<int> counts, offsets;  // alive until the wait: MPI reads them while the call runs
    if (total <= limit()) {
      for (size_t r = 0; r < displ.size(); ++r) {
        counts.push_back(static_cast<int>(recv_bytes[r]));
        offsets.push_back(static_cast<int>(displ[r]));
      }
      const void* s = send == bytes(recv) + displ[rank_] ? MPI_IN_PLACE : send;
      q.check(MPI_Iallgatherv(s, static_cast<int>(send_bytes), MPI_BYTE, recv, counts.data(), offsets.data(),
                              MPI_BYTE, comm_, q.next()));
    } else {
      if (send_bytes) std::memmove(bytes(recv) + displ[rank_], send, send_bytes);
      for (int r = 0; r < size_; ++r) bcast_bytes(q, bytes(recv) + displ[r], recv_bytes[r], r);
    }
    q.wait();
  }

  void reduce_scatter(const void* send, void* recv, size_t count, ElemType type, ReduceOp op) override {
    Requests q(*this, "reduce_scatter");
    if (count && send == recv) throw CommError("mpi reduce_scatter: send and recv must be distinct buffers");
    const size_t es = elem_size(type), step = chunk_elems(es);
    const MPI_Datatype dt = mpi_type(type);
    const MPI_Op mop = mpi_op(type, op);
    total_bytes(count, type, q.what);
    if (count == 0) return;
    if (count <= step) {
      q.check(MPI_Ireduce_scatter_block(send, recv, static_cast<int>(count), dt, mop, comm_, q.next()));
    } else {  // one reduce per destination rank and piece
      for (int r = 0; r < size_; ++r)
        for (size_t off = 0; off < count; off += step) {
          const int n = static_cast<int>(std::min(step, count - off));
          void* out = r == rank_ ? bytes(recv) + off * es : nullptr;
          q.check(MPI_Ireduce(cbytes(send) + (count * r + off) * es, out, n, dt, mop, r, comm_, q.next()));
        }
    }
    q.wait();
  }

  void alltoall(const void* send, void* recv, size_t count, ElemType type) override {
    Requests q(*this, "alltoall");
    if (count && send == recv) throw CommError("mpi alltoall: send and recv must be distinct buffers");
    const size_t block = total_bytes(count, type, q.what);
    if (block == 0) return;
    if (block <= limit()) {
      const int n = static_cast<int>(block);
      q.check(MPI_Ialltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_, q.next()));
    } else {
      for (int r = 0; r < size_; ++r)
        exchange(q, cbytes(send) + block * r, r == rank_ ? 0 : block, r, bytes(recv) + block * r,
                 r == rank_ ? 0 : block, r);
      std::memcpy(bytes(recv) + block * rank_, cbytes(send) + block * rank_, block);
    }
    q.wait();
  }

  void alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                 std::span<const size_t> recv_bytes) override {
    Requests q(*this, "alltoallv");
    std::vector<int> counts;  // alive until the wait
    start_alltoallv(q, counts, send, send_bytes, recv, recv_bytes);
    q.wait();
  }

  std::unique_ptr<CommRequest> ialltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                                          std::span<const size_t> recv_bytes) override {
    auto pending = std::make_unique<Pending>(*this, "ialltoallv");
    start_alltoallv(pending->q, pending->counts, send, send_bytes, recv, recv_bytes);
    return pending;
  }

  void progress() override {
    int flag = 0;  // probing enters Open MPI's progress engine, which advances every pending request
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
  }

  void broadcast(void* buf, size_t count, ElemType type, int root) override {
    Requests q(*this, "broadcast");
    check_peer(root, "root");
    bcast_bytes(q, bytes(buf), total_bytes(count, type, q.what), root);
    q.wait();
  }

  void sendrecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes, int src) override {
    Requests q(*this, "sendrecv");
    check_peer(dst, "dst");
    check_peer(src, "src");
    exchange(q, cbytes(send), send_bytes, dst, bytes(recv), recv_bytes, src);
    q.wait();
  }

  std::unique_ptr<Communicator> make_duplicate() override {
    Requests q(*this, "duplicate");
    MPI_Comm copy = MPI_COMM_NULL;
    q.check(MPI_Comm_idup(comm_, &copy, q.next()));
    q.wait();
    return std::make_unique<MpiCommunicator>(copy, true);
  }

  std::unique_ptr<Communicator> make_split(int color, int key) override {
    // MPI_Comm_split blocks; every rank of a group calls it at the same point, so it cannot wait for long.
    if (!broken_.empty()) throw CommError("mpi split: communicator unusable after an earlier failure (" + broken_ + ")");
    MPI_Comm part = MPI_COMM_NULL;
    if (const int rc = MPI_Comm_split(comm_, color, key, &part); rc != MPI_SUCCESS)
      throw CommError("mpi split: MPI_Comm_split failed (" + std::to_string(rc) + ")");
    return std::make_unique<MpiCommunicator>(part, true);
  }

 private:
  // The requests of one collective call, completed together by wait() under the deadline.
  struct Requests {
    Requests(MpiCommunicator& c, const char* name) : comm(c), what(name) {
      if (!comm.broken_.empty())
        throw CommError("mpi " + std::string(what) + ": communicator unusable after an earlier failure (" +
                        comm.broken_ + ")");
    }
    // The handle is written during the MPI call that receives this pointer, so growth afterwards is harmless.
    MPI_Request* next() { return &reqs.emplace_back(MPI_REQUEST_NULL); }
    void check(int rc) {
      if (rc != MPI_SUCCESS) fail(mpi_error(rc));
    }
    [[noreturn]] void fail(const std::string& why) {
      settle();
      comm.broken_ = std::string(what) + ": " + why;
      throw CommError("mpi " + std::string(what) + ": " + why);
    }
    bool test();  // one MPI_Testall: true once every request completed; fail() on an error
    void wait();
    void settle();

    MpiCommunicator& comm;
    const char* what;
    std::vector<MPI_Request> reqs;  // MPI_REQUEST_NULL once complete
    std::vector<MPI_Status> statuses;
  };

  // A non-blocking collective: its requests and the counts MPI reads until they complete.
  struct Pending final : CommRequest {
    Pending(MpiCommunicator& c, const char* name) : q(c, name) {}
    ~Pending() override {
      if (done) return;
      if (q.comm.broken_.empty()) q.settle();  // once broken, an earlier call has waited its settle time already
      if (std::any_of(q.reqs.begin(), q.reqs.end(), [](MPI_Request r) { return r != MPI_REQUEST_NULL; }))
        q.comm.broken_ = std::string(q.what) + ": abandoned while in flight";
    }
    bool test() override { return done = done || q.test(); }
    void wait() override {
      if (!done) q.wait();
      done = true;
    }
    Requests q;
    std::vector<int> counts;
    bool done = false;
  };

  // Posts an alltoallv's requests into q; `counts` keeps MPI's int counts and displacements alive.
  void start_alltoallv(Requests& q, std::vector<int>& counts, const void* send, std::span<const size_t> send_bytes,
                       void* recv, std::span<const size_t> recv_bytes) {
    const auto n = static_cast<size_t>(size_);
    if (send_bytes.size() != n || recv_bytes.size() != n)
      throw CommError("mpi " + std::string(q.what) + ": send_bytes and recv_bytes need " + std::to_string(n) +
                      " entries, got " + std::to_string(send_bytes.size()) + " and " +
                      std::to_string(recv_bytes.size()));
    std::vector<size_t> sdispl(n), rdispl(n);
    size_t stotal = 0, rtotal = 0;
    for (size_t r = 0; r < n; ++r) {
      sdispl[r] = stotal;
      rdispl[r] = rtotal;
      stotal = add(stotal, send_bytes[r], q.what);
      rtotal = add(rtotal, recv_bytes[r], q.what);
    }
    if (stotal && send == recv)
      throw CommError("mpi " + std::string(q.what) + ": send and recv must be distinct buffers");
    if (std::max(stotal, rtotal) <= limit()) {
      counts.resize(4 * n);  // send counts, send displacements, recv counts, recv displacements
      int* sc = counts.data();
      int *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
      for (size_t r = 0; r < n; ++r) {
        sc[r] = static_cast<int>(send_bytes[r]), sd[r] = static_cast<int>(sdispl[r]);
        rc[r] = static_cast<int>(recv_bytes[r]), rd[r] = static_cast<int>(rdispl[r]);
      }
      q.check(MPI_Ialltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, comm_, q.next()));
    } else {
      if (send_bytes[rank_] != recv_bytes[rank_])
        throw CommError("mpi " + std::string(q.what) + ": this rank sends itself " + std::to_string(send_bytes[rank_]) +
                        " bytes but expects " + std::to_string(recv_bytes[rank_]));
      for (int r = 0; r < size_; ++r)
        if (r != rank_)
          exchange(q, cbytes(send) + sdispl[r], send_bytes[r], r, bytes(recv) + rdispl[r], recv_bytes[r], r);
      if (send_bytes[rank_]) std::memcpy(bytes(recv) + rdispl[rank_], cbytes(send) + sdispl[rank_], send_bytes[rank_]);
    }
  }

  static size_t limit() { return g_message_limit.load(std::memory_order_relaxed); }
  static size_t chunk_elems(size_t es) { return std::max<size_t>(1, limit() / es); }
  static size_t total_bytes(size_t count, ElemType type, const char* what) {
    const size_t es = elem_size(type);
    if (count > SIZE_MAX / es) throw CommError("mpi " + std::string(what) + ": element count overflows");
    return count * es;
  }
  static size_t add(size_t a, size_t b, const char* what) {
    if (b > SIZE_MAX - a) throw CommError("mpi " + std::string(what) + ": byte counts overflow");
    return a + b;
  }
  void check_peer(int r, const char* role) const {
    if (r < 0 || r >= size_)
      throw CommError("mpi: " + std::string(role) + " rank " + std::to_string(r) + " is not in 0.." +
                      std::to_string(size_ - 1));
  }
  void bcast_bytes(Requests& q, unsigned char* buf, size_t n, int root) {
    for (size_t off = 0; off < n; off += limit()) {
      const int len = static_cast<int>(std::min(limit(), n - off));
      q.check(MPI_Ibcast(buf + off, len, MPI_BYTE, root, comm_, q.next()));
    }
  }
  // Receives before sending (so a ring of exchanges cannot deadlock); pieces keep their order since
  // MPI does not reorder messages of one tag between two ranks.
  void exchange(Requests& q, const unsigned char* send, size_t send_n, int dst, unsigned char* recv, size_t recv_n,
                int src) {
    for (size_t off = 0; off < recv_n; off += limit())
      q.check(MPI_Irecv(recv + off, static_cast<int>(std::min(limit(), recv_n - off)), MPI_BYTE, src, kTag, comm_,
                        q.next()));
    for (size_t off = 0; off < send_n; off += limit())
      q.check(MPI_Isend(send + off, static_cast<int>(std::min(limit(), send_n - off)), MPI_BYTE, dst, kTag, comm_,
                        q.next()));
  }

  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0, size_ = 1;
  std::string broken_;  // why the communicator refuses calls; empty while usable
};

bool MpiCommunicator::Requests::test() {
  if (reqs.empty()) return true;
  statuses.resize(reqs.size());
  int done = 0;
  const int rc = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, statuses.data());
  if (rc == MPI_ERR_IN_STATUS) {
    for (const auto& s : statuses)
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) fail(mpi_error(s.MPI_ERROR));
    fail(mpi_error(rc));
  }
  if (rc != MPI_SUCCESS) fail(mpi_error(rc));
  return done != 0;
}

void MpiCommunicator::Requests::wait() {
  using Clock = std::chrono::steady_clock;
  if (reqs.empty()) return;
  const auto start = Clock::now();
  for (long polls = 0;; ++polls) {
    if (test()) return;
    if (comm.cancelled()) fail("cancelled");
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (waited > comm.timeout_s_) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "mpi %s: rank %d waited %g s for the other ranks (timeout)", what, comm.rank_,
                    comm.timeout_s_);
      settle();
      comm.broken_ = std::string(what) + ": timed out";
      throw CommTimeout(buf);
    }
    // Spin first (latency), then yield, then sleep briefly so idle ranks leave the cores to others.
    if (polls > 2000) {
      if (waited < 0.01) sched_yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

// A request still active when its collective gives up goes on reading and writing the caller's buffers,
// which the exception frees as it unwinds: this rank's next MPI call (any communicator's) would progress
// it into freed memory, and a peer's single-copy read of it would fail. Peers usually finish the
// operation within moments, so this waits up to the communicator's settle time for the requests to
// complete. (Open MPI cannot cancel nonblocking collectives or sends; requests of a rank that never
// arrives stay pending, and nothing short of ending the job makes those safe.)
void MpiCommunicator::Requests::settle() {
  using Clock = std::chrono::steady_clock;
  if (reqs.empty() || comm.settle_s_ <= 0) return;
  std::vector<MPI_Status> statuses(reqs.size());
  const auto until = Clock::now() + std::chrono::duration<double>(comm.settle_s_);
  while (true) {
    int done = 0;
    const int rc = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, statuses.data());
    if (done || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || Clock::now() > until) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() {
  mpi_env::ensure_initialized();
  MpiCommunicator world(MPI_COMM_WORLD, false);
  return world.make_duplicate();
}

void set_mpi_message_limit(size_t bytes) {
  g_message_limit = std::clamp<size_t>(bytes, 1, static_cast<size_t>(INT_MAX));
}

size_t mpi_message_limit() { return g_message_limit.load(); }

}  // namespace mlsb::comm
