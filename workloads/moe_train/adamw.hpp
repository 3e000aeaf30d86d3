#pragma once
// AdamW (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", ICLR 2019; the update of
// torch.optim.AdamW): fp32 master weights and moments.
#include <cstdint>
#include <span>
#include <vector>

namespace mlsb::moe_train {

struct AdamWConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};

/// One optimizer over a fixed list of tensors; step() updates each param from its grad:
///   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr (m/(1-b1^t) / (sqrt(v/(1-b2^t)) + eps) + wd p)
template <typename T>
class AdamW {
 public:
  explicit AdamW(AdamWConfig config) : c_(config) {}
  /// Registers a param/grad pair of equal size (spans must stay valid for the optimizer's life).
  void add(std::span<T> param, std::span<const T> grad);
  /// One update of every registered tensor; `threads` splits the work.
  void step(int threads);
  int64_t steps() const { return t_; }
  /// Total registered elements.
  int64_t elements() const;

 private:
  struct Slot {
    std::span<T> p;
    std::span<const T> g;
    std::vector<T> m, v;
  };
  AdamWConfig c_;
  std::vector<Slot> slots_;
  int64_t t_ = 0;
};

}  // namespace mlsb::moe_train
