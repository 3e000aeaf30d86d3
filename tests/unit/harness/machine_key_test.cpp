// The machine key: the same hardware and build give the same key whatever the hostname or field order;
// another GPU, driver or build type gives another; MLSB_MACHINE_KEY overrides it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/environment.hpp"
#include "harness/machine_key.hpp"

namespace mlsb {
namespace {

nlohmann::json env() {
  return nlohmann::json::parse(R"({
    "host": "runner-1", "cpu_model": "AMD EPYC 9654", "cores": 16, "memory_bytes": 137438953472,
    "os": "Debian GNU/Linux 12", "kernel": "Linux 6.1.0", "arch": "x86_64", "compiler": "GNU 12.2.0",
    "compiler_flags": " -O2 -g -DNDEBUG", "build_type": "RelWithDebInfo",
    "libraries": {"sqlite": "3.40.1", "cuda_driver": "13.0", "cuda_runtime": "13.0"},
    "gpus": [{"name": "NVIDIA H200", "memory_bytes": 150754820096}]})");
}

TEST(MachineKey, IgnoresHostnameFieldOrderAndLibraryVersions) {
  unsetenv("MLSB_MACHINE_KEY");
  const std::string key = machine_key(env());
  EXPECT_EQ(key.size(), 16u);
  auto renamed = env();
  renamed["host"] = "runner-2";
  renamed["kernel"] = "Linux 6.1.1";
  renamed["libraries"]["sqlite"] = "3.45.0";
  renamed["memory_bytes"] = 137438953472 - 8 * 1024 * 1024;  // a few MiB less under another kernel
  renamed["cpu_mhz"] = 2400.5;  // the CPU's state at the start of a run is not the machine
  renamed["load_average"] = {1.5, 0.7, 0.2};
  renamed["cpu_affinity"] = 4;
  EXPECT_EQ(machine_key(renamed), key);
  // The same fields written in another order.
  const auto reordered = nlohmann::json::parse(R"({
    "gpus": [{"memory_bytes": 150754820096, "name": "NVIDIA H200"}], "build_type": "RelWithDebInfo",
    "libraries": {"cuda_runtime": "13.0", "cuda_driver": "13.0", "sqlite": "3.40.1"}, "arch": "x86_64",
    "compiler_flags": " -O2 -g -DNDEBUG", "compiler": "GNU 12.2.0", "memory_bytes": 137438953472,
    "cores": 16, "cpu_model": "AMD EPYC 9654", "host": "elsewhere"})");
  EXPECT_EQ(machine_key(reordered), key);
}

TEST(MachineKey, ChangesWithTheGpuTheDriverAndTheBuild) {
  unsetenv("MLSB_MACHINE_KEY");
  const std::string key = machine_key(env());
  auto gpu = env();
  gpu["gpus"][0]["name"] = "NVIDIA H100 80GB HBM3";
  EXPECT_NE(machine_key(gpu), key);
  auto two = env();
  two["gpus"].push_back(two["gpus"][0]);
  EXPECT_NE(machine_key(two), key);
  auto driver = env();
  driver["libraries"]["cuda_driver"] = "12.8";
  EXPECT_NE(machine_key(driver), key);
  auto build = env();
  build["build_type"] = "Debug";
  EXPECT_NE(machine_key(build), key);
  auto flags = env();
  flags["compiler_flags"] = " -O3";
  EXPECT_NE(machine_key(flags), key);
  auto cpu = env();
  cpu["cores"] = 8;
  EXPECT_NE(machine_key(cpu), key);
}

TEST(MachineKey, TheEnvironmentVariableOverridesAndOddInputNeverThrows) {
  setenv("MLSB_MACHINE_KEY", "gpu-fleet-a", 1);
  EXPECT_EQ(machine_key(env()), "gpu-fleet-a");
  unsetenv("MLSB_MACHINE_KEY");
  EXPECT_EQ(machine_key(nlohmann::json::array()).size(), 16u);
  EXPECT_EQ(machine_key(nlohmann::json::parse(R"({"gpus": 3, "cores": "many", "libraries": []})")).size(), 16u);
  // This machine's own key is stable across captures.
  EXPECT_EQ(machine_key(capture_environment()), machine_key(capture_environment()));
}

}  // namespace
}  // namespace mlsb
