// moe_ep_check: expert parallelism against one rank. Every rank builds the same P * T tokens; rank r
// runs its slice through an expert-parallel MoeLayer<double> (experts sharded, all-to-all dispatch) and
// every rank also runs the whole batch through a local layer with all experts. With dropless routing and
// no aux/z loss (both are per-rank means by definition) the two must agree: y and dx of the rank's slice,
// the router gradient (summed over ranks) and the gradients of the rank's own experts. Prints one line per
// rank; exit status 0 only when every rank matched for every router.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"
#include "workloads/moe_train/moe_layer.hpp"

using namespace mlsb::moe_train;

namespace {

double max_rel(const double* a, const double* b, size_t n) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < n; ++i) err = std::max(err, std::abs(a[i] - b[i])), norm = std::max(norm, std::abs(b[i]));
  return err / std::max(norm, 1e-300);
}

}  // namespace

int main() {
  auto comm = mlsb::comm::make_communicator("mpi");
  const int P = comm->size(), r = comm->rank();
  int bad = 0;
  for (RouterKind router : {RouterKind::TopkSoftmax, RouterKind::SoftmaxTopk, RouterKind::Sigmoid}) {
    MoeConfig c;
    c.hidden = 12, c.ffn = 10, c.experts = 2 * P, c.topk = 2, c.router = router, c.shared_experts = 1, c.shared_ffn = 6;
    c.aux_coef = 0, c.z_coef = 0;
    const int64_t T = 37, h = c.hidden;
    std::mt19937_64 rng(9);
    std::normal_distribution<double> nd;
    std::vector<double> x(P * T * h), dy(P * T * h);
    for (auto& v : x) v = nd(rng);
    for (auto& v : dy) v = nd(rng);
    MoeLayer<double> ep(c, comm.get(), 1), full(c, nullptr, 1);
    ep.init(5), full.init(5);
    std::vector<double> y_ep(T * h), dx_ep(T * h), y_full(P * T * h), dx_full(P * T * h);
    ep.forward(x.data() + r * T * h, T, y_ep.data());
    ep.backward(dy.data() + r * T * h, dx_ep.data());
    full.forward(x.data(), P * T, y_full.data());
    full.backward(dy.data(), dx_full.data());
    const int64_t L = c.experts / P, w13 = h * 2 * c.ffn, w2 = c.ffn * h;
    const double e_y = max_rel(y_ep.data(), y_full.data() + r * T * h, T * h);
    const double e_dx = max_rel(dx_ep.data(), dx_full.data() + r * T * h, T * h);
    const double e_router = max_rel(ep.grads().router.data(), full.grads().router.data(), full.grads().router.size());
    const double e_w13 = max_rel(ep.grads().experts.w13.data(), full.grads().experts.w13.data() + r * L * w13, L * w13);
    const double e_w2 = max_rel(ep.grads().experts.w2.data(), full.grads().experts.w2.data() + r * L * w2, L * w2);
    const double e_shared = max_rel(ep.grads().shared.w13.data(), full.grads().shared.w13.data(), full.grads().shared.w13.size());
    const double worst = std::max({e_y, e_dx, e_router, e_w13, e_w2, e_shared});
    const bool ok = worst < 1e-10;
    bad += !ok;
    std::printf("rank %d %s router %s: y %.2e dx %.2e router %.2e w13 %.2e w2 %.2e shared %.2e\n", r,
                ok ? "ok" : "MISMATCH", std::string(to_string(router)).c_str(), e_y, e_dx, e_router, e_w13, e_w2,
                e_shared);
  }
  std::fflush(stdout);
  return bad ? 1 : 0;
}
