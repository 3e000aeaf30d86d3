#pragma once
// Small workloads registered in the unit-test binary to exercise the runner.
//   test_counter  axes size (int, default 1), mode (a|b); records value = size + jitter from the case rng
//   test_fail     verify() fails             test_skip   setup() skips
//   test_throw    sample() throws            test_nan    records NaN
//   test_noprimary records only a secondary metric
//   test_sleep    axis ms: each sample sleeps ms, checking State::cancelled() every 10 ms
//   test_hang     axis ms: each sample sleeps ms ignoring cancellation
#include "harness/workload.hpp"

namespace mlsb::test {
/// Number of test_counter samples taken in this process (warm-up included).
int counter_samples();
}  // namespace mlsb::test
