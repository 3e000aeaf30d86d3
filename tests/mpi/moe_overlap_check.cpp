// moe_overlap_check: overlap=chunked against overlap=none on real ranks, bit for bit (check_overlap_identical:
// outputs, losses, gradients, counts, drops) for every router and capacity mode, in float and double, with
// chunks from 1 to 64, the shared experts after the pipeline or inside it, and with so few tokens (1 per rank,
// k 1 of 8 experts) that ranks receive no rows and chunks outnumber rows. Prints one line per rank and
// configuration; exit status 0 only when all matched.
#include <array>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
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

}  // namespace

int main() {
  auto comm = mlsb::comm::make_communicator("mpi");
  const int P = comm->size(), r = comm->rank();
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
