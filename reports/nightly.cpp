#include "reports/nightly.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "reports/baseline.hpp"
#include "reports/detail/report_text.hpp"
#include "reports/status.hpp"
#include "reports/run_listing.hpp"

namespace mlsb::reports {
namespace {

void raise(int& status, int code) { status = std::max(status, code); }

// "2 ok, 1 skipped": ok first, then the other statuses by name.
std::string status_counts(const RunData& run) {
  std::map<std::string, int> n;
  for (const auto& c : run.cases) ++n[status_name(c.status)];
  std::string out;
  const auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + std::to_string(n[s]) + " " + s; };
  if (n.count("ok")) add("ok");
  for (const auto& [s, count] : n)
    if (s != "ok") add(s);
  return out.empty() ? "no case" : out;
}

// "name time_ms x2.01, ...": the cases' display names as the comparison shows them, with the ratio of
// their primary metric.
std::string display_names(const Comparison& cmp, const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) {
    std::string name = id;
    for (const auto& m : cmp.metrics)
      if (m.primary && m.workload + "/" + m.params_key == id) {
        name = m.name + " " + m.metric + " x" + detail::fmt_num(m.ratio, 3);
        break;
      }
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

// A run judged against its clean reference: the comparison (nullopt without a reference, or when
// strict_env refuses it), the summary cell and the status it sets.
struct Judgement {
  std::optional<Comparison> cmp;
  std::string verdict;
  int status = kNightPass;
  bool fails = false;
};

Judgement judge(Store& store, const RunData& run, const NightlyOptions& options, std::vector<std::string>& notes,
                const std::string& suite) {
  Judgement j;
  const auto ref = find_reference(store, run.run, options.history);
  if (!ref) {
    j.verdict = "no baseline yet";
    notes.push_back(suite + ": " + no_baseline_note(store, run.run));
    return j;
  }
  // The store's id of the reference and the day it ran (an id alone means nothing outside this store).
  const std::string base_id = std::to_string(ref->base.run.id) +
                              (ref->base.run.started_at > 0 ? " of " + format_utc(ref->base.run.started_at).substr(0, 10) : "");
  const auto differences = environment_differences(ref->base.run, run.run);
  std::string changed;
  for (const auto& d : differences) changed += (changed.empty() ? "" : "; ") + d;
  if (!differences.empty() && options.strict_env) {
    j.verdict = "the baseline (run " + base_id + ") was recorded in another environment (--strict-env): " + changed;
    j.status = kNightUnfit;
    return j;
  }
  if (!differences.empty()) notes.push_back(suite + ": the environment changed since the baseline: " + changed);
  CompareOptions co = options.compare;
  co.history_t_test = true;
  co.history_limit = options.history;
  j.cmp = compare_runs(ref->base, run, co, ref->history);
  j.fails = j.cmp->fails_gate();
  const auto worse = j.cmp->worse_cases();
  j.verdict = j.fails ? std::to_string(worse.size()) + " case(s) worse than run " + base_id
                      : "no regression against run " + base_id;
  return j;
}

// The night's steps over the suite's nightly runs of this machine key and branch.
void judge_history(Store& store, SuiteNight& s, const NightlyOptions& options) {
  HistoryQuery q;
  q.suite = s.run->run.suite;
  q.tag = "nightly";
  q.machine = s.run->run.machine_key.empty() ? "auto" : s.run->run.machine_key;
  q.branch = s.run->run.branch;
  q.last = options.history;
  q.like = &s.run->run;
  try {
    History h = load_history(store, q);
    detect_history(h, options.steps);
    const auto regressions = standing_regressions(h);
    const bool judged = std::any_of(h.series.begin(), h.series.end(),
                                    [](const HistorySeries& series) { return series.analysis.enough_history; });
    s.history_verdict = !regressions.empty() ? "standing regression"
                        : judged             ? "no standing regression"
                                             : "too short to judge (" + std::to_string(h.runs.size()) + " runs)";
    for (const auto& r : regressions) s.notes.push_back(s.name + ": standing regression in the history: " + describe(r));
    s.history = std::move(h);
  } catch (const HistoryTooShort&) {
    s.history_verdict = "no history yet (one run)";
  } catch (const std::exception& e) {
    s.history_verdict = "history failed";
    s.notes.push_back(s.name + ": the history could not be read: " + e.what());
  }
}

// The confirming re-run of the cases that got worse, judged against the same clean reference.
void confirm(Store& store, SuiteNight& s, const NightlyOptions& options, const NightRunner& runner) {
  const RunRecord& night = s.run->run;
  const auto out = runner({s.suite, exact_ids_filter(s.worse), night.uuid, "nightly-confirm"});
  if (!out.run_id) {
    s.notes.push_back(s.name + ": the confirming run recorded nothing (exit " + std::to_string(out.exit_code) +
                      "); the regression stands");
    s.rerun_verdict = "unconfirmed (re-run failed)";
    raise(s.status, kNightRegression);
    return;
  }
  s.rerun = store.load_run(*out.run_id);
  if (out.exit_code != 0) {
    s.notes.push_back(s.name + ": the confirming run exited " + std::to_string(out.exit_code) + " (" +
                      night_file_stem("confirm", s.suite) + ".md)");
    raise(s.status, kNightFailed);
  }
  std::vector<std::string> ignored;
  auto j = judge(store, *s.rerun, options, ignored, s.name);
  if (j.cmp) {
    for (const auto& id : j.cmp->worse_cases())
      if (std::find(s.worse.begin(), s.worse.end(), id) != s.worse.end()) s.confirmed.push_back(id);
    s.rerun_comparison = std::move(j.cmp);
  }
  if (!s.confirmed.empty()) {
    const std::string names = display_names(*s.comparison, s.confirmed);
    s.rerun_verdict = std::to_string(s.confirmed.size()) + " confirmed: " + names;
    raise(s.status, kNightRegression);
    return;
  }
  store.mark_suspect(night.id, "worse against run " + std::to_string(s.comparison->base.id) +
                                   ", not reproduced by its confirming re-run " + s.rerun->run.uuid);
  s.marked_suspect = true;
  s.rerun_verdict = "not confirmed: the re-run is not worse; run " + std::to_string(night.id) + " marked suspect";
}

// One suite's night; false when the night must stop (bad input, an interruption).
bool run_suite(Store& store, SuiteNight& s, const NightlyOptions& options, const NightRunner& runner) {
  const auto out = runner({s.suite, options.filter, "", "nightly"});
  if (out.no_case) {
    s.notes.push_back(s.name + ": no case matches --filter '" + options.filter + "'; not run");
    s.cases = "no case matches --filter";
    return true;
  }
  if (!out.run_id) {
    const bool bad = out.exit_code == kNightUsage;
    s.notes.push_back(s.name + (bad ? ": bad input: " + out.error
                                     : ": no run was recorded (exit " + std::to_string(out.exit_code) + ")"));
    s.cases = "run exited " + std::to_string(out.exit_code);
    raise(s.status, bad ? kNightUsage : out.exit_code == 130 ? kNightInterrupted : kNightFailed);
    return !bad && out.exit_code != 130;
  }
  s.run = store.load_run(*out.run_id);
  s.cases = status_counts(*s.run);
  const bool any_ok = std::any_of(s.run->cases.begin(), s.run->cases.end(),
                                  [](const CaseRecord& c) { return c.status == CaseStatus::Ok; });
  if (s.run->run.status == RunStatus::Ok && !any_ok) {
    s.notes.push_back(s.name + ": every case was skipped (reasons in " + night_file_stem("report", s.suite) +
                      ".md): this machine cannot run it");
    s.against_baseline = "every case skipped";
    raise(s.status, kNightUnfit);
    return true;
  }
  if (out.exit_code == 130 || s.run->run.status == RunStatus::Interrupted) {
    s.notes.push_back(s.name + ": the run was interrupted; the night stops here");
    raise(s.status, kNightInterrupted);
    return false;
  }
  if (out.exit_code != 0) {
    s.notes.push_back(s.name + ": the run exited " + std::to_string(out.exit_code) +
                      ": a case failed, timed out or was interrupted (" + night_file_stem("report", s.suite) + ".md)");
    raise(s.status, kNightFailed);
  }

  auto j = judge(store, *s.run, options, s.notes, s.name);
  s.against_baseline = j.verdict;
  raise(s.status, j.status);
  s.comparison = std::move(j.cmp);
  if (j.fails) {
    s.worse = s.comparison->worse_cases();
    if (s.worse.empty()) {
      // Not a slower metric: a case that broke, or nothing comparable. A re-run cannot confirm it.
      s.notes.push_back(s.name + ": compare reports a regression without a worse metric (a case that was ok failed, "
                                  "or nothing could be compared): " + night_file_stem("compare", s.suite) + ".md");
      raise(s.status, kNightRegression);
    } else {
      confirm(store, s, options, runner);
    }
  }
  judge_history(store, s, options);
  return true;
}

}  // namespace

std::string exact_ids_filter(const std::vector<std::string>& ids) {
  std::string out = "^(";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += '|';
    for (const char ch : ids[i]) {
      if (std::string_view("\\^$.|?*+()[]{}").find(ch) != std::string_view::npos) out += '\\';
      out += ch;
    }
  }
  return out + ")$";
}

