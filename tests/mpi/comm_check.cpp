// comm_check: exercises the mpi communicator on the ranks of mpirun and prints one line per check.
//   comm_check            every collective x element type x op on sizes 0, 1, 7, 1000, 1001 (and ialltoallv
//                         against alltoallv), once with the default message limit and once with a 1000-byte
//                         limit (split paths)
//   comm_check mismatch   rank 1 passes another size to expect_same: every rank must get CommError
//   comm_check absent     rank 3 sleeps 30 s before an allreduce: the others must get CommTimeout after
//                         2 s and exit(1) at once (without MPI_Finalize, which would wait for rank 3)
//   comm_check die        rank 2 exits(3) before an allreduce: mpirun must end the job
//   comm_check cancel     rank 0 cancels a 64 MB allreduce that the others join 1 s late, frees its buffer and
//                         goes on: the others' result must be right and every rank's next collectives work
// Exit status 0 only when every check passed on every rank.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "backends/formats/small_floats.hpp"
#include "backends/comm/mpi_communicator.hpp"

using namespace mlsb::comm;
using namespace mlsb::formats;

namespace {

constexpr ElemType kTypes[] = {ElemType::U8, ElemType::I32, ElemType::I64, ElemType::F32,
                               ElemType::F64, ElemType::F16, ElemType::BF16};
constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min};
constexpr size_t kSizes[] = {0, 1, 7, 1000, 1001};

const char* op_name(ReduceOp op) { return op == ReduceOp::Sum ? "sum" : op == ReduceOp::Max ? "max" : "min"; }

// A small integer (exact in every element type, and so are sums of a few ranks) for rank r, index i.
int64_t value(ElemType t, int r, size_t i) {
  const int64_t v = static_cast<int64_t>((r * 7 + i * 3 + i / 5) % 11);
  return t == ElemType::U8 ? v : v - 5;
}

// Element i of a typed buffer, as a double / stored from an integer.
double load(ElemType t, const std::vector<unsigned char>& buf, size_t i) {
  const unsigned char* p = buf.data() + i * elem_size(t);
  switch (t) {
    case ElemType::U8: return *p;
    case ElemType::I32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case ElemType::I64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case ElemType::F32: { float x; std::memcpy(&x, p, 4); return x; }
    case ElemType::F64: { double x; std::memcpy(&x, p, 8); return x; }
    case ElemType::F16:
    case ElemType::BF16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      return t == ElemType::F16 ? fp16_to_f32(x) : bf16_to_f32(x);
    }
  }
  return 0;
}

