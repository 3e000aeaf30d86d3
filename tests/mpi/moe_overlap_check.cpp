// moe_overlap_check: overlap=chunked against overlap=none on real ranks, bit for bit (check_overlap_identical:
// outputs, losses, gradients, counts, drops) for every router and capacity mode, in float and double, with
// chunks from 1 to 64, the shared experts after the pipeline or inside it, and with so few tokens (1 per rank,
// k 1 of 8 experts) that ranks receive no rows and chunks outnumber rows. Prints one line per rank and
// configuration; exit status 0 only when all matched.
//   moe_overlap_check die     rank 2 exits(3) in the middle of a chunked exchange (computing the expert of its
//                             third of four steps) while its peers have its rows in flight: mpirun must end
//                             the job (or the peers' 2 s collective timeout, whichever comes first)
//   moe_overlap_check absent  rank 2 sleeps 30 s there instead: the others must leave the pipeline with
//                             CommTimeout after 2 s (and the settle time of what is in flight), say so, and
//                             exit(1) 2 s later (so that no peer is ended by mpirun before it has said so)
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "workloads/moe_train/ep_exchange.hpp"
#include "workloads/moe_train/overlap_check.hpp"

using namespace mlsb::moe_train;

namespace {

template <typename T>
std::string check(const MoeConfig& c, mlsb::comm::Communicator& comm, int64_t tokens, int64_t chunks,
                  std::array<int64_t, 2> shared_slot = {-1, -1}) {
  std::mt19937_64 rng(11 + comm.rank());
  std::normal_distribution<double> nd;
  std::vector<T> x(tokens * c.hidden), dy(tokens * c.hidden);
  for (auto& v : x) v = static_cast<T>(nd(rng));
  for (auto& v : dy) v = static_cast<T>(nd(rng) / tokens);
  EpOptions ep;
  ep.overlap = Overlap::Chunked, ep.chunks = chunks, ep.shared_slot = shared_slot;
  return check_overlap_identical<T>(c, comm, 1, ep, 5, x.data(), dy.data(), tokens);
}

[[noreturn]] void quit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip MPI_Finalize: it would wait for the rank that died
}

// One chunked exchange of 4 local experts in 4 steps, 8 rows from every rank to every expert; rank 2 dies
// (or, when not `die`, sleeps 30 s) computing local expert 2 (step 2). Returns only on a rank that did not
// see an error.
void leave_mid_chunk(mlsb::comm::Communicator& comm, bool die) {
  comm.set_timeout(2);
  const int P = comm.size(), me = comm.rank();
  const int64_t L = 4, C = 4, rows = 8;
  const size_t row_bytes = 64;
  const ChunkPlan plan = plan_chunks(std::vector<int64_t>(P * P * L, rows), P, me, L, C);
  std::vector<int64_t> expert_offsets(P * L + 1), local_offsets(L + 1);
  for (int64_t e = 0; e <= P * L; ++e) expert_offsets[e] = e * rows;
  for (int64_t j = 0; j <= L; ++j) local_offsets[j] = j * rows * P;
  std::vector<unsigned char> out(P * L * rows * row_bytes, 1), back(out.size()), in(out.size()), results(out.size());
  CommTimes times;
  EpExchange exchange(comm, {}, times);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    exchange.chunked(
        plan, row_bytes, out.data(), expert_offsets, in.data(), local_offsets,
        [&](int64_t j) {
          if (me != 2 || j != 2) return;
          if (die) quit(3);
          std::this_thread::sleep_for(std::chrono::seconds(30));
        },
        results.data(), back.data(), [] {}, -1);
  } catch (const mlsb::comm::CommError& e) {
    std::printf("rank %d: ok %s after %.2f s: %s\n", me,
                dynamic_cast<const mlsb::comm::CommTimeout*>(&e) ? "CommTimeout" : "CommError",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), e.what());
    // mpirun ends the job at the first rank that exits non-zero: give the peers timing out alongside this
    // one the time to say so.
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    quit(1);
  }
  std::printf("rank %d: FAIL the exchange completed without rank 2\n", me);
}

}  // namespace

int main(int argc, char** argv) {
  auto comm = mlsb::comm::make_communicator("mpi");
  const int P = comm->size(), r = comm->rank();
  if (const std::string mode = argc > 1 ? argv[1] : ""; mode == "die" || mode == "absent") {
    if (P < 3) {
      std::fprintf(stderr, "moe_overlap_check %s needs 3 ranks or more\n", mode.c_str());
      return 2;
    }
    leave_mid_chunk(*comm, mode == "die");
    quit(1);
  }
  int bad = 0;
  struct Capacity {
    double factor;
    DropPolicy drop;
    const char* name;
  };
  const Capacity capacities[] = {{0, DropPolicy::Probs, "dropless"},
                                 {1, DropPolicy::Probs, "cf1-probs"},
                                 {0.5, DropPolicy::Position, "cf0.5-position"}};
  for (RouterKind router : {RouterKind::TopkSoftmax, RouterKind::SoftmaxTopk, RouterKind::Sigmoid})
    for (const Capacity& cap : capacities)
      for (const int64_t tokens : {int64_t{37}, int64_t{1}}) {
        MoeConfig c;
        c.hidden = 12, c.ffn = 10, c.experts = 2 * P, c.topk = tokens == 1 ? 1 : 2, c.router = router;
        c.shared_experts = 1, c.shared_ffn = 6, c.capacity_factor = cap.factor, c.drop = cap.drop;
        std::string why;
        for (const int64_t chunks : {1, 2, 3, 8, 64}) {
          if (why.empty()) why = check<float>(c, *comm, tokens, chunks);
          if (why.empty()) why = check<double>(c, *comm, tokens, chunks);
          // The shared experts inside the pipeline: before the last combine's wait, before the first dispatch's.
          if (why.empty()) why = check<float>(c, *comm, tokens, chunks, {pipeline_waits(chunks) - 1, 0});
        }
        bad += !why.empty();
        std::printf("rank %d %s router %s capacity %s tokens %lld%s%s\n", r, why.empty() ? "ok" : "MISMATCH",
                    std::string(to_string(router)).c_str(), cap.name, static_cast<long long>(tokens),
                    why.empty() ? "" : ": ", why.c_str());
      }
  std::fflush(stdout);
  return bad ? 1 : 0;
}