std::string night_file_stem(const std::string& kind, const std::string& suite) {
  std::string name = std::filesystem::path(suite).filename().string();
  if (name.ends_with(".json")) name.resize(name.size() - 5);
  return kind + "-" + name;
}

std::string night_status_name(int status) {
  switch (status) {
    case kNightPass: return "PASS";
    case kNightRegression: return "REGRESSION (confirmed)";
    case kNightUsage: return "USAGE ERROR";
    case kNightUnfit: return "UNFIT ENVIRONMENT";
    case kNightInterrupted: return "INTERRUPTED";
    default: return "FAILED";
  }
}

NightlyResult run_nightly(Store& store, const NightlyOptions& options, const NightRunner& runner) {
  NightlyResult night;
  for (const auto& suite : options.suites) {
    SuiteNight& s = night.suites.emplace_back();
    s.suite = suite;
    s.name = night_file_stem("", suite).substr(1);
    bool go_on = true;
    try {
      go_on = run_suite(store, s, options, runner);
    } catch (const std::exception& e) {  // the store or a comparison failed: this suite's night is lost
      s.notes.push_back(s.name + ": " + e.what());
      raise(s.status, kNightFailed);
    }
    raise(night.status, s.status);
    if (!go_on) {
      night.stopped = night.suites.size() < options.suites.size();
      break;
    }
  }
  return night;
}

}  // namespace mlsb::reports
