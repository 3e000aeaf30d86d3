// The nightly job's decisions (reports/nightly.hpp) on constructed stores: the runner stands in for
// `mlsysbench run` by importing a night built in code (its JSON report through the real binary), so each
// scenario controls what every night and every confirming re-run measured, and the test asserts what the
// night decides: the exit status, what is re-run, what is confirmed, what is marked suspect, the summary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <regex>

#include "integration/reports/nightly_runs.hpp"
#include "reports/night_pages.hpp"
#include "reports/nightly.hpp"
#include "reports/store.hpp"
#include "support/golden.hpp"

namespace mlsb::reports {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using mlsb::test::TempDir;
using test::Night;

NightRunOutcome outcome(int exit_code, std::optional<int64_t> run_id = std::nullopt, bool no_case = false,
                        std::string error = "") {
  NightRunOutcome o;
  o.exit_code = exit_code;
  o.run_id = run_id;
  o.no_case = no_case;
  o.error = std::move(error);
  return o;
}

// A store with nights 0..n-1 as night(i) gives them, and a runner whose night i (the next one) is
// `tonight` and whose confirming re-run is `rerun` (only the cases the filter selects).
struct Scenario {
  TempDir dir;
  fs::path db = dir / "night.db";
  int next = 0;
  std::vector<NightRunRequest> requests;

