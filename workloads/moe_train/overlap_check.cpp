#include "workloads/moe_train/overlap_check.hpp"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/moe_train/gpu_layer.hpp"
#include "workloads/moe_train/moe_layer.hpp"

namespace mlsb::moe_train {
namespace {

template <typename V>
bool same(const V& a, const V& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

// The first difference from overlap=none that one check finds, agreed over the ranks.
class FirstDifference {
 public:
  void expect(bool same, const std::string& what) {
    if (!same && diff_.empty()) diff_ = what + " differs from overlap=none";
  }
  // "" when no rank found a difference, else "`prefix`: " and this rank's (or that another rank's result differs).
  std::string agreed(comm::Communicator& comm, const std::string& prefix) {
    if (comm.max_over_ranks(diff_.empty() ? 0 : 1) > 0 && diff_.empty()) diff_ = "another rank's result differs";
    return diff_.empty() ? diff_ : prefix + ": " + diff_;
  }

 private:
  std::string diff_;
};

}  // namespace

template <typename T>
std::string check_overlap_identical(const MoeConfig& config, comm::Communicator& comm, int threads, const EpOptions& ep,
                                    uint64_t seed, const T* x, const T* dy, int64_t tokens) {
  EpOptions quiet = ep;
  quiet.link = {};
  MoeLayer<T> none(config, &comm, threads), chunked(config, &comm, threads, quiet);
  const size_t n = static_cast<size_t>(tokens * config.hidden);
  std::vector<T> y[2] = {std::vector<T>(n), std::vector<T>(n)}, dx[2] = {std::vector<T>(n), std::vector<T>(n)};
  MoeLayer<T>* layers[2] = {&none, &chunked};
  for (int i = 0; i < 2; ++i) {
    layers[i]->init(seed);
    layers[i]->forward(x, tokens, y[i].data());
    layers[i]->backward(dy, dx[i].data());
  }
  FirstDifference d;
  d.expect(same(y[0], y[1]), "output y");
  d.expect(same(dx[0], dx[1]), "input gradient dx");
  const T losses[2][2] = {{none.aux_loss(), none.z_loss()}, {chunked.aux_loss(), chunked.z_loss()}};
  d.expect(std::memcmp(losses[0], losses[1], sizeof losses[0]) == 0, "aux or z loss");
  d.expect(same(none.grads().router, chunked.grads().router), "router gradient");
  d.expect(same(none.grads().experts.w13, chunked.grads().experts.w13), "expert w13 gradient");
  d.expect(same(none.grads().experts.w2, chunked.grads().experts.w2), "expert w2 gradient");
  d.expect(same(none.grads().shared.w13, chunked.grads().shared.w13), "shared expert w13 gradient");
  d.expect(same(none.grads().shared.w2, chunked.grads().shared.w2), "shared expert w2 gradient");
  d.expect(same(none.plan().tokens_per_expert(), chunked.plan().tokens_per_expert()), "rows per expert");
  d.expect(same(none.local_expert_rows(), chunked.local_expert_rows()), "rows per local expert");
  d.expect(none.plan().dropped == chunked.plan().dropped, "dropped assignments");
  return d.agreed(comm, "overlap=chunked, chunks=" + std::to_string(ep.chunks));
}

template std::string check_overlap_identical(const MoeConfig&, comm::Communicator&, int, const EpOptions&, uint64_t,
                                             const float*, const float*, int64_t);
template std::string check_overlap_identical(const MoeConfig&, comm::Communicator&, int, const EpOptions&, uint64_t,
                                             const double*, const double*, int64_t);

std::string check_gpu_overlap_identical(const MoeConfig& config, comm::Communicator& comm, const EpOptions& ep,
                                        uint64_t seed, const AdamWConfig& optimizer, const std::vector<float>& x,
                                        const std::vector<float>& dy, int64_t tokens,
                                        const precision::PrecisionConfig& precision) {
  EpOptions none, chunked = ep;
  chunked.link = {};
  std::vector<float> y[2];
  GpuStepResult r[2];
  std::vector<float> grads[2][6];
  const char* names[6] = {"x", "router", "w13", "w2", "shared_w13", "shared_w2"};
  for (int i = 0; i < 2; ++i) {
    // Every rank must have its layer before any communicates (one rank out of memory would leave the
    // others waiting in the first all-to-all).
    std::unique_ptr<GpuMoeLayer> layer;
    std::string failed;
    try {
      layer = make_gpu_layer(config, tokens, seed, optimizer, &comm, i == 0 ? none : chunked, precision);
    } catch (const std::exception& e) {
      failed = e.what();
    }
    if (comm.max_over_ranks(failed.empty() ? 0 : 1) > 0)
      throw std::runtime_error("cuda overlap check: " +
                               (failed.empty() ? "another rank could not make its layer" : failed));
    layer->set_input(x, dy);
    y[i] = layer->forward_output();
    r[i] = layer->step();
    for (int g = 0; g < 6; ++g) grads[i][g] = layer->gradient(names[g]);
  }
  FirstDifference d;
  d.expect(same(y[0], y[1]), "output y");
  for (int g = 0; g < 6; ++g) d.expect(same(grads[0][g], grads[1][g]), std::string("gradient ") + names[g]);
  d.expect(r[0].aux_loss == r[1].aux_loss && r[0].z_loss == r[1].z_loss, "aux or z loss");
  d.expect(r[0].objective == r[1].objective, "objective");
  d.expect(same(r[0].tokens_per_expert, r[1].tokens_per_expert) && r[0].dropped == r[1].dropped,
           "rows per expert or dropped assignments");
  return d.agreed(comm, "cuda, overlap=chunked, chunks=" + std::to_string(ep.chunks));
}

}  // namespace mlsb::moe_train
