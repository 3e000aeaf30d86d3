#include "workloads/moe_train/ep_exchange.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace mlsb::moe_train {
namespace {

unsigned char* bytes(void* p) { return static_cast<unsigned char*>(p); }
const unsigned char* cbytes(const void* p) { return static_cast<const unsigned char*>(p); }

class HostRows final : public RowMemory {
 public:
  unsigned char* stage(int which, size_t bytes) override {
    auto& b = buffers_.at(static_cast<size_t>(which));
    if (b.size() < bytes) b.resize(bytes);
    return b.data();
  }
  void copy(void* to, const void* from, size_t bytes) override {
    if (bytes) std::memcpy(to, from, bytes);
  }
  void ready() override {}
  size_t bytes() const override {
    size_t n = 0;
    for (const auto& b : buffers_) n += b.size();
    return n;
  }

 private:
  std::array<std::vector<unsigned char>, 4> buffers_;
};

}  // namespace

// A thread that calls comm.progress() every 200 us while any all-to-all's transport is in flight (Open MPI moves
// non-blocking collectives only inside MPI calls: without it a peer waits for this rank's next poll),
// and sleeps otherwise.
class EpExchange::ProgressThread {
 public:
  explicit ProgressThread(comm::Communicator& comm)
      : thread_([this, &comm] {
          std::unique_lock lock(mutex_);
          while (true) {
            wake_.wait(lock, [this] { return stop_ || in_flight_ > 0; });
            if (stop_) return;
            lock.unlock();
            comm.progress();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            lock.lock();
          }
        }) {}
  ~ProgressThread() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  void begin() {
    {
      const std::lock_guard lock(mutex_);
      ++in_flight_;
    }
    wake_.notify_one();
  }
  void end() {
    const std::lock_guard lock(mutex_);
    --in_flight_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  int in_flight_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

void EpExchange::EndInFlight::operator()(ProgressThread* p) const { p->end(); }

EpExchange::EpExchange(comm::Communicator& comm, const comm::LinkModel& link, CommTimes& times,
                       std::unique_ptr<RowMemory> memory)
    : comm_(comm), link_(link), times_(times), memory_(memory ? std::move(memory) : std::make_unique<HostRows>()) {}

EpExchange::~EpExchange() = default;

void EpExchange::account_busy() {
  std::sort(busy_.begin(), busy_.end());
  Clock::duration covered{0};
  Clock::time_point to{};
  for (const auto& [a, b] : busy_) {
    if (b <= to) continue;
    covered += b - std::max(a, to);
    to = b;
  }
  times_.comm_s += std::chrono::duration<double>(covered).count();
  busy_.clear();
}

void EpExchange::wait_until(Clock::time_point t) { comm::wait_for_link(comm_, t); }

void EpExchange::blocking(const std::function<void()>& call, std::span<const size_t> send_bytes,
                          std::span<const size_t> recv_bytes) {
  const auto t0 = Clock::now();
  call();
  wait_until(t0 + as_duration(link_.alltoallv_s(send_bytes, recv_bytes, comm_.rank())));
  const auto t1 = Clock::now();
  times_.blocked_s += std::chrono::duration<double>(t1 - t0).count();
  busy(t0, t1);
  account_busy();
}

void EpExchange::alltoallv(const void* send, std::span<const size_t> send_bytes, void* recv,
                           std::span<const size_t> recv_bytes) {
  // One call: all of it is blocked time, the moment between starting and finishing included, so that
  // overlap=none's communication is all exposed on every rank.
  const auto t0 = Clock::now();
  const double blocked = times_.blocked_s;
  InFlight op = start(send, send_bytes, recv, recv_bytes);
  finish(op);
  const auto t1 = Clock::now();
  times_.blocked_s = blocked + std::chrono::duration<double>(t1 - t0).count();
  busy(t0, t1);
  account_busy();
}

void EpExchange::alltoall_i64(const int64_t* send, int64_t* recv, size_t count) {
  const std::vector<size_t> block(comm_.size(), count * sizeof(int64_t));
  blocking([&] { comm_.host_side().alltoall(send, recv, count, comm::ElemType::I64); }, block, block);
}

void EpExchange::allgather_i64(const int64_t* send, int64_t* recv, size_t count) {
  const std::vector<size_t> block(comm_.size(), count * sizeof(int64_t));
  blocking([&] { comm_.host_side().allgather(send, recv, count, comm::ElemType::I64); }, block, block);
}

std::vector<int64_t> EpExchange::counts_to_experts(std::span<const int64_t> counts, int64_t local_experts,
                                                   std::vector<int64_t>* everyone) {
  const int ranks = comm_.size(), rank = comm_.rank();
  const int64_t L = local_experts, E = ranks * L;
  std::vector<int64_t> recv(static_cast<size_t>(ranks * L));
  if (!everyone) {
    alltoall_i64(counts.data(), recv.data(), static_cast<size_t>(L));
    return recv;
  }
  everyone->assign(static_cast<size_t>(ranks * E), 0);
  allgather_i64(counts.data(), everyone->data(), static_cast<size_t>(E));
  for (int s = 0; s < ranks; ++s)
    for (int64_t j = 0; j < L; ++j) recv[s * L + j] = (*everyone)[s * E + rank * L + j];
  return recv;
}

EpLayout EpLayout::make(std::span<const int64_t> counts, std::vector<int64_t> recv_counts, int ranks,
                        int64_t local_experts, size_t row_bytes) {
  const int64_t L = local_experts;
  if (counts.size() != static_cast<size_t>(ranks * L) || recv_counts.size() != counts.size())
    throw std::invalid_argument("EpLayout: counts must hold ranks * local_experts entries");
  EpLayout o;
  o.recv_counts = std::move(recv_counts);
  o.send_bytes.assign(ranks, 0), o.recv_bytes.assign(ranks, 0);
  o.local_offsets.assign(L + 1, 0);
  for (int s = 0; s < ranks; ++s)
    for (int64_t j = 0; j < L; ++j) {
      o.send_bytes[s] += static_cast<size_t>(counts[s * L + j]) * row_bytes;
      o.recv_bytes[s] += static_cast<size_t>(o.recv_counts[s * L + j]) * row_bytes;
      o.local_offsets[j + 1] += o.recv_counts[s * L + j];
    }
  for (int64_t j = 0; j < L; ++j) o.local_offsets[j + 1] += o.local_offsets[j];
  return o;
}

void EpLayout::for_each_block(const std::function<void(int64_t, int64_t, int64_t)>& copy) const {
  const int64_t L = static_cast<int64_t>(local_offsets.size()) - 1;
  const int64_t ranks = L > 0 ? static_cast<int64_t>(recv_counts.size()) / L : 0;
  std::vector<int64_t> at(local_offsets.begin(), local_offsets.end() - 1);
  int64_t wire_row = 0;
  for (int64_t s = 0; s < ranks; ++s)
    for (int64_t j = 0; j < L; ++j) {
      const int64_t n = recv_counts[s * L + j];
      if (n > 0) copy(wire_row, at[j], n);
      at[j] += n, wire_row += n;
    }
}

void EpExchange::timed(const std::function<void()>& body) { blocking(body, {}, {}); }

EpExchange::InFlight EpExchange::start(const void* send, std::span<const size_t> send_bytes, void* recv,
                                       std::span<const size_t> recv_bytes) {
  if (!progress_) progress_ = std::make_unique<ProgressThread>(comm_);
  InFlight op;
  op.start = Clock::now();
  op.req = comm_.ialltoallv(send, send_bytes, recv, recv_bytes);
  progress_->begin();
  op.progressing.reset(progress_.get());
  op.ready = op.start + as_duration(link_.alltoallv_s(send_bytes, recv_bytes, comm_.rank()));
  op.done = false;
  const auto now = Clock::now();
  times_.blocked_s += std::chrono::duration<double>(now - op.start).count();
  busy(op.start, now);
  return op;
}

void EpExchange::arrive(InFlight& op) {
  op.arrived = true, op.arrived_at = Clock::now();
  op.progressing.reset();  // the transport is done: what remains is the modelled link's wait
}

void EpExchange::complete(InFlight& op) {
  op.done = true;
  busy(op.start, std::max(op.arrived_at, op.ready));
}

void EpExchange::poll(InFlight& op) {
  if (op.done) return;
  const auto t0 = Clock::now();
  if (!op.arrived && op.req->test()) arrive(op);
  const auto now = Clock::now();
  times_.blocked_s += std::chrono::duration<double>(now - t0).count();
  busy(t0, now);
  if (op.arrived && now >= op.ready) complete(op);
}

void EpExchange::finish(InFlight& op) {
  if (op.done) return;
  const auto t0 = Clock::now();
  if (!op.arrived) {
    op.req->wait();
    arrive(op);
  }
  wait_until(op.ready);
  const auto now = Clock::now();
  times_.blocked_s += std::chrono::duration<double>(now - t0).count();
  busy(t0, now);
  complete(op);
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
  RowMemory& m = *memory_;
  unsigned char* stage_out = m.stage(0, d_out[C] * row_bytes);
  unsigned char* stage_in = m.stage(1, d_in[C] * row_bytes);
  unsigned char* back_out = m.stage(2, b_out[C] * row_bytes);
  unsigned char* back_in = m.stage(3, b_in[C] * row_bytes);
  std::vector<size_t> sb(P), rb(P);
  std::vector<InFlight> dispatch(C), combine(C);

  auto start_dispatch = [&](int64_t c) {
    unsigned char* to = stage_out + d_out[c] * row_bytes;
    for (int d = 0; d < P; ++d) {
      const int64_t n = plan.send_rows(c, d);
      m.copy(to, cbytes(out) + (expert_offsets[d * L] + plan.send_begin(c, d)) * row_bytes, n * row_bytes);
      to += n * row_bytes, sb[d] = n * row_bytes, rb[d] = plan.recv_rows(c, d) * row_bytes;
    }
    m.ready();
    dispatch[c] = start(stage_out + d_out[c] * row_bytes, sb, stage_in + d_in[c] * row_bytes, rb);
  };
  auto land_dispatch = [&](int64_t c) {  // positions [a, a + n) of s's block, cut at its experts' bounds
    const unsigned char* from = stage_in + d_in[c] * row_bytes;
    for (int s = 0; s < P; ++s) {
      const int64_t a = plan.recv_begin(c, s), n = plan.recv_rows(c, s);
      for (int64_t j = 0, at = 0; j < L; at += plan.rows(s, me, j), ++j) {
        const int64_t lo = std::max(a, at), hi = std::min(a + n, at + plan.rows(s, me, j));
        if (lo < hi)
          m.copy(bytes(in) + (local_offsets[j] + first[s * L + j] + lo - at) * row_bytes, from + (lo - a) * row_bytes,
                 (hi - lo) * row_bytes);
      }
      from += n * row_bytes;
    }
  };
  auto start_combine = [&](int64_t i) {
    unsigned char* to = back_out + b_out[i] * row_bytes;
    for (int s = 0; s < P; ++s) {
      for (int64_t j = plan.first_expert(me, i); j < plan.first_expert(me, i + 1); ++j) {
        const int64_t n = plan.rows(s, me, j);
        m.copy(to, cbytes(results) + (local_offsets[j] + first[s * L + j]) * row_bytes, n * row_bytes);
        to += n * row_bytes;
      }
      sb[s] = returned(s, me, i) * row_bytes, rb[s] = returned(me, s, i) * row_bytes;
    }
    m.ready();
    combine[i] = start(back_out + b_out[i] * row_bytes, sb, back_in + b_in[i] * row_bytes, rb);
  };
  auto land_combine = [&](int64_t i) {  // d's experts of step i are contiguous in `back`
    const unsigned char* from = back_in + b_in[i] * row_bytes;
    for (int d = 0; d < P; ++d) {
      const int64_t n = returned(me, d, i);
      m.copy(bytes(back) + expert_offsets[d * L + plan.first_expert(d, i)] * row_bytes, from, n * row_bytes);
      from += n * row_bytes;
    }
  };

  int64_t waits = 0;
  auto wait = [&](InFlight& op) {
    if (waits++ == side_slot) side();
    finish(op);
  };

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
  account_busy();
}

}  // namespace mlsb::moe_train