  void nights(int n, const std::function<Night(int)>& night = [](int) { return Night{}; }) {
    for (int i = 0; i < n; ++i) test::import_run(db, test::nightly_run(next++, night(i)));
  }
  // Stores `n` (with the codecs the request's filter selects) and returns what the runner returns.
  NightRunOutcome store_night(const NightRunRequest& req, Night n) {
    if (!req.filter.empty()) {
      const std::regex re(req.filter);
      std::vector<std::string> kept;
      for (const auto& codec : n.codecs)
        if (std::regex_search("compress/codec=" + codec, re)) kept.push_back(codec);
      if (kept.empty()) return outcome(0, std::nullopt, true);
      n.codecs = kept;
      n.partial = req.confirms.empty();  // the user's --filter; a re-run is partial by `confirms`
    }
    n.confirms = req.confirms;
    n.tag = req.tag;
    const int i = next++;
    test::import_run(db, test::nightly_run(i, n));
    Store store(db, true);
    return outcome(n.failed ? 1 : 0, store.run_id_by_uuid(test::night_uuid(i)));
  }
  // A runner whose nights are `tonight` and whose confirming re-runs are `rerun`.
  NightRunner runner(const Night& tonight, const Night& rerun) {
    return [this, tonight, rerun](const NightRunRequest& req) {
      requests.push_back(req);
      return store_night(req, req.confirms.empty() ? tonight : rerun);
    };
  }
  NightlyResult night(const Night& tonight, const Night& rerun, NightlyOptions options = {}) {
    if (options.suites.empty()) options.suites = {"nightly-gpu"};
    Store store(db);
    return run_nightly(store, options, runner(tonight, rerun));
  }
  RunRecord stored(int64_t id) {
    Store store(db, true);
    return store.load_run(id).run;
  }
};

TEST(NightlyDecisions, TheFirstNightHasNoBaselineAndPasses) {
  Scenario sc;
  const auto r = sc.night({}, {});
  EXPECT_EQ(r.status, kNightPass);
  ASSERT_EQ(r.suites.size(), 1u);
  EXPECT_EQ(r.suites[0].against_baseline, "no baseline yet");
  EXPECT_EQ(r.suites[0].history_verdict, "no history yet (one run)");
  EXPECT_EQ(r.suites[0].cases, "2 ok");
  // It links the pages it wrote, and only those: a first night compares nothing and has no history.
  const std::string summary = render_night_summary(r, "ctx");
  EXPECT_THAT(summary, AllOf(HasSubstr("# mlsysbench nightly: PASS (exit 0)"), HasSubstr("ctx"),
                             HasSubstr("| nightly-gpu | 1 | c0ffee1000 of 2026-01-01 | 2 ok | no baseline yet | — | "
                                       "no history yet (one run) | [report](report-nightly-gpu.html) |"),
                             Not(HasSubstr("compare-")), Not(HasSubstr("history-")), Not(HasSubstr("gpu.txt")),
                             Not(HasSubstr("Worst changes"))));
  EXPECT_LT(summary.size(), kMaxNightSummaryBytes);
}

// The second night has a baseline (named by its id and day) but a history too short to find a step in: it
// says so instead of "no standing regression".
TEST(NightlyDecisions, TheSecondNightSaysItsHistoryIsTooShortToJudge) {
  Scenario sc;
  sc.nights(1);
  const auto r = sc.night({}, {});
  EXPECT_EQ(r.status, kNightPass);
  EXPECT_THAT(r.suites.at(0).history_verdict, HasSubstr("too short to judge (2 runs)"));
  EXPECT_THAT(r.suites.at(0).against_baseline, HasSubstr("no regression against run 1 of 20"));
}

TEST(NightlyDecisions, ARegressionTheReRunReproducesIsConfirmed) {
  Scenario sc;
  sc.nights(6);
  const auto r = sc.night({.scale = 2.0}, {.scale = 2.0});
  EXPECT_EQ(r.status, kNightRegression);
  const auto& s = r.suites.at(0);
  EXPECT_THAT(s.worse, ElementsAre("compress/codec=zstd", "compress/codec=lz4"));
  EXPECT_EQ(s.confirmed, s.worse);
  EXPECT_FALSE(s.marked_suspect);
  // One re-run, of exactly the worse cases, linked to the night and tagged apart from the nights.
  ASSERT_EQ(sc.requests.size(), 2u);
  EXPECT_EQ(sc.requests[1].confirms, test::night_uuid(6));
  EXPECT_EQ(sc.requests[1].tag, "nightly-confirm");
  EXPECT_EQ(sc.requests[1].filter, "^(compress/codec=zstd|compress/codec=lz4)$");
  ASSERT_TRUE(s.rerun && s.rerun_comparison);
  EXPECT_TRUE(sc.stored(s.rerun->run.id).partial);
  EXPECT_THAT(render_night_summary(r, ""), AllOf(HasSubstr("REGRESSION (confirmed) (exit 1)"),
                                                HasSubstr("| 2 confirmed: compress/codec=zstd time_ms x1.98, "),
                                                HasSubstr("[re-run](compare-confirm-nightly-gpu.html)")));
  // Still slow the next night: the comparison judges it against the newest clean night (the slow one) and
  // passes, as compare does; the history shows the level of two runs as a standing regression.
  const auto next = sc.night({.scale = 2.0}, {.scale = 2.0});
  EXPECT_EQ(next.status, kNightPass);
  EXPECT_EQ(next.suites.at(0).history_verdict, "standing regression");
}

// summary.md of a confirmed regression, whole: the verdict, the suite's row with its commit range and pages,
// the worst changes with their history and detection power, the exit codes and the files.
TEST(NightlyDecisions, TheSummaryOfAConfirmedRegressionMatchesItsGoldenFile) {
  Scenario sc;
  sc.nights(6);
  const auto r = sc.night({.scale = 2.0}, {.scale = 2.0});
  const std::string context = "2026-01-07T02:00:00Z · commit `c0ffee1006` · branch `main` · machine key `ci-gpu-1`";
  const std::string summary = render_night_summary(r, context);
  mlsb::test::expect_golden(mlsb::test::golden_file("reports", "night-summary.md"), summary);
  EXPECT_LT(summary.size(), kMaxNightSummaryBytes);
}

// However many notes a night has, summary.md stays under its limit, cuts the notes rather than the tables
// and says where the rest is; index.html keeps every note.
TEST(NightlyDecisions, ManyLongNotesAreCutToKeepTheSummaryShort) {
  Scenario sc;
  sc.nights(6);
  const auto r = sc.night({.scale = 2.0}, {.scale = 2.0});
  std::vector<std::string> notes;
  for (int i = 0; i < 40; ++i) notes.push_back("note " + std::to_string(i) + ": " + std::string(300, 'x'));
  const std::string summary = render_night_summary(r, "ctx", notes);
  EXPECT_LT(summary.size(), kMaxNightSummaryBytes);
  EXPECT_THAT(summary, AllOf(HasSubstr("| compress/codec=lz4 | time_ms |"), HasSubstr("- note 0: xxx"),
                             HasSubstr(" more note(s) in `index.html`"), HasSubstr("Exit status: 0 pass")));
  const std::string index = render_night_index(r, "ctx", notes);
  EXPECT_THAT(index, AllOf(HasSubstr("note 39: xxx"), HasSubstr("<p class=\"banner fail\">REGRESSION (confirmed) · exit 1"),
                           HasSubstr("<a href=\"compare-nightly-gpu.html\">compare</a>")));
}

TEST(NightlyDecisions, ANightTheReRunDoesNotReproduceIsSuspectAndTheNextRealRegressionIsCaught) {
  Scenario sc;
  sc.nights(6);
  const auto transient = sc.night({.scale = 3.3}, {.scale = 1.0});
  EXPECT_EQ(transient.status, kNightPass);
  const auto& s = transient.suites.at(0);
  EXPECT_TRUE(s.confirmed.empty());
  EXPECT_TRUE(s.marked_suspect);
  EXPECT_THAT(s.rerun_verdict, HasSubstr("marked suspect"));
  EXPECT_THAT(sc.stored(s.run->run.id).suspect, HasSubstr("not reproduced by its confirming re-run"));
  // The next night's real 1.5x is judged against the clean reference (the re-run stands in for the
  // suspect night), not drowned in the transient's spread.
  const auto real = sc.night({.scale = 1.5}, {.scale = 1.5});
  EXPECT_EQ(real.status, kNightRegression);
  EXPECT_EQ(real.suites.at(0).confirmed.size(), 2u);
  ASSERT_TRUE(real.suites.at(0).comparison);
  for (const auto& m : real.suites.at(0).comparison->metrics) EXPECT_NEAR(m.ratio, 1.5, 0.1) << m.name;
}

TEST(NightlyDecisions, APartialNightIsNoReferenceForTheNextFullNight) {
  Scenario sc;
  sc.nights(6);
  NightlyOptions filtered;
  filtered.filter = "zstd";
  const auto partial = sc.night({.scale = 2.0}, {.scale = 2.0}, filtered);
  EXPECT_TRUE(partial.suites.at(0).run->run.partial);
  const auto full = sc.night({.scale = 2.0}, {.scale = 2.0});
  EXPECT_EQ(full.status, kNightRegression);
  EXPECT_EQ(full.suites.at(0).confirmed.size(), 2u);  // lz4 too: the reference is the last full night
  EXPECT_NE(full.suites.at(0).comparison->base.id, partial.suites.at(0).run->run.id);
}

TEST(NightlyDecisions, ANightOfAnUnchangedCommitIsJudged) {
  Scenario sc;
  sc.nights(6, [](int) { return Night{.sha = "samesha"}; });
  const auto r = sc.night({.scale = 2.0, .sha = "samesha"}, {.scale = 2.0, .sha = "samesha"});
  EXPECT_EQ(r.status, kNightRegression);
  EXPECT_THAT(night_commits(r.suites.at(0)), HasSubstr("samesha of 2026-01-06 .. samesha of 2026-01-07 (the same commit"));
}

TEST(NightlyDecisions, AShortHistoryStillCatches1Point5x) {
  Scenario sc;
  sc.nights(3);
  const auto r = sc.night({.scale = 1.5}, {.scale = 1.5});
  EXPECT_EQ(r.status, kNightRegression);
  EXPECT_EQ(r.suites.at(0).confirmed.size(), 2u);
}

TEST(NightlyDecisions, AnUnchangedNightPassesWithoutAReRunAndStatesWhatTheGateCanSee) {
  Scenario sc;
  sc.nights(6);
  const auto r = sc.night({}, {});
  EXPECT_EQ(r.status, kNightPass);
  EXPECT_EQ(sc.requests.size(), 1u);
  EXPECT_THAT(r.suites.at(0).against_baseline, HasSubstr("no regression against run 6"));
  // What the gate can see is stated per change: the smallest worse step it catches, with its history.
  EXPECT_THAT(render_night_summary(r, ""), AllOf(HasSubstr("| same | "), HasSubstr(" | ≥ "), HasSubstr("% (6 runs) |")));
}

TEST(NightlyDecisions, EveryCaseSkippedIsAnUnfitMachine) {
  Scenario sc;
  sc.nights(3);
  const auto r = sc.night({.skipped = true}, {});
  EXPECT_EQ(r.status, kNightUnfit);
  EXPECT_EQ(r.suites.at(0).against_baseline, "every case skipped");
  EXPECT_EQ(sc.requests.size(), 1u);
}

TEST(NightlyDecisions, AFailedCaseIsAFailedNightAndTheRestIsStillJudged) {
  Scenario sc;
  sc.nights(6);
  const auto r = sc.night({.failed = true}, {.failed = true});
  EXPECT_EQ(r.status, kNightFailed);
  EXPECT_EQ(r.suites.at(0).cases, "1 ok, 1 failed");
  ASSERT_TRUE(r.suites.at(0).comparison);
  EXPECT_THAT(render_night_summary(r, ""), HasSubstr("a case failed"));
}

TEST(NightlyDecisions, AReferenceFromAnotherEnvironmentIsUnfitOnlyWhenStrict) {
  Scenario sc;
  sc.nights(6, [](int) { return Night{.build_type = "Debug"}; });
  NightlyOptions strict;
  strict.strict_env = true;
  const auto r = sc.night({}, {}, strict);
  EXPECT_EQ(r.status, kNightUnfit);
  EXPECT_THAT(r.suites.at(0).against_baseline, HasSubstr("build type: Debug -> RelWithDebInfo"));
  const auto lenient = sc.night({.build_type = "Release"}, {});
  EXPECT_EQ(lenient.status, kNightPass);
  EXPECT_THAT(render_night_summary(lenient, ""), HasSubstr("the environment changed since the baseline"));
}

TEST(NightlyDecisions, AFilterMatchingNothingIsANoteAndBadInputStopsTheNight) {
  Scenario sc;
  NightlyOptions nothing;
  nothing.filter = "no-such-codec";
  const auto r = sc.night({}, {}, nothing);
  EXPECT_EQ(r.status, kNightPass);
  EXPECT_EQ(r.suites.at(0).cases, "no case matches --filter");

  NightlyOptions two;
  two.suites = {"bad", "nightly-gpu"};
  Store store(sc.db);
  int calls = 0;
  const auto stopped = run_nightly(store, two, [&](const NightRunRequest&) {
    ++calls;
    return outcome(2, std::nullopt, false, "unknown suite");
  });
  EXPECT_EQ(stopped.status, kNightUsage);
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(calls, 1);
  // A run that stored nothing (a crash) fails that suite and the night goes on.
  const auto crashed = run_nightly(store, two, [&](const NightRunRequest&) { return outcome(139); });
  EXPECT_EQ(crashed.status, kNightFailed);
  EXPECT_EQ(crashed.suites.size(), 2u);
}

TEST(NightlyDecisions, ExactIdsFilterEscapesRegexSyntax) {
  const std::string f = exact_ids_filter({"a.b/x=1+2", "c/(y)"});
  EXPECT_EQ(f, R"(^(a\.b/x=1\+2|c/\(y\))$)");
  EXPECT_TRUE(std::regex_search("a.b/x=1+2", std::regex(f)));
  EXPECT_FALSE(std::regex_search("aXb/x=1+2", std::regex(f)));
  EXPECT_FALSE(std::regex_search("a.b/x=1+2,z=3", std::regex(f)));
}

}  // namespace
}  // namespace mlsb::reports
