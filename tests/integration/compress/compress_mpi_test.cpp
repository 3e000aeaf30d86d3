// Compressed collectives on 4 real Open MPI ranks: every collective with a lossless and a lossy codec,
// ring and linear allreduce; verify() checks each against the uncompressed collective (bit-exact for
// lossless), so an ok case is a correct one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "reports/store.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;

using test::shell_quote;

std::string mpirun_oversubscribed(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
         "timeout 600 mpirun -n " + std::to_string(ranks) + " --oversubscribe ";
}

void skip_without_mpirun() {
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed (scripts/setup-deps)";
}

TEST(CompressMpi, EveryCollectiveAndCodecFamilyOnFourRanks) {
  skip_without_mpirun();
  test::TempDir dir;
  const auto r = test::run_shell(mpirun_oversubscribed(4) + shell_quote(test::binary()) + " run compress-collectives -p elements=65536 "
                                 "--repetitions 2 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  reports::Store store((dir / "r.db").string(), /*read_only=*/true);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u) << "only rank 0 writes the store";
  const auto run = store.load_run(runs[0].id);
  EXPECT_EQ(run.cases.size(), 18u);
  std::set<std::string> collectives;
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    EXPECT_EQ(c.comm, "mpi");
    EXPECT_EQ(c.ranks, 4);
    collectives.insert(c.params["collective"].get<std::string>());
    for (const auto& s : c.summaries)
      if (s.metric == "busbw_gbps") {
        EXPECT_GT(s.stats.median, 0) << c.params_key;
      }
  }
  EXPECT_EQ(collectives.size(), 5u);
}

TEST(CompressMpi, RanksWithDifferentInputsStopWithAnErrorInsteadOfHanging) {
  skip_without_mpirun();
  test::TempDir dir;
  // Each rank asks for another element count, so the ranks disagree (on the case, or on its sizes).
  const auto r = test::run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun -n 2 --oversubscribe sh -c '" +
      test::binary().string() + " run compress -p mode=collective -p codec=exponent " +
      "-p elements=$((1000 + OMPI_COMM_WORLD_RANK)) --repetitions 1 --db " + (dir / "r.db").string() + "'");
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_THAT(r.out + r.err, ::testing::HasSubstr("rank"));
}

// SIGTERM to one rank of a running job (rank 1, then rank 0 alone): the job ends within a bounded time,
// the finished cases are kept and the run is marked interrupted, never left hanging or "running".
void signal_one_rank(int rank) {
  skip_without_mpirun();
  test::TempDir dir;
  const std::string db = (dir / "r.db").string();
  const std::string script =
      "(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 150 mpirun -n 4 --oversubscribe '" +
      test::binary().string() + "' run compress-collectives --db '" + db +
      "' > '" + (dir / "log").string() + "' 2>&1; echo $? > '" + (dir / "rc").string() + "') &\n"
      "job=$!; sleep 5; start=$(date +%s)\n"
      "for p in $(pgrep -f \"" + db + "\"); do\n"
      "  if tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=" + std::to_string(rank) +
      "; then kill -TERM $p; fi\n"
      "done\n"
      "wait $job; echo $(( $(date +%s) - start ))";
  const auto r = test::run_shell(script);
  const int rc = std::stoi(test::read_file(dir / "rc"));
  EXPECT_NE(rc, 124) << "the job hung\n" << test::read_file(dir / "log");
  EXPECT_NE(rc, 0);
  EXPECT_LT(std::stoi(r.out), 100) << "seconds from the signal to the end of the job";
  reports::Store store(db, /*read_only=*/true);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, reports::RunStatus::Interrupted) << test::read_file(dir / "log");
  const auto run = store.load_run(runs[0].id);
  for (const auto& c : run.cases) EXPECT_TRUE(c.status == reports::CaseStatus::Ok || c.status == reports::CaseStatus::Interrupted) << c.status << ": " << c.reason;
}

TEST(CompressMpi, SigtermToOneRankEndsTheJobAndKeepsTheRun) { signal_one_rank(1); }
TEST(CompressMpi, SigtermToRankZeroEndsTheJobAndKeepsTheRun) { signal_one_rank(0); }

}  // namespace
}  // namespace mlsb
