#include "integration/toolbench/toolbench_case.hpp"

#include "harness/registry.hpp"
#include "harness/workload.hpp"
#include "support/test_support.hpp"

namespace mlsb::test {

CaseResult run_toolbench_case(const std::map<std::string, Value>& overrides) {
  auto w = make_workload("toolbench");
  const WorkloadInfo info = w->info();
  Params params;
  for (const auto& a : info.axes) params[a.name] = a.defaults.at(0);
  for (const auto& [k, v] : overrides) params[k] = v;
  TempDir work;
  State st(info, params, 1, work.path());
  CaseResult r;
  try {
    w->setup(st);
    st.begin_sample(0, false);
    w->sample(st);
    w->verify(st);
  } catch (const FailCase& e) {
    r.failure = e.what();
  }
  w->teardown(st);
  r.warnings = st.warnings();
  r.progress = st.progress();
  r.samples = st.samples();
  r.items = st.items();
  return r;
}

}  // namespace mlsb::test
