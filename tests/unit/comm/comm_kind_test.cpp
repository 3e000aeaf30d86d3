// resolve_comm_kind: explicit kinds pass through; auto follows the MPI launcher's environment.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/comm/communicator.hpp"

namespace mlsb::comm {
namespace {

// Sets or unsets the launcher variables for one test and restores them afterwards.
class LauncherEnv {
 public:
  LauncherEnv() {
    for (const char* v : kVars) {
      const char* now = getenv(v);
      saved_.push_back(now ? std::optional<std::string>(now) : std::nullopt);
      unsetenv(v);
    }
  }
  ~LauncherEnv() {
    for (size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i]) setenv(kVars[i], saved_[i]->c_str(), 1);
      else unsetenv(kVars[i]);
    }
  }
  static constexpr const char* kVars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"};

 private:
  std::vector<std::optional<std::string>> saved_;
};

TEST(CommKind, ExplicitKindsPassThrough) {
  LauncherEnv env;
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(resolve_comm_kind("local"), "local");
  EXPECT_EQ(resolve_comm_kind("mpi"), "mpi");
  EXPECT_EQ(resolve_comm_kind("nccl"), "nccl");
  EXPECT_THROW(resolve_comm_kind("gloo"), std::invalid_argument);
  EXPECT_THROW(resolve_comm_kind(""), std::invalid_argument);
}

TEST(CommKind, AutoIsLocalWithoutALauncher) {
  LauncherEnv env;
  EXPECT_EQ(resolve_comm_kind("auto"), "local");
}

TEST(CommKind, AutoIsMpiUnderEachLauncher) {
  for (const char* var : LauncherEnv::kVars) {
    LauncherEnv env;
    setenv(var, "0", 1);
    EXPECT_EQ(resolve_comm_kind("auto"), "mpi") << var;
  }
}

}  // namespace
}  // namespace mlsb::comm
