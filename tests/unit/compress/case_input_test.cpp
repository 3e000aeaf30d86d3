// A compress case's input derives from the run seed and the data axes only (harness/runner.hpp data_key):
// codecs compared in one run compress the very same tensor.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "workloads/compress/case_setup.hpp"

namespace mlsb::compress {
namespace {

std::vector<uint8_t> input_of(const AxisOverrides& overrides) {
  const WorkloadInfo info = make_workload("compress.codec")->info();
  AxisOverrides o = overrides;
  o["elements"] = {o.count("elements") ? o["elements"].front() : "4096"};
  const Params params = expand_axes(info, o).front();
  State state(info, params, case_seed(1, data_key(info, params)), std::filesystem::temp_directory_path());
  return case_input(state, 0).data;
}

TEST(CompressCaseInput, CodecsOfOneRunCompressTheSameBytes) {
  const auto exponent = input_of({{"codec", {"exponent"}}});
  ASSERT_EQ(exponent.size(), 4096u * 2);  // bf16
  EXPECT_EQ(exponent, input_of({{"codec", {"zstd"}}}));
  EXPECT_EQ(exponent, input_of({{"codec", {"topk"}}, {"density", {"0.1"}}}));
  EXPECT_NE(exponent, input_of({{"codec", {"exponent"}}, {"sigma", {"0.5"}}}));
  EXPECT_NE(exponent, input_of({{"codec", {"exponent"}}, {"distribution", {"uniform"}}}));
}

}  // namespace
}  // namespace mlsb::compress