void store(ElemType t, std::vector<unsigned char>& buf, size_t i, int64_t v) {
  unsigned char* p = buf.data() + i * elem_size(t);
  switch (t) {
    case ElemType::U8: *p = static_cast<uint8_t>(v); break;
    case ElemType::I32: { const auto x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case ElemType::I64: std::memcpy(p, &v, 8); break;
    case ElemType::F32: { const auto x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    case ElemType::F64: { const auto x = static_cast<double>(v); std::memcpy(p, &x, 8); break; }
    case ElemType::F16: { const uint16_t x = f32_to_fp16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case ElemType::BF16: { const uint16_t x = f32_to_bf16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
  }
}

int64_t reduce_expected(ElemType t, ReduceOp op, int ranks, size_t i, size_t offset_of_rank_block) {
  int64_t acc = value(t, 0, i + offset_of_rank_block);
  for (int r = 1; r < ranks; ++r) {
    const int64_t v = value(t, r, i + offset_of_rank_block);
    acc = op == ReduceOp::Sum ? acc + v : op == ReduceOp::Max ? std::max(acc, v) : std::min(acc, v);
  }
  return t == ElemType::U8 ? static_cast<uint8_t>(acc) : acc;
}

class Checker {
 public:
  explicit Checker(Communicator& c) : c_(c) {}

  // Runs one check on every rank; prints its line on rank 0 with the number of failing ranks.
  void check(const std::string& name, const std::function<std::string()>& body) {
    std::string err;
    try {
      err = body();
    } catch (const std::exception& e) {
      err = std::string("exception: ") + e.what();
    }
    if (!err.empty()) std::fprintf(stderr, "rank %d: %s: %s\n", c_.rank(), name.c_str(), err.c_str());
    int32_t bad = err.empty() ? 0 : 1;
    c_.allreduce(&bad, &bad, 1, ElemType::I32, ReduceOp::Sum);
    if (bad) ++failed_;
    if (c_.rank() == 0) std::printf("%s %s%s\n", bad ? "FAIL" : "ok", name.c_str(),
                                    bad ? (" (" + std::to_string(bad) + " ranks)").c_str() : "");
    std::fflush(stdout);
  }
  int failed() const { return failed_; }

 private:
  Communicator& c_;
  int failed_ = 0;
};

std::string mismatch_at(size_t i, double got, double want) {
  return "element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " + std::to_string(want);
}

void check_all(Communicator& c, Checker& k, const std::string& pass) {
  const int n = c.size(), me = c.rank();
  for (const ElemType t : kTypes) {
    const size_t es = elem_size(t);
    const std::string tn(to_string(t));
    for (const ReduceOp op : kOps) {
      k.check(pass + " allreduce " + tn + " " + op_name(op), [&]() -> std::string {
        for (const size_t count : kSizes)
          for (const bool in_place : {false, true}) {
            std::vector<unsigned char> send(count * es), recv(count * es, 0xEE);
            for (size_t i = 0; i < count; ++i) store(t, send, i, value(t, me, i));
            if (in_place) recv = send;
            c.allreduce(in_place ? recv.data() : send.data(), recv.data(), count, t, op);
            for (size_t i = 0; i < count; ++i)
              if (load(t, recv, i) != static_cast<double>(reduce_expected(t, op, n, i, 0)))
                return "count " + std::to_string(count) + ": " +
                       mismatch_at(i, load(t, recv, i), static_cast<double>(reduce_expected(t, op, n, i, 0)));
          }
        return "";
      });
      k.check(pass + " reduce_scatter " + tn + " " + op_name(op), [&]() -> std::string {
        for (const size_t count : kSizes) {
          std::vector<unsigned char> send(count * n * es), recv(count * es, 0xEE);
          for (size_t i = 0; i < count * n; ++i) store(t, send, i, value(t, me, i));
          c.reduce_scatter(send.data(), recv.data(), count, t, op);
          for (size_t i = 0; i < count; ++i) {
            const double want = static_cast<double>(reduce_expected(t, op, n, i, count * me));
            if (load(t, recv, i) != want) return "count " + std::to_string(count) + ": " + mismatch_at(i, load(t, recv, i), want);
          }
        }
        return "";
      });
    }
    k.check(pass + " reduce_scatter_v " + tn, [&]() -> std::string {
      // Unequal blocks, rank 1's empty: rank r's block has count + r elements.
      for (const size_t count : kSizes) {
        std::vector<size_t> counts(static_cast<size_t>(n));
        size_t total = 0, mine_at = 0;
        for (int r = 0; r < n; ++r) {
          counts[static_cast<size_t>(r)] = r == 1 ? 0 : count + static_cast<size_t>(r);
          if (r == me) mine_at = total;
          total += counts[static_cast<size_t>(r)];
        }
        const size_t mine = counts[static_cast<size_t>(me)];
        std::vector<unsigned char> send(total * es), recv(mine * es, 0xEE);
        for (size_t i = 0; i < total; ++i) store(t, send, i, value(t, me, i));
        c.reduce_scatter_v(send.data(), recv.data(), counts, t, ReduceOp::Sum);
        for (size_t i = 0; i < mine; ++i) {
          const double want = static_cast<double>(reduce_expected(t, ReduceOp::Sum, n, i, mine_at));
          if (load(t, recv, i) != want) return "count " + std::to_string(count) + ": " + mismatch_at(i, load(t, recv, i), want);
        }
      }
      return "";
    });
    k.check(pass + " allgather+alltoall+broadcast " + tn, [&]() -> std::string {
      for (const size_t count : kSizes) {
        std::vector<unsigned char> send(count * n * es), recv(count * n * es, 0xEE);
        for (size_t i = 0; i < count; ++i) store(t, send, i, value(t, me, i));
        c.allgather(send.data(), recv.data(), count, t);
        for (int r = 0; r < n; ++r)
          for (size_t i = 0; i < count; ++i)
            if (load(t, recv, r * count + i) != static_cast<double>(value(t, r, i)))
              return "allgather count " + std::to_string(count) + " block " + std::to_string(r) + ": " +
                     mismatch_at(i, load(t, recv, r * count + i), static_cast<double>(value(t, r, i)));
        // alltoall: block j of rank r holds value(t, r, j * 1000 + i)
        for (int j = 0; j < n; ++j)
          for (size_t i = 0; i < count; ++i) store(t, send, j * count + i, value(t, me, j * 1000 + i));
        std::fill(recv.begin(), recv.end(), 0xEE);
        c.alltoall(send.data(), recv.data(), count, t);
        for (int r = 0; r < n; ++r)
          for (size_t i = 0; i < count; ++i)
            if (load(t, recv, r * count + i) != static_cast<double>(value(t, r, me * 1000 + i)))
              return "alltoall count " + std::to_string(count) + " from rank " + std::to_string(r) + ": " +
                     mismatch_at(i, load(t, recv, r * count + i), static_cast<double>(value(t, r, me * 1000 + i)));
        for (const int root : {0, n - 1}) {
          std::vector<unsigned char> buf(count * es, 0xEE);
          if (me == root)
            for (size_t i = 0; i < count; ++i) store(t, buf, i, value(t, root, i));
          c.broadcast(buf.data(), count, t, root);
          for (size_t i = 0; i < count; ++i)
            if (load(t, buf, i) != static_cast<double>(value(t, root, i)))
              return "broadcast root " + std::to_string(root) + ": " +
                     mismatch_at(i, load(t, buf, i), static_cast<double>(value(t, root, i)));
        }
      }
      return "";
    });
  }

  // Byte-sized variants: rank r contributes (r * 37 + base) % 1003 bytes (0 for rank 0 when base = 0).
  const auto pattern = [](int r, size_t i) { return static_cast<unsigned char>((r * 131 + i * 7) & 0xff); };
  k.check(pass + " allgatherv", [&]() -> std::string {
    for (const size_t base : {size_t{0}, size_t{1}, size_t{999}}) {
      std::vector<size_t> counts(n);
      size_t total = 0;
      for (int r = 0; r < n; ++r) total += counts[r] = (r * 37 + base) % 1003;
      std::vector<unsigned char> send(counts[me]), recv(total, 0xEE);
      for (size_t i = 0; i < send.size(); ++i) send[i] = pattern(me, i);
      c.allgatherv(send.data(), send.size(), recv.data(), counts);
      size_t off = 0;
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < counts[r]; ++i, ++off)
          if (recv[off] != pattern(r, i)) return "base " + std::to_string(base) + ": byte " + std::to_string(off);
    }
    return "";
  });
  k.check(pass + " alltoallv", [&]() -> std::string {
    const auto bytes_from_to = [](int src, int dst) { return static_cast<size_t>((src * 5 + dst * 3) % 7) * 301; };
    std::vector<size_t> sb(n), rb(n);
    size_t st = 0, rt = 0;
    for (int r = 0; r < n; ++r) {
      st += sb[r] = bytes_from_to(me, r);
      rt += rb[r] = bytes_from_to(r, me);
    }
    std::vector<unsigned char> send(st), recv(rt, 0xEE);
    size_t off = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < sb[r]; ++i) send[off++] = pattern(me * 16 + r, i);
    c.alltoallv(send.data(), sb, recv.data(), rb);
    off = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < rb[r]; ++i, ++off)
        if (recv[off] != pattern(r * 16 + me, i)) return "byte " + std::to_string(off) + " from rank " + std::to_string(r);
    return "";
  });
  k.check(pass + " ialltoallv", [&]() -> std::string {
    // Two in flight at once, as the chunked MoE exchange keeps them: uneven byte counts with zeros (and, at
    // a 1000-byte limit, above it: the point-to-point path that carries counts beyond INT_MAX), and none
    // at all. Each must equal the blocking alltoallv of the same counts.
    const auto bytes_from_to = [](int src, int dst) { return static_cast<size_t>((src * 3 + dst * 5 + 1) % 4) * 419; };
    std::vector<size_t> sb(n), rb(n), none(n, 0);
    size_t st = 0, rt = 0;
    for (int r = 0; r < n; ++r) {
      st += sb[r] = bytes_from_to(me, r);
      rt += rb[r] = bytes_from_to(r, me);
    }
    std::vector<unsigned char> send(st), want(rt, 0xEE), got(rt, 0xEE);
    for (size_t i = 0; i < st; ++i) send[i] = pattern(me, i);
    c.alltoallv(send.data(), sb, want.data(), rb);
    unsigned char nothing_in = 0, nothing_out = 0x5A;
    auto uneven = c.ialltoallv(send.data(), sb, got.data(), rb);
    auto empty = c.ialltoallv(&nothing_out, none, &nothing_in, none);
    empty->wait();  // the later one first: completion order is free
    uneven->wait();
    if (got != want) return "the uneven ialltoallv differs from the blocking alltoallv";
    if (nothing_in != 0) return "the empty ialltoallv wrote its receive buffer";
    return "";
  });
  k.check(pass + " sendrecv ring, barrier, expect_same, max_over_ranks, duplicate", [&]() -> std::string {
    for (const size_t bytes : {size_t{0}, size_t{1}, size_t{4097}}) {
      std::vector<unsigned char> send(bytes), recv(bytes, 0xEE);
      for (size_t i = 0; i < bytes; ++i) send[i] = pattern(me, i);
      const int prev = (me + n - 1) % n;
      c.sendrecv(send.data(), bytes, (me + 1) % n, recv.data(), bytes, prev);
      for (size_t i = 0; i < bytes; ++i)
        if (recv[i] != pattern(prev, i)) return "sendrecv byte " + std::to_string(i);
    }
    c.barrier();
    c.expect_same("size", 1000);
    if (c.max_over_ranks(0.5 * me) != 0.5 * (n - 1)) return "max_over_ranks is not the largest rank's value";
    auto d = duplicate(c);
    if (d->rank() != me || d->size() != n) return "duplicate has another rank or size";
    int64_t one = 1;
    d->allreduce(&one, &one, 1, ElemType::I64, ReduceOp::Sum);
    if (one != n) return "allreduce on the duplicate gave " + std::to_string(one);
    return "";
  });
}

[[noreturn]] void quit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip MPI_Finalize: it would wait for a rank that is absent
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "normal";
  auto c = make_communicator("mpi");
  const int me = c->rank();
  if (c->size() < 4 && mode != "normal") {
    std::fprintf(stderr, "comm_check %s needs 4 ranks\n", mode.c_str());
    return 2;
  }
  if (mode == "normal") {
    c->set_timeout(30);
    Checker k(*c);
    check_all(*c, k, "[limit default]");
    set_mpi_message_limit(1000);
    check_all(*c, k, "[limit 1000 B]");
    if (me == 0) std::printf("%s: %d failed check(s)\n", k.failed() ? "FAILED" : "PASSED", k.failed());
    return k.failed() ? 1 : 0;
  }
  c->set_timeout(2);
  const auto t0 = std::chrono::steady_clock::now();
  if (mode == "mismatch") {
    try {
      c->expect_same("tensor size", me == 1 ? 1001 : 1000);
      std::printf("rank %d: FAIL no error\n", me);
      return 1;
    } catch (const CommTimeout& e) {
      std::printf("rank %d: FAIL timeout instead of a mismatch: %s\n", me, e.what());
      return 1;
    } catch (const CommError& e) {
      std::printf("rank %d: ok mismatch detected after %.2f s: %s\n", me, seconds_since(t0), e.what());
      return 0;
    }
  }
  if (mode == "absent" || mode == "die") {
    const bool away = mode == "absent" ? me == 3 : me == 2;
    if (away && mode == "die") quit(3);
    if (away) std::this_thread::sleep_for(std::chrono::seconds(30));
    int64_t x = me;
    try {
      c->allreduce(&x, &x, 1, ElemType::I64, ReduceOp::Sum);
      std::printf("rank %d: allreduce completed (%lld)\n", me, static_cast<long long>(x));
      quit(0);
    } catch (const CommTimeout& e) {
      std::printf("rank %d: ok CommTimeout after %.2f s: %s\n", me, seconds_since(t0), e.what());
    } catch (const CommError& e) {
      std::printf("rank %d: CommError after %.2f s: %s\n", me, seconds_since(t0), e.what());
    }
    // mpirun ends the job at the first rank that exits non-zero: give the peers failing alongside this one
    // the time to say so.
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(mode == "absent" ? 2 : 0));
    quit(1);
  }
  if (mode == "cancel") {
    c->set_timeout(30);
    c->set_settle_time(20);  // far above the peers' 1 s, so a loaded machine cannot outlast it
    auto next = duplicate(*c);  // another communicator: its progress also drives the cancelled requests
    std::atomic<bool> cancel{false};
    c->set_cancel_flag(&cancel);
    constexpr size_t kCount = size_t{16} << 20;
    {
      std::vector<float> x(kCount, static_cast<float>(me + 1));
      std::thread flag;
      if (me == 0)
        flag = std::thread([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          cancel = true;
        });
      else
        std::this_thread::sleep_for(std::chrono::seconds(1));
      std::string outcome = "completed";
      try {
        c->allreduce(x.data(), x.data(), kCount, ElemType::F32, ReduceOp::Sum);
      } catch (const CommError& e) {
        outcome = e.what();
      }
      if (flag.joinable()) flag.join();
      const float want = static_cast<float>(c->size() * (c->size() + 1) / 2);
      if (me != 0 && (outcome != "completed" || x.front() != want || x.back() != want)) {
        std::printf("rank %d: FAIL allreduce %s, got %g (want %g)\n", me, outcome.c_str(), x.back(), want);
        quit(1);
      }
      if (me == 0 && outcome.find("cancelled") == std::string::npos) {
        std::printf("rank 0: FAIL cancelled allreduce: %s\n", outcome.c_str());
        quit(1);
      }
    }  // the buffer is freed here; memory reused next must not be touched by the old requests
    std::vector<float> reuse(kCount, -1.0f);
    int64_t one = 1;
    try {
      next->allreduce(&one, &one, 1, ElemType::I64, ReduceOp::Sum);
      next->barrier();
    } catch (const CommError& e) {
      std::printf("rank %d: FAIL collective after the cancel: %s\n", me, e.what());
      quit(1);
    }
    if (one != c->size() || reuse.front() != -1.0f || reuse.back() != -1.0f) {
      std::printf("rank %d: FAIL after the cancel: allreduce %lld, reused memory %g\n", me,
                  static_cast<long long>(one), reuse.back());
      quit(1);
    }
    std::printf("rank %d: ok after a cancelled allreduce\n", me);
    return 0;
  }
  std::fprintf(stderr, "comm_check: unknown mode '%s' (normal, mismatch, absent, die, cancel)\n", mode.c_str());
  return 2;
}
