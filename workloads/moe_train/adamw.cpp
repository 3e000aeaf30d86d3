#include "workloads/moe_train/adamw.hpp"

#include <cmath>
#include <stdexcept>

#include "util/parallel.hpp"

namespace mlsb::moe_train {

template <typename T>
void AdamW<T>::add(std::span<T> param, std::span<const T> grad) {
  if (param.size() != grad.size()) throw std::invalid_argument("AdamW::add: param and grad sizes differ");
  slots_.push_back({param, grad, std::vector<T>(param.size(), T(0)), std::vector<T>(param.size(), T(0))});
}

template <typename T>
int64_t AdamW<T>::elements() const {
  int64_t n = 0;
  for (const auto& s : slots_) n += static_cast<int64_t>(s.p.size());
  return n;
}

template <typename T>
void AdamW<T>::step(int threads) {
  ++t_;
  const double bc1 = 1 - std::pow(c_.beta1, static_cast<double>(t_));
  const double bc2 = 1 - std::pow(c_.beta2, static_cast<double>(t_));
  const T b1 = T(c_.beta1), b2 = T(c_.beta2), lr = T(c_.lr), wd = T(c_.weight_decay), eps = T(c_.eps);
  const T ibc1 = T(1 / bc1), ibc2 = T(1 / bc2);
  constexpr int64_t chunk = 1 << 15;
  for (auto& s : slots_) {
    const int64_t n = static_cast<int64_t>(s.p.size());
    parallel_for_ranges(n, chunk, threads, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T g = s.g[i];
        s.m[i] = b1 * s.m[i] + (T(1) - b1) * g;
        s.v[i] = b2 * s.v[i] + (T(1) - b2) * g * g;
        s.p[i] -= lr * (s.m[i] * ibc1 / (std::sqrt(s.v[i] * ibc2) + eps) + wd * s.p[i]);
      }
    });
  }
}

template class AdamW<float>;
template class AdamW<double>;

}  // namespace mlsb::moe_train
