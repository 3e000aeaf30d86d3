#pragma once
// A workload whose `mode` axis selects one of several small benchmarks delegates the contract's
// steps to one of these (compress: codec/collective/plan; moe_train: layer/lm).
#include "harness/workload.hpp"

namespace mlsb {

class ModeBench {
 public:
  virtual ~ModeBench() = default;
  virtual void setup(State& state) = 0;
  virtual void sample(State& state) = 0;
  virtual void verify(State&) {}
};

}  // namespace mlsb
