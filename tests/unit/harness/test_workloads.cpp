#include "unit/harness/test_workloads.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "harness/registry.hpp"

namespace mlsb::test {
namespace {

std::atomic<int> g_counter_samples{0};

WorkloadInfo base_info(std::string name) {
  WorkloadInfo info;
  info.name = std::move(name);
  info.description = "runner test workload";
  info.metrics = {{"value", "ms", Better::Lower, "a measured value"}, {"other", "1", Better::Higher, "secondary"}};
  info.primary_metric = "value";
  info.runner.warmup = 1;
  info.runner.min_samples = 3;
  info.runner.max_samples = 5;
  info.runner.min_time_s = 0;
  info.runner.max_time_s = 10;
  info.runner.timeout_s = 30;
  info.runner.min_sample_s = 0;  // one call per sample (the tests that batch set it)
  return info;
}

class Counter : public Workload {
 public:
  WorkloadInfo info() const override {
    auto i = base_info("test_counter");
    i.axes = {{"mode", AxisType::String, {std::string("a")}, "a mode", {"a", "b"}},
              {"size", AxisType::Int, {int64_t{1}}, "a size", {}, 0, 1000}};
    return i;
  }
  void sample(State& s) override {
    ++g_counter_samples;
    auto rng = s.rng(static_cast<uint64_t>(s.sample_index() + 100));
    s.record("value", static_cast<double>(s.get_int("size")) + static_cast<double>(rng() % 1000) * 1e-6);
  }
};

class Fail : public Workload {
 public:
  WorkloadInfo info() const override { return base_info("test_fail"); }
  void sample(State& s) override { s.record("value", 1); }
  void verify(State& s) override { s.fail("wrong answer: 41 != 42"); }
};

class Skip : public Workload {
 public:
  WorkloadInfo info() const override { return base_info("test_skip"); }
  void setup(State& s) override { s.skip("backend absent"); }
  void sample(State&) override {}
};

class Throw : public Workload {
 public:
  WorkloadInfo info() const override { return base_info("test_throw"); }
  void sample(State&) override { throw std::runtime_error("boom"); }
};

class Nan : public Workload {
 public:
  WorkloadInfo info() const override { return base_info("test_nan"); }
  void sample(State& s) override { s.record("value", std::nan("")); }
};

class NoPrimary : public Workload {
 public:
  WorkloadInfo info() const override { return base_info("test_noprimary"); }
  void sample(State& s) override { s.record("other", 1); }
};

WorkloadInfo sleep_info(std::string name) {
  auto i = base_info(std::move(name));
  i.axes = {{"ms", AxisType::Int, {int64_t{10}}, "sleep per sample", {}, 0, {}}};
  return i;
}

class Sleep : public Workload {
 public:
  WorkloadInfo info() const override { return sleep_info("test_sleep"); }
  void sample(State& s) override {
    for (int64_t t = 0; t < s.get_int("ms") && !s.cancelled(); t += 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s.record("value", 1);
  }
};

class Hang : public Workload {
 public:
  WorkloadInfo info() const override { return sleep_info("test_hang"); }
  void sample(State& s) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(s.get_int("ms")));
    s.record("value", 1);
  }
};

}  // namespace

int counter_samples() { return g_counter_samples; }

MLSB_REGISTER_WORKLOAD(Counter);
MLSB_REGISTER_WORKLOAD(Fail);
MLSB_REGISTER_WORKLOAD(Skip);
MLSB_REGISTER_WORKLOAD(Throw);
MLSB_REGISTER_WORKLOAD(Nan);
MLSB_REGISTER_WORKLOAD(NoPrimary);
MLSB_REGISTER_WORKLOAD(Sleep);
MLSB_REGISTER_WORKLOAD(Hang);

}  // namespace mlsb::test
