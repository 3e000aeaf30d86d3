// cuBLAS is loaded when first used (backends/cuda/cublas_api.hpp), not linked: the programs do not pay its
// start-up, and the loader finds the toolkit's cuBLAS with every entry point, GPU or not.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.hpp"

#ifdef MLSB_HAVE_CUDA
#include "backends/cuda/cublas_api.hpp"
#endif

namespace mlsb {
namespace {

#ifdef MLSB_HAVE_CUDA
TEST(CublasApi, LoadsTheToolkitsCublasWithEveryEntryPointOnce) {
  const cuda::CublasApi& api = cuda::cublas();
  EXPECT_EQ(&api, &cuda::cublas());
  for (const void* fn :
       {reinterpret_cast<const void*>(api.create), reinterpret_cast<const void*>(api.destroy),
        reinterpret_cast<const void*>(api.set_stream), reinterpret_cast<const void*>(api.set_math_mode),
        reinterpret_cast<const void*>(api.set_workspace), reinterpret_cast<const void*>(api.gemm_ex),
        reinterpret_cast<const void*>(api.status_string)})
    EXPECT_NE(fn, nullptr);
  EXPECT_NE(std::string(api.status_string(CUBLAS_STATUS_NOT_INITIALIZED)).find("not initialized"), std::string::npos);
}
#endif

TEST(CublasApi, TheCliDoesNotLinkCublas) {
  const auto r = test::run_shell("readelf -d " + test::shell_quote(test::binary()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NEEDED"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcublas"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mlsb
