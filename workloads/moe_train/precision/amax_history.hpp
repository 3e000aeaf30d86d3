#pragma once
// Delayed scaling's amax history (Transformer Engine's DelayedScaling with amax_compute_algo="max", margin 0):
// a window of the last `length` steps' amaxes of one tensor. The scale a step quantises with comes from the
// steps before it: scale = max / (the largest amax in the window); it starts at 1 and is kept while the window
// holds no positive finite amax. At the end of each step the window rolls: the step's amax (the largest over
// its calls) enters and the oldest leaves.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsb::moe_train::precision {

class AmaxHistory {
 public:
  /// Throws std::invalid_argument naming the axis amax_history when length < 1.
  explicit AmaxHistory(int length) {
    if (length < 1)
      throw std::invalid_argument("amax_history: " + std::to_string(length) + " steps (needs at least 1)");
    window_.assign(static_cast<size_t>(length), 0.0f);
  }
  /// The encode scale of this step (x -> x * scale before rounding).
  float scale() const { return scale_; }
  /// One call's amax within the step (non-finite amaxes are not recorded).
  void record(float amax) {
    if (std::isfinite(amax)) pending_ = std::max(pending_, amax);
  }
  /// End of step: the step's amax enters the window, the oldest leaves; the scale for the next step.
  void roll(float element_max) {
    window_[next_] = pending_;
    next_ = (next_ + 1) % window_.size();
    pending_ = 0;
    const float top = *std::max_element(window_.begin(), window_.end());
    if (top > 0 && std::isfinite(element_max / top)) scale_ = element_max / top;
  }

 private:
  std::vector<float> window_;
  size_t next_ = 0;
  float pending_ = 0, scale_ = 1;
};

}  // namespace mlsb::moe_train::precision
