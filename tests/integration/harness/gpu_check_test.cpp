// scripts/gpu-check fails loudly when a GPU is there but nothing ran on it: the real script, copied into a
// temp checkout with a stand-in .gpu-bundle (binaries that answer as a build without a usable GPU would) and
// a stand-in nvidia-smi on PATH. An old driver, GPU tests that skipped for no GPU and suite cases skipped for
// no GPU or no cuBLAS each fail the check with the reason in gpu-check.log; a GPU that ran everything passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

void write_executable(const fs::path& path, const std::string& text) {
  test::write_file(path, text);
  fs::permissions(path, fs::perms::owner_all);
}

// A checkout holding the real scripts/gpu-check and a bundle whose binaries answer from $FAKE_* settings, and
// an nvidia-smi that sees one GPU with driver $FAKE_DRIVER.
struct FakeGpuMachine {
  test::TempDir dir;
  FakeGpuMachine() {
    fs::create_directories(dir / "repo/scripts");
    fs::copy_file(test::source_dir() / "scripts/gpu-check", dir / "repo/scripts/gpu-check");
    const fs::path bundle = dir / "repo/.gpu-bundle";
    test::write_file(bundle / "built-from", "test\n" + (dir / "repo").string() + "\n");
    EXPECT_EQ(test::run_shell("tar -C " + test::shell_quote(dir.path()) + " -cJf " +
                              test::shell_quote(bundle / "libs.tar.xz") + " --files-from /dev/null")
                  .exit_code,
              0);
    write_executable(bundle / "mlsysbench", R"sh(#!/bin/sh
for a in "$@"; do
  case "$a" in
    env) echo '{"libraries": {"cuda_runtime": "13.0"}}'; exit 0 ;;
    show) echo "cases (1):"; echo "  [ok] compress.codec/codec=exponent"; [ -n "$FAKE_CASE_SKIP" ] && echo "  [skipped] moe_offload/preset=x  — $FAKE_CASE_SKIP"; exit 0 ;;
    run|report) exit 0 ;;
  esac
done
exit 0
)sh");
    write_executable(bundle / "gpu_tests", R"sh(#!/bin/sh
echo "[ RUN      ] GpuCodecs.RoundTrip"
if [ -n "$FAKE_TEST_SKIP" ]; then echo "x.cpp:20: Skipped"; echo "no GPU: $FAKE_TEST_SKIP"; echo "[  SKIPPED ] GpuCodecs.RoundTrip (0 ms)";
else echo "[gpu probe] cudaStreamQuery's NotReady is not recorded in the runtime's last-error slot (cudaSuccess)"; echo "[       OK ] GpuCodecs.RoundTrip (5 ms)"; fi
echo "[  PASSED  ] 1 test."
)sh");
    write_executable(bundle / "moe_ep_gpu_check", "#!/bin/sh\nexit 0\n");
    write_executable(dir / "bin/nvidia-smi", R"sh(#!/bin/sh
case "$*" in
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *driver_version*--format=csv,noheader*) echo "$FAKE_DRIVER.54.03" ;;
  *) echo "fake nvidia-smi $*" ;;
esac
)sh");
  }
  // Runs the check with these settings; returns its exit code and gpu-check.log.
  std::pair<int, std::string> check(const std::string& settings) {
    const fs::path out = dir / "out";
    fs::remove_all(out);
    const auto r = test::run_shell("env CUDA_COMPAT_DIR=" + test::shell_quote(dir / "compat") + " " + settings + " PATH=" + test::shell_quote(dir / "bin") + ":$PATH OUT=" +
                                   test::shell_quote(out) + " BUDGET=120 bash " +
                                   test::shell_quote(dir / "repo/scripts/gpu-check"));
    return {r.exit_code, test::read_file(out / "gpu-check.log")};
  }
};

TEST(GpuCheck, AGpuThatRanEverythingPasses) {
  FakeGpuMachine m;
  const auto [rc, log] = m.check("FAKE_DRIVER=580");
  EXPECT_EQ(rc, 0) << log;
  EXPECT_THAT(log, HasSubstr("[gpu probe] cudaStreamQuery's NotReady"));
  EXPECT_THAT(log, Not(HasSubstr("FAIL")));
}

TEST(GpuCheck, ADriverTooOldForTheRuntimeFails) {
  FakeGpuMachine m;
  const auto [rc, log] = m.check("FAKE_DRIVER=550");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(log, HasSubstr("FAIL: driver R550 is older than CUDA 13 needs (R580)"));
  // With the toolkit's forward-compatibility libcuda, the check goes on with it.
  test::write_file(m.dir / "compat/libcuda.so.1", "");
  const auto [rc_compat, log_compat] = m.check("FAKE_DRIVER=550");
  EXPECT_EQ(rc_compat, 0) << log_compat;
  EXPECT_THAT(log_compat, HasSubstr("using the forward-compatibility libcuda in " + (m.dir / "compat").string()));
}

TEST(GpuCheck, GpuTestsSkippedForNoGpuFail) {
  FakeGpuMachine m;
  const auto [rc, log] = m.check("FAKE_DRIVER=580 FAKE_TEST_SKIP='cuInit failed (error 999): no usable GPU'");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(log, HasSubstr("FAIL: gpu tests: 1 skipped though nvidia-smi sees 1 GPU(s): no GPU: cuInit failed"));
}

TEST(GpuCheck, SuiteCasesSkippedForNoCublasFail) {
  FakeGpuMachine m;
  const auto [rc, log] =
      m.check("FAKE_DRIVER=580 FAKE_CASE_SKIP='backend cuda: cuda: cannot load cuBLAS (libcublas.so.13): not found'");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(log, HasSubstr("FAIL: suite compress-gpu cases: 1 skipped though nvidia-smi sees 1 GPU(s)"));
  EXPECT_THAT(log, HasSubstr("cannot load cuBLAS"));
}

}  // namespace
}  // namespace mlsb
