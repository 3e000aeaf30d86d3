// The mpi communicator and the runner on real Open MPI ranks (mpirun --oversubscribe on 2 cores):
// tests/mpi/comm_check and tests/mpi/runner_check, and the mlsysbench CLI under mpirun.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "reports/store.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

using test::count;
using test::mpi_program;
using test::mpirun;
using test::run_timed;
using test::shell_quote;

void skip_without_mpi() {
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed (scripts/setup-deps)";
  if (!fs::exists(mpi_program("comm_check"))) GTEST_SKIP() << "tests/mpi programs not built";
}

TEST(MpiComm, EveryCollectiveTypeOpAndSizeOnFourRanks) {
  skip_without_mpi();
  const auto t = run_timed(mpirun(4) + shell_quote(mpi_program("comm_check")));
  ASSERT_EQ(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_THAT(t.r.out, HasSubstr("PASSED: 0 failed check(s)"));
  EXPECT_THAT(t.r.out, Not(HasSubstr("FAIL")));
  // 7 types x 3 ops x 2 reductions + 7 reduce_scatter_v + 7 byte-moving + allgatherv, alltoallv, ialltoallv,
  // sendrecv: 60 per pass, 2 passes
  EXPECT_EQ(count(t.r.out, "\nok ") + (t.r.out.rfind("ok ", 0) == 0 ? 1 : 0), 120) << t.r.out;
  for (const char* s : {"[limit 1000 B] allreduce bf16 sum", "[limit default] reduce_scatter f16 max",
                        "[limit 1000 B] allgather+alltoall+broadcast i64", "[limit 1000 B] alltoallv",
                        "[limit default] ialltoallv", "[limit 1000 B] ialltoallv",
                        "[limit 1000 B] reduce_scatter_v f32"})
    EXPECT_THAT(t.r.out, HasSubstr(std::string("ok ") + s));
}

TEST(MpiComm, ExpectSameMismatchIsACommErrorOnEveryRank) {
  skip_without_mpi();
  const auto t = run_timed(mpirun(4) + shell_quote(mpi_program("comm_check")) + " mismatch");
  EXPECT_EQ(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_EQ(count(t.r.out, "ok mismatch detected"), 4) << t.r.out;
  EXPECT_THAT(t.r.out, HasSubstr("rank 0: ok mismatch detected"));
  EXPECT_THAT(t.r.out, HasSubstr("tensor size differs across ranks: rank 0 has 1000, rank 1 has 1001"));
  EXPECT_THAT(t.r.out, HasSubstr("rank 1 has 1001, rank 0 has 1000"));
}

TEST(MpiComm, AbsentRankGivesCommTimeoutNotAHang) {
  skip_without_mpi();
  const auto t = run_timed(mpirun(4) + shell_quote(mpi_program("comm_check")) + " absent");
  EXPECT_NE(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_NE(t.r.exit_code, 124) << "mpirun hung";
  EXPECT_EQ(count(t.r.out, "ok CommTimeout after "), 3) << t.r.out;  // 2 s and a bit (more on a loaded machine)
  EXPECT_THAT(t.r.out, HasSubstr("waited 2 s for the other ranks (timeout)"));
  EXPECT_LT(t.seconds, 20) << "rank 3 sleeps 30 s: the others must not wait for it";
}

// Regression: a collective cancelled while peers still read its buffer crashed this rank's next MPI call
// (progress on the abandoned requests wrote into freed memory) or failed the peers' single-copy reads.
TEST(MpiComm, CancelledCollectiveLetsPeersFinishAndLeavesMemoryAlone) {
  skip_without_mpi();
  const auto t = run_timed(mpirun(4) + shell_quote(mpi_program("comm_check")) + " cancel");
  EXPECT_EQ(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_EQ(count(t.r.out, "ok after a cancelled allreduce"), 4) << t.r.out << t.r.err;
}

TEST(MpiComm, DeadRankEndsTheJob) {
  skip_without_mpi();
  const auto t = run_timed(mpirun(4) + shell_quote(mpi_program("comm_check")) + " die");
  EXPECT_NE(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_NE(t.r.exit_code, 124) << "mpirun hung";
  EXPECT_LT(t.seconds, 20);
}

TEST(MpiRunner, RanksAgreeOnEachCaseAndOnlyRankZeroWrites) {
  skip_without_mpi();
  test::TempDir dir;
  const auto t = run_timed(mpirun(4) + shell_quote(mpi_program("runner_check")) + " " + shell_quote(dir / "r.db") + " normal");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_EQ(count(t.r.out, "run failed (2 ok, 1 failed, 1 timed out, 2 skipped); cuda run ok (1 skipped)"), 4)
      << "every rank must see the same outcome\n" << t.r.out;
  EXPECT_EQ(count(t.r.err, "[1/6]"), 1) << "progress comes from rank 0 alone\n" << t.r.err;
  reports::Store store(dir / "r.db", /*read_only=*/true);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u) << "rank 0 alone writes the store";
  const auto run = store.load_run(store.resolve_run("1").value());
  EXPECT_EQ(run.run.status, reports::RunStatus::Failed);
  ASSERT_EQ(run.cases.size(), 6u);
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.comm, "mpi");
    EXPECT_EQ(c.ranks, 4);
    EXPECT_EQ(c.backend, "cpu");
  }
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Ok) << run.cases[0].reason;
  EXPECT_EQ(run.cases[0].samples.at("value").size(), 3u);  // rank 0's rule (quiet data), not the noisy ranks'
  EXPECT_EQ(run.cases[1].status, reports::CaseStatus::Failed);
  EXPECT_EQ(run.cases[1].reason, "rank 2: checksum 7 != 8");
  EXPECT_TRUE(run.cases[1].samples.empty());
  EXPECT_EQ(run.cases[2].status, reports::CaseStatus::Skipped);
  EXPECT_EQ(run.cases[2].reason, "rank 1: no widget on this rank");
  EXPECT_EQ(run.cases[3].status, reports::CaseStatus::Timeout);
  EXPECT_THAT(run.cases[3].reason, HasSubstr("rank 1: timed out"));
  EXPECT_THAT(run.cases[3].reason, HasSubstr("abandoned"));
  EXPECT_EQ(run.cases[4].status, reports::CaseStatus::Ok) << "a case after a hung one runs normally: " << run.cases[4].reason;
  // A setup that fails on rank 3 alone before a collective: every rank stops at once (not after the 20 s
  // timeout of the collective that rank 3 never joins), with rank 3's reason.
  EXPECT_EQ(run.cases[5].status, reports::CaseStatus::Skipped);
  EXPECT_EQ(run.cases[5].reason, "rank 3: no device memory on this rank");
  EXPECT_LT(run.cases[5].finished_at - run.cases[5].started_at, 5);
  const auto cuda = store.load_run(store.resolve_run("2").value());
  ASSERT_EQ(cuda.cases.size(), 1u);
  EXPECT_EQ(cuda.cases[0].status, reports::CaseStatus::Skipped);
  EXPECT_EQ(cuda.cases[0].reason, "workload mpi_probe has no cuda path");
  EXPECT_LT(t.seconds, 40);
}

TEST(MpiRunner, DeadRankInterruptsTheRunAndKeepsFinishedCases) {
  skip_without_mpi();
  test::TempDir dir;
  const auto t = run_timed(mpirun(2) + shell_quote(mpi_program("runner_check")) + " " + shell_quote(dir / "r.db") + " die");
  EXPECT_NE(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_NE(t.r.exit_code, 124) << "mpirun hung";
  reports::Store store(dir / "r.db", /*read_only=*/true);
  const auto run = store.load_run(store.resolve_run("latest").value());
  EXPECT_EQ(run.run.status, reports::RunStatus::Interrupted) << "mpirun's SIGTERM reaches rank 0's interrupt path";
  ASSERT_EQ(run.cases.size(), 2u) << "the third case never starts";
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Ok);
  EXPECT_EQ(run.cases[1].status, reports::CaseStatus::Interrupted);
  EXPECT_LT(t.seconds, 20);
}

TEST(MpiCli, TwoRanksRunAWorkloadAndShareRankZerosExitCode) {
  skip_without_mpi();
  test::TempDir dir;
  const std::string cli = mpirun(2) + shell_quote(test::binary()) + " --db " + shell_quote(dir / "r.db") + " run compress ";
  const auto t = run_timed(cli + "-p mode=collective -p codec=none,exponent -p elements=1000 --repetitions 2");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.out << t.r.err;
  EXPECT_EQ(count(t.r.err, "run 1 ("), 1) << "rank 0 alone prints the final line\n" << t.r.err;
  {
    reports::Store store(dir / "r.db", /*read_only=*/true);
    ASSERT_EQ(store.list_runs().size(), 1u);
    const auto run = store.load_run(store.resolve_run("latest").value());
    ASSERT_EQ(run.cases.size(), 2u);
    for (const auto& c : run.cases) {
      EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
      EXPECT_EQ(c.comm, "mpi");
      EXPECT_EQ(c.ranks, 2);
    }
  }
  // Bad input: every rank exits 2; a store rank 0 cannot open: rank 0's 2 is everyone's.
  const auto bad = run_timed(cli + "-p codec=nope");
  EXPECT_EQ(bad.r.exit_code, 2) << bad.r.out << bad.r.err;
  const auto nostore = run_timed(mpirun(2) + shell_quote(test::binary()) + " --db " + shell_quote(dir / "no" / "such" / "r.db") +
                                 " run compress -p elements=1000 --repetitions 1");
  EXPECT_EQ(nostore.r.exit_code, 2) << nostore.r.out << nostore.r.err;
  EXPECT_FALSE(fs::exists(dir / "no"));
}

}  // namespace
}  // namespace mlsb
