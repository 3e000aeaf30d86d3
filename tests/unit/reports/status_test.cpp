// Case and run statuses: the stored text of each, read back; a store row with a status this build does not
// know is an error naming the row.
#include "reports/status.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sstream>

#include "reports/store.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

TEST(Status, EveryStatusReadsBackFromItsStoredText) {
  const std::vector<std::pair<CaseStatus, std::string>> cases = {
      {CaseStatus::Running, "running"}, {CaseStatus::Ok, "ok"},           {CaseStatus::Failed, "failed"},
      {CaseStatus::Skipped, "skipped"}, {CaseStatus::Timeout, "timeout"}, {CaseStatus::Interrupted, "interrupted"}};
  for (const auto& [status, text] : cases) {
    EXPECT_EQ(status_name(status), text);
    EXPECT_EQ(parse_case_status(text), status);
    std::ostringstream out;
    out << status;
    EXPECT_EQ(out.str(), text);
  }
  const std::vector<std::pair<RunStatus, std::string>> runs = {{RunStatus::Running, "running"},
                                                               {RunStatus::Ok, "ok"},
                                                               {RunStatus::Failed, "failed"},
                                                               {RunStatus::Interrupted, "interrupted"}};
  for (const auto& [status, text] : runs) {
    EXPECT_EQ(status_name(status), text);
    EXPECT_EQ(parse_run_status(text), status);
  }
  for (const char* bad : {"", "OK", "done", "timeout "}) EXPECT_EQ(parse_case_status(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_run_status("skipped"), std::nullopt) << "a run is never skipped";
}

TEST(Status, OnlyFailedAndTimeoutCountAsFailures) {
  EXPECT_TRUE(is_failure(CaseStatus::Failed));
  EXPECT_TRUE(is_failure(CaseStatus::Timeout));
  for (const CaseStatus s : {CaseStatus::Running, CaseStatus::Ok, CaseStatus::Skipped, CaseStatus::Interrupted})
    EXPECT_FALSE(is_failure(s)) << s;
}

TEST(Status, AStoredCaseWithAnUnknownStatusIsAnErrorNamingTheCase) {
  mlsb::test::TempDir tmp;
  int64_t run_id = 0, case_id = 0;
  {
    Store store(tmp / "s.db");
    RunData d = test::fixture_run();
    run_id = store.begin_run(d.run);
    store.add_case(run_id, d.cases.at(0));
    case_id = d.cases.at(0).id;
    store.finish_run(run_id, RunStatus::Ok);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((tmp / "s.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE cases SET status = 'exploded'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Store store(tmp / "s.db");
  try {
    store.load_run(run_id);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("case " + std::to_string(case_id) + " has status 'exploded'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mlsb::reports
