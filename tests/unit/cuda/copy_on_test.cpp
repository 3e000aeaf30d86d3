// Every device copy goes through cuda::copy_on, on the stream of the work that uses the data: a recorder
// stands in for the CUDA runtime (this machine has no GPU) and shows the stream each call gets; the project's
// sources hold no other cudaMemcpy, whose blocking form runs on the legacy stream the project's non-blocking
// streams do not wait for.
#include <gtest/gtest.h>

#ifdef MLSB_HAVE_CUDA
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/copy.hpp"

namespace mlsb::cuda {
namespace {

struct Call {
  std::string op;
  cudaStream_t stream;
  bool operator==(const Call&) const = default;
};

struct Recorder {
  std::vector<Call>* calls;
  cudaError_t copy_error = cudaSuccess;
  cudaError_t copy(void*, const void*, size_t, cudaStream_t s) const {
    calls->push_back({"copy", s});
    return copy_error;
  }
  cudaError_t wait(cudaStream_t s) const {
    calls->push_back({"wait", s});
    return cudaSuccess;
  }
};

const auto kWork = reinterpret_cast<cudaStream_t>(0x40);  // a non-blocking stream, never handed to CUDA

TEST(CopyOn, QueuesOnTheGivenStreamAndWaitsForThatStreamOnly) {
  std::vector<Call> calls;
  char a[8] = {}, b[8] = {};
  EXPECT_EQ(copy_on(kWork, a, b, 8, Landed::Later, "t", Recorder{&calls}), cudaSuccess);
  EXPECT_EQ(calls, (std::vector<Call>{{"copy", kWork}}));
  calls.clear();
  EXPECT_EQ(copy_on(kWork, a, b, 8, Landed::OnReturn, "t", Recorder{&calls}), cudaSuccess);
  EXPECT_EQ(calls, (std::vector<Call>{{"copy", kWork}, {"wait", kWork}}));
}

TEST(CopyOn, RefusesTheDefaultStreamsAndReportsAFailedCopyWithoutWaiting) {
  std::vector<Call> calls;
  char a[8] = {}, b[8] = {};
  for (cudaStream_t s : {cudaStream_t{nullptr}, cudaStreamLegacy, cudaStreamPerThread}) {
    try {
      (void)copy_on(s, a, b, 8, Landed::OnReturn, "header copy", Recorder{&calls});
      ADD_FAILURE() << "a default stream was accepted";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("header copy: a copy on a default stream"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(copy_on(kWork, a, b, 8, Landed::OnReturn, "t", Recorder{&calls, cudaErrorInvalidValue}),
            cudaErrorInvalidValue);
  EXPECT_EQ(calls, (std::vector<Call>{{"copy", kWork}}));
  calls.clear();
  EXPECT_EQ(copy_on(kWork, a, b, 0, Landed::OnReturn, "t", Recorder{&calls}), cudaSuccess);
  EXPECT_TRUE(calls.empty());
}

TEST(CopyOn, IsTheOnlyCopyInTheSources) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const char* dir : {"backends", "workloads", "harness", "app", "tests/gpu"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(MLSB_SOURCE_DIR) / dir)) {
      const auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu") continue;
      if (e.path().filename() == "copy.hpp") continue;
      ++files;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_EQ(text.str().find("cudaMemcpy"), std::string::npos)
          << fs::relative(e.path(), MLSB_SOURCE_DIR).string() << " copies without cuda::copy_on";
    }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace mlsb::cuda
#endif
