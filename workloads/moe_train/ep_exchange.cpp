#include "workloads/moe_train/ep_exchange.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace mlsb::moe_train {
namespace {

Clock::duration as_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

unsigned char* bytes(void* p) { return static_cast<unsigned char*>(p); }
const unsigned char* cbytes(const void* p) { return static_cast<const unsigned char*>(p); }

void copy(void* to, const void* from, size_t n) {
  if (n) std::memcpy(to, from, n);
}

// While it lives, a thread calls comm.progress() every 200 us, so what is in flight moves on while this
// rank computes (without it a peer waits for this rank's next poll between experts).
class ProgressThread {
 public:
  explicit ProgressThread(comm::Communicator& comm)
      : thread_([this, &comm] {
          while (!stop_.load(std::memory_order_relaxed)) {
            comm.progress();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
        }) {}
  ~ProgressThread() {
    stop_ = true;
    thread_.join();
  }
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

void EpExchange::wait_until(Clock::time_point t) {
  for (auto now = Clock::now(); now < t; now = Clock::now()) {
    if (comm_.cancelled()) throw comm::CommError("modelled link: cancelled");
    std::this_thread::sleep_for(std::min<Clock::duration>(t - now, std::chrono::milliseconds(10)));
  }
}

void EpExchange::blocking(const std::function<void()>& call, std::span<const size_t> send_bytes,
                          std::span<const size_t> recv_bytes) {
  const auto t0 = Clock::now();
  call();
  wait_until(t0 + as_duration(link_.alltoallv_s(send_bytes, recv_bytes, comm_.rank())));
  const double dt = seconds_since(t0);
  times_.comm_s += dt, times_.blocked_s += dt;
}

void EpExchange::alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                           std::span<const size_t> recv_bytes) {
  blocking([&] { comm_.alltoallv(send, send_bytes, recv, recv_bytes); }, send_bytes, recv_bytes);
}

void EpExchange::alltoall_i64(const int64_t* send, int64_t* recv, size_t count) {
  const std::vector<size_t> block(comm_.size(), count * sizeof(int64_t));
  blocking([&] { comm_.alltoall(send, recv, count, comm::ElemType::I64); }, block, block);
}

void EpExchange::allgather_i64(const int64_t* send, int64_t* recv, size_t count) {
  const std::vector<size_t> block(comm_.size(), count * sizeof(int64_t));
  blocking([&] { comm_.allgather(send, recv, count, comm::ElemType::I64); }, block, block);
}

void EpExchange::timed(const std::function<void()>& body) { blocking(body, {}, {}); }

EpExchange::InFlight EpExchange::start(const void* send, std::span<const size_t> send_bytes, void* recv,
                                       std::span<const size_t> recv_bytes) {
  InFlight op;
  op.start = Clock::now();
  op.req = comm_.ialltoallv(send, send_bytes, recv, recv_bytes);
  op.ready = op.start + as_duration(link_.alltoallv_s(send_bytes, recv_bytes, comm_.rank()));
  op.done = false;
  times_.blocked_s += seconds_since(op.start);
  return op;
}

void EpExchange::poll(InFlight& op) {
  if (op.done) return;
  const auto t0 = Clock::now();
  if (!op.arrived && op.req->test()) op.arrived = true, op.arrived_at = Clock::now();
  const auto now = Clock::now();
  times_.blocked_s += std::chrono::duration<double>(now - t0).count();
  if (op.arrived && now >= op.ready) {
    op.done = true;
    times_.comm_s += std::chrono::duration<double>(std::max(op.arrived_at, op.ready) - op.start).count();
  }
}

void EpExchange::finish(InFlight& op) {
  if (op.done) return;
  const auto t0 = Clock::now();
  if (!op.arrived) {
    op.req->wait();
    op.arrived = true, op.arrived_at = Clock::now();
  }
  wait_until(op.ready);
  op.done = true;
  times_.blocked_s += seconds_since(t0);
  times_.comm_s += std::chrono::duration<double>(std::max(op.arrived_at, op.ready) - op.start).count();
}

void EpExchange::chunked(const ChunkPlan& plan, size_t row_bytes, const void* out,
                         std::span<const int64_t> expert_offsets, void* in, std::span<const int64_t> local_offsets,
                         const std::function<void(int64_t)>& compute, const void* results, void* back,
                         const std::function<void()>& side, int64_t side_slot) {
  const int P = plan.ranks, me = plan.rank;
  const int64_t C = plan.chunks, L = plan.local_experts;
  // first[s * L + j]: where source s's rows of local expert j start within expert j's rows in `in`.
  std::vector<int64_t> first(P * L, 0);
  for (int s = 1; s < P; ++s)
    for (int64_t j = 0; j < L; ++j) first[s * L + j] = first[(s - 1) * L + j] + plan.rows(s - 1, me, j);
  auto returned = [&](int s, int d, int64_t i) { return plan.combine_rows(s, d, i); };
  // Each step has its own region of the staging buffers, so nothing in flight shares memory.
  std::vector<int64_t> d_out(C + 1, 0), d_in(C + 1, 0), b_out(C + 1, 0), b_in(C + 1, 0);
  for (int64_t c = 0; c < C; ++c) {
    d_out[c + 1] = d_out[c], d_in[c + 1] = d_in[c], b_out[c + 1] = b_out[c], b_in[c + 1] = b_in[c];
    for (int r = 0; r < P; ++r) {
      d_out[c + 1] += plan.send_rows(c, r), d_in[c + 1] += plan.recv_rows(c, r);
      b_out[c + 1] += returned(r, me, c), b_in[c + 1] += returned(me, r, c);
    }
  }
  stage_out_.resize(d_out[C] * row_bytes), stage_in_.resize(d_in[C] * row_bytes);
  back_out_.resize(b_out[C] * row_bytes), back_in_.resize(b_in[C] * row_bytes);
  std::vector<size_t> sb(P), rb(P);
  std::vector<InFlight> dispatch(C), combine(C);

  auto start_dispatch = [&](int64_t c) {
    unsigned char* to = stage_out_.data() + d_out[c] * row_bytes;
    for (int d = 0; d < P; ++d) {
      const int64_t n = plan.send_rows(c, d);
      copy(to, cbytes(out) + (expert_offsets[d * L] + plan.send_begin(c, d)) * row_bytes, n * row_bytes);
      to += n * row_bytes, sb[d] = n * row_bytes, rb[d] = plan.recv_rows(c, d) * row_bytes;
    }
    dispatch[c] = start(stage_out_.data() + d_out[c] * row_bytes, sb, stage_in_.data() + d_in[c] * row_bytes, rb);
  };
  auto land_dispatch = [&](int64_t c) {  // positions [a, a + n) of s's block, cut at its experts' bounds
    const unsigned char* from = stage_in_.data() + d_in[c] * row_bytes;
    for (int s = 0; s < P; ++s) {
      const int64_t a = plan.recv_begin(c, s), n = plan.recv_rows(c, s);
      for (int64_t j = 0, at = 0; j < L; at += plan.rows(s, me, j), ++j) {
        const int64_t lo = std::max(a, at), hi = std::min(a + n, at + plan.rows(s, me, j));
        if (lo < hi)
          copy(bytes(in) + (local_offsets[j] + first[s * L + j] + lo - at) * row_bytes, from + (lo - a) * row_bytes,
               (hi - lo) * row_bytes);
      }
      from += n * row_bytes;
    }
  };
  auto start_combine = [&](int64_t i) {
    unsigned char* to = back_out_.data() + b_out[i] * row_bytes;
    for (int s = 0; s < P; ++s) {
      for (int64_t j = plan.first_expert(me, i); j < plan.first_expert(me, i + 1); ++j) {
        const int64_t n = plan.rows(s, me, j);
        copy(to, cbytes(results) + (local_offsets[j] + first[s * L + j]) * row_bytes, n * row_bytes);
        to += n * row_bytes;
      }
      sb[s] = returned(s, me, i) * row_bytes, rb[s] = returned(me, s, i) * row_bytes;
    }
    combine[i] = start(back_out_.data() + b_out[i] * row_bytes, sb, back_in_.data() + b_in[i] * row_bytes, rb);
  };
  auto land_combine = [&](int64_t i) {  // d's experts of step i are contiguous in `back`
    const unsigned char* from = back_in_.data() + b_in[i] * row_bytes;
    for (int d = 0; d < P; ++d) {
      const int64_t n = returned(me, d, i);
      copy(bytes(back) + expert_offsets[d * L + plan.first_expert(d, i)] * row_bytes, from, n * row_bytes);
      from += n * row_bytes;
    }
  };

  int64_t waits = 0;
  auto wait = [&](InFlight& op) {
    if (waits++ == side_slot) side();
    finish(op);
  };

  const ProgressThread progress(comm_);
  start_dispatch(0);
  for (int64_t i = 0; i < C; ++i) {
    if (i + 1 < C) start_dispatch(i + 1);
    wait(dispatch[i]);
    land_dispatch(i);
    for (int64_t j = plan.first_expert(me, i); j < plan.first_expert(me, i + 1); ++j) {
      compute(j);
      if (i + 1 < C) poll(dispatch[i + 1]);
      if (i > 0) poll(combine[i - 1]);
    }
    start_combine(i);
    if (i > 0) {
      wait(combine[i - 1]);
      land_combine(i - 1);
    }
  }
  wait(combine[C - 1]);
  land_combine(C - 1);
  if (side_slot < 0 || side_slot >= waits) side();
}

}  // namespace mlsb::moe_train
