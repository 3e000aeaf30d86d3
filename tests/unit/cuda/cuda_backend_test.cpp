// The cuda backend on a machine without a GPU (the build machines): availability says why not, the
// device table answers, and the GPU codecs fail with CodecError rather than crashing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/device.hpp"
#include "workloads/compress/gpu_codecs.hpp"

namespace mlsb {
namespace {

TEST(CudaBackend, UnavailableWithAReason) {
  std::string why;
  if (cuda::cuda_available(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
#ifdef MLSB_HAVE_CUDA
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
#else
  EXPECT_EQ(why, "built without CUDA");
#endif
  EXPECT_TRUE(cuda::device_names().empty());
  std::string again;
  EXPECT_FALSE(compress::gpu::available(&again));
  EXPECT_EQ(again, why);
}

TEST(CudaBackend, DeviceTable) {
  const auto h200 = cuda::lookup_device("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->hbm_gbps, 4800);
  EXPECT_EQ(h200->peak_bf16_tflops, 989);
  EXPECT_EQ(h200->peak_fp8_tflops, 1979);
  const auto h100 = cuda::lookup_device("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->hbm_gbps, 3350);
  const auto a100 = cuda::lookup_device("NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->peak_bf16_tflops, 312);
  EXPECT_EQ(a100->peak_fp8_tflops, 0) << "the A100 has no fp8 tensor cores";
  const auto b200 = cuda::lookup_device("NVIDIA B200");
  ASSERT_TRUE(b200);
  EXPECT_EQ(b200->hbm_gbps, 8000);
  // Variants with other peaks are not guessed.
  for (const char* other : {"NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB",
                            "NVIDIA GB200", "NVIDIA A100 80GB PCIe", "NVIDIA GeForce RTX 4090", ""})
    EXPECT_FALSE(cuda::lookup_device(other)) << other;
  // A MIG slice has a share of the GPU's SMs: never the whole GPU's peak.
  for (const char* slice : {"NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA A100-SXM4-80GB MIG 7g.80gb", "NVIDIA H200 MIG 3g.71gb"}) {
    EXPECT_TRUE(cuda::is_mig_slice(slice)) << slice;
    EXPECT_FALSE(cuda::lookup_device(slice)) << slice;
  }
  EXPECT_FALSE(cuda::is_mig_slice("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(cuda::device_table().size(), 4u);
}

TEST(CudaBackend, GpuCodecsThrowCodecErrorWithoutADevice) {
  if (compress::gpu::available()) GTEST_SKIP() << "a GPU is present";
  const std::vector<uint8_t> bytes(64, 0x3C);
  const compress::TensorView in{bytes.data(), 32, compress::DType::BF16};
  for (const char* name : {"exponent", "int8-block", "zstd"}) {
    compress::CodecConfig c;
    c.name = name;
    EXPECT_THROW(compress::gpu::round_trip(c, in), compress::CodecError) << name;
    EXPECT_THROW(compress::gpu::decode(c, bytes, 32, compress::DType::BF16), compress::CodecError) << name;
  }
  EXPECT_TRUE(compress::codec_spec("exponent").gpu);
  EXPECT_TRUE(compress::codec_spec("fp8-e5m2").gpu);
  EXPECT_FALSE(compress::codec_spec("zstd").gpu);
  EXPECT_FALSE(compress::codec_spec("topk").gpu);
}

}  // namespace
}  // namespace mlsb
