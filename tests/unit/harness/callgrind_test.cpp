// The counted-instructions instrument's pure parts: a callgrind dump (as callgrind 3.19 writes one, with
// the cache simulation) read into totals, the derived metrics and their formula, the re-executing command
// line, and the extra-work knob's bad values. The instrument itself runs under the real valgrind in
// tests/integration/harness/counted_run_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/callgrind.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;

// The head and tail of a real dump (`valgrind --tool=callgrind --cache-sim=yes`, CALLGRIND_DUMP_STATS_AT).
constexpr const char* kDump = R"(# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 7731
cmd:  /work/main/build/mlsysbench run compress.codec
part: 1

desc: I1 cache: 32768 B, 64 B, 8-way associative
desc: D1 cache: 32768 B, 64 B, 8-way associative
desc: LL cache: 8388608 B, 64 B, 16-way associative

desc: Timerange: Basic block 1059 - 2200
desc: Trigger: Client Request: mlsb-sample

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 3142 804 606 161 65 39 161 65 39

ob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(1) ???
fn=(1) 0x00000000000a1b40
0 12 3 1

totals: 387321 98213 51377 1412 3311 1802 160 441 1203
)";

TEST(Callgrind, ReadsTheTotalsOfEveryThreadFromADump) {
  const CallgrindTotals t = parse_callgrind_dump(kDump, "cg.out.1");
  EXPECT_EQ(t.ir, 387321u);  // totals (every thread), not the dumping thread's summary
  EXPECT_EQ(t.dr, 98213u);
  EXPECT_EQ(t.dw, 51377u);
  EXPECT_EQ(t.i1mr, 1412u);
  EXPECT_EQ(t.d1mr, 3311u);
  EXPECT_EQ(t.d1mw, 1802u);
  EXPECT_EQ(t.ilmr, 160u);
  EXPECT_EQ(t.dlmr, 441u);
  EXPECT_EQ(t.dlmw, 1203u);
  const std::vector<double> v = counted_values(t);
  ASSERT_EQ(v.size(), counted_metrics().size());
  EXPECT_EQ(v[0], 387321);
  EXPECT_EQ(v[1], 387321 + 10.0 * (1412 + 3311 + 1802) + 100.0 * (160 + 441 + 1203));
  EXPECT_DOUBLE_EQ(v[2], (1412 + 3311 + 1802) / (387321.0 + 98213 + 51377));
  EXPECT_DOUBLE_EQ(v[3], (160 + 441 + 1203) / (387321.0 + 98213 + 51377));
  EXPECT_EQ(counted_metrics()[0].name, "instructions");
  EXPECT_TRUE(counted_metrics()[0].deterministic);
  EXPECT_FALSE(counted_metrics()[1].deterministic);  // the caches follow where the heap landed
}

TEST(Callgrind, TrailingZeroCountsMayBeLeftOutAndBadDumpsNameTheFile) {
  const CallgrindTotals t =
      parse_callgrind_dump("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\ntotals: 500 20\n", "cg.out.2");
  EXPECT_EQ(t.ir, 500u);
  EXPECT_EQ(t.dr, 20u);
  EXPECT_EQ(t.dlmw, 0u);
  const auto error = [](const std::string& text) {
    try {
      parse_callgrind_dump(text, "cg.out.9");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error("totals: 1\n"), HasSubstr("cg.out.9: not a callgrind dump (no 'events:' line)"));
  EXPECT_THAT(error("events: Ir\n"), HasSubstr("cg.out.9: callgrind dump without a 'totals:'"));
  EXPECT_THAT(error("events: Ir\ntotals: 5\n"), HasSubstr("lacks the event Dr (run with --cache-sim=yes)"));
  EXPECT_THAT(error("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\ntotals: 5x 1\n"),
              HasSubstr("callgrind count '5x' of Ir is not a number"));
}

TEST(Callgrind, TheCommandRunsItselfUnderCallgrindWithFixedCachesAndNoInstrumentationAtStart) {
  const auto cmd = callgrind_command("/usr/bin/valgrind", "/opt/mlsysbench", {"run", "smoke", "--measure", "instructions"},
                                     "/tmp/d");
  const std::vector<std::string> expected = {
      "/usr/bin/valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes", "--I1=32768,8,64",
      "--D1=32768,8,64", "--LL=8388608,16,64", "--callgrind-out-file=/tmp/d/cg.out", "--log-file=/tmp/d/valgrind.log",
      "/opt/mlsysbench", "run", "smoke", "--measure", "instructions"};
  EXPECT_EQ(cmd, expected);
  EXPECT_FALSE(counting());  // natively, the client requests do nothing
  CountedSample s;
  s.begin();
  EXPECT_FALSE(s.end());
}

TEST(Callgrind, TheExtraWorkKnobTakesAFractionAndNamesItselfWhenBad) {
  ::unsetenv(kExtraWorkEnv);
  EXPECT_EQ(extra_work_for(1000), 0);
  ::setenv(kExtraWorkEnv, "0.10", 1);
  EXPECT_DOUBLE_EQ(extra_work_for(1000), 100);
  for (const char* bad : {"ten", "-0.1", "0.1x", "11"}) {
    ::setenv(kExtraWorkEnv, bad, 1);
    try {
      extra_work_for(1000);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("MLSB_TEST_EXTRA_WORK must be a fraction in [0, 10]")) << bad;
    }
  }
  ::unsetenv(kExtraWorkEnv);
}

}  // namespace
}  // namespace mlsb
