#include "reports/detail/case_charts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "reports/detail/html_page.hpp"
#include "reports/detail/svg_chart.hpp"
#include "reports/detail/xy_chart.hpp"

namespace mlsb::reports::detail {
namespace {

// Metric pairs that trade against each other, drawn as a scatter with the Pareto frontier when a
// workload's cases record both (metric names: the workloads' READMEs).
struct TradeOff {
  const char* x;
  const char* y;
  const char* what;
};
constexpr TradeOff kTradeOffs[] = {
    {"compress_gbps", "ratio", "compression ratio against compression throughput"},
};

// Metrics drawn against an axis besides the primary one when cases sweep it, with the case at a
// reference value of another axis (if one is named) as a dashed line on their chart and on the primary metric's
// against the same axis (metric and axis names: the workloads' READMEs).
struct SweptMetric {
  const char* axis;
  const char* metric;
  const char* reference_axis;
  const char* reference_value;
};
constexpr SweptMetric kSweptMetrics[] = {
    {"chunks", "exposed_comm_ms", "overlap", "none"},  // moe_train.layer: the communication chunking hides
    {"ep", "cross_node_bytes", nullptr, nullptr},      // moe_train.block: what each mapping sends between nodes
};

// A time and the times it is made of, drawn as stacked bars.
struct Breakdown {
  const char* total;
  std::vector<std::string> parts;
};
const Breakdown kBreakdowns[] = {
    // moe_train.layer: the optimizer; moe_train.block: the gradient reductions (parts no case has are left out)
    {"step_ms", {"forward_ms", "backward_ms", "optimizer_ms", "grad_sync_ms"}},
};

const SummaryRow* ok_summary(const CaseRecord& c, const std::string& metric) {
  return c.status == CaseStatus::Ok ? find_summary(c, metric) : nullptr;
}

std::string param_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The family a case says it belongs to: its item "group" {"name": "lossless"}; "" when it has none.
std::string case_group(const CaseRecord& c) {
  for (const auto& [key, item] : c.items)
    if (key == "group" && item.is_object() && item.contains("name") && item["name"].is_string())
      return item["name"].get<std::string>();
  return "";
}

// "codec, link" for the line names "codec=exponent,link=nvlink": the axes that tell the lines apart.
std::string join_axes(const std::string& others) {
  std::string out;
  for (size_t at = 0; at < others.size();) {
    const size_t eq = others.find('=', at), comma = others.find(',', at);
    out += (out.empty() ? "" : ", ") + others.substr(at, eq - at);
    at = comma == std::string::npos ? others.size() : comma + 1;
  }
  return out;
}

// Each axis of the group's cases -> its values among them (as JSON text).
std::map<std::string, std::set<std::string>> axis_values(const WorkloadGroup& g) {
  std::map<std::string, std::set<std::string>> seen;
  for (const CaseRecord* c : g.cases)
    if (c->params.is_object())
      for (const auto& [axis, v] : c->params.items()) seen[axis].insert(v.dump());
  return seen;
}

// Charts folded under a summary line ("2 more bar charts: ..."): what a reader opens only when asked.
std::string folded_charts(int count, const std::string& what, const std::string& charts) {
  return "<details class=\"more-charts\"><summary>" + std::to_string(count) + " more " + what + "</summary>\n" +
         charts + "</details>\n";
}

}  // namespace

void sweep_charts(std::string& out, const WorkloadGroup& g) {
  std::map<std::string, std::set<std::string>> seen = axis_values(g);
  std::map<std::string, std::set<double>> values;  // numeric axis -> its values among ok cases
  for (const CaseRecord* c : g.cases)
    if (c->status == CaseStatus::Ok && c->params.is_object())
      for (const auto& [axis, v] : c->params.items())
        if (v.is_number()) values[axis].insert(v.get<double>());
  for (const auto& [axis, vals] : values) {
    if (vals.size() < 3) continue;
    // A sweep over 64x or more (sizes): log-log, and the bandwidths against it as nccl-tests prints them.
    const bool log_x = *vals.begin() > 0 && *vals.rbegin() / *vals.begin() >= 64;
    struct Line {
      std::vector<std::pair<double, double>> points;
      const CaseRecord* any = nullptr;  // one of its cases: the others' axes for the reference
    };
    struct Chart {
      std::string unit;
      const SweptMetric* reference = nullptr;  // where the dashed lines come from, if any
      std::map<std::string, Line> lines;       // the other axes that vary, by value -> its line
    };
    std::map<std::string, Chart> charts;  // metric -> its chart, in metric order
    const SweptMetric* primary_reference = nullptr;  // the primary metric's dashed line against this axis
    for (const SweptMetric& m : kSweptMetrics)
      if (m.axis == axis && m.reference_axis) primary_reference = &m;
    for (const CaseRecord* c : g.cases) {
      if (!c->params.contains(axis) || !c->params[axis].is_number()) continue;
      // At the reference value the axis does nothing (overlap=none ignores chunks): no line against it.
      if (primary_reference && c->params.contains(primary_reference->reference_axis) &&
          param_text(c->params[primary_reference->reference_axis]) == primary_reference->reference_value)
        continue;
      std::string others;
      for (const auto& [k, v] : c->params.items())
        if (k != axis && seen[k].size() > 1) others += (others.empty() ? "" : ",") + k + "=" + param_text(v);
      auto add = [&](const std::string& metric, const SweptMetric* reference) {
        const SummaryRow* s = ok_summary(*c, metric);
        if (!s) return;
        Chart& chart = charts[metric];
        Line& line = chart.lines[others];
        line.points.push_back({c->params[axis].get<double>(), s->stats.median});
        line.any = c;
        chart.unit = s->unit;
        chart.reference = reference;
      };
      add(c->primary_metric, primary_reference);
      for (const SweptMetric& m : kSweptMetrics)
        if (m.axis == axis && m.metric != c->primary_metric) add(m.metric, m.reference_axis ? &m : nullptr);
      if (log_x)
        for (const auto& [metric, unit] : g.metrics)
          if (unit == "GB/s" && metric != c->primary_metric) add(metric, nullptr);
    }
    for (auto& [metric, chart] : charts) {
      std::vector<XySeries> series;
      XyOptions options;
      options.log2_x = log_x;
      options.log10_y = log_x;
      std::vector<std::string> references;
      for (auto& [others, line] : chart.lines) {
        if (line.points.size() < 3) continue;
        std::sort(line.points.begin(), line.points.end());
        series.push_back({others, line.points});
        if (!chart.reference) continue;
        // The schedule without the axis's effect: the case at the reference value that matches the
        // line on every other axis.
        const SweptMetric& m = *chart.reference;
        for (const CaseRecord* c : g.cases) {
          if (!c->params.contains(m.reference_axis) || param_text(c->params[m.reference_axis]) != m.reference_value)
            continue;
          bool same = true;
          for (const auto& [k, v] : line.any->params.items())
            if (k != axis && k != m.reference_axis && c->params.contains(k) && c->params[k] != v) same = false;
          const SummaryRow* s = same ? ok_summary(*c, metric) : nullptr;
          if (!s) continue;
          const std::string name = std::string(m.reference_axis) + "=" + m.reference_value;
          options.marks.push_back({s->stats.median, chart.lines.size() > 1 ? name + " (" + others + ")" : name});
          if (references.empty()) references.push_back(name);
          break;
        }
      }
      if (series.empty()) continue;
      if (series.size() == 1) series[0].label.clear();  // one line: named in the caption
      const std::string only = chart.lines.size() == 1 ? chart.lines.begin()->first : "";
      const std::string caption = metric_with_unit(metric, chart.unit) + " against " + axis +
                                  (log_x ? " (log2 scale)" : "") + (only.empty() ? "" : ", " + only) +
                                  (series.size() > 1 ? ", a line per " + join_axes(chart.lines.begin()->first) : "") +
                                  (references.empty() ? "" : "; dashed: " + references.front());
      out += html_figure(caption, line_chart_svg(g.workload + " " + caption, axis,
                                                 metric_with_unit(metric, chart.unit), series, options));
    }
  }
}

void tradeoff_charts(std::string& out, const WorkloadGroup& g) {
  const std::vector<std::string> labels = distinct_labels(g.names);
  // A frontier compares methods on one input: the cases split by the numeric axes that vary (sizes).
  const auto seen = axis_values(g);
  const auto input_of = [&](const CaseRecord& c) {
    std::string key;
    for (const auto& [axis, vals] : seen)
      if (vals.size() > 1 && c.params.contains(axis) && c.params[axis].is_number())
        key += (key.empty() ? "" : ",") + axis + "=" + param_text(c.params[axis]);
    return key;
  };
  for (const TradeOff& t : kTradeOffs) {
    std::map<std::string, std::vector<ScatterPoint>> inputs;  // input -> its points
    std::vector<std::string> order;                           // inputs in case order
    const SummaryRow *sx = nullptr, *sy = nullptr;
    for (size_t i = 0; i < g.cases.size(); ++i) {
      const SummaryRow* x = ok_summary(*g.cases[i], t.x);
      const SummaryRow* y = ok_summary(*g.cases[i], t.y);
      if (!x || !y) continue;
      sx = x, sy = y;
      const std::string input = input_of(*g.cases[i]);
      if (!inputs.count(input)) order.push_back(input);
      inputs[input].push_back({labels[i], x->stats.median, y->stats.median});
    }
    const std::string x_label = sx ? metric_with_unit(t.x, sx->unit) : "", y_label = sy ? metric_with_unit(t.y, sy->unit) : "";
    std::string first, rest;
    int folded = 0;
    for (auto at = order.rbegin(); at != order.rend(); ++at) {  // the last input (the largest size) first
      const auto& points = inputs[*at];
      if (points.size() < 3) continue;
      const std::string caption = std::string(t.what) + ": " + y_label + " against " + x_label +
                                  (at->empty() ? "" : " at " + *at) + " (medians; the Pareto frontier joined)";
      const std::string chart = html_figure(caption, scatter_chart_svg(g.workload + " " + caption, x_label, y_label, points,
                                                                       sx->better == Better::Higher,
                                                                       sy->better == Better::Higher));
      if (first.empty()) {
        first = chart;
      } else {
        rest += chart;
        ++folded;
      }
    }
    out += first;
    if (folded > 0) out += folded_charts(folded, "Pareto frontiers, one per " + join_axes(order.front()), rest);
  }
}

void breakdown_charts(std::string& out, const WorkloadGroup& g) {
  const std::vector<std::string> labels = distinct_labels(g.names);
  for (const Breakdown& bd : kBreakdowns) {
    Breakdown b{bd.total, {}};  // the parts some case records
    for (const std::string& part : bd.parts)
      if (std::any_of(g.cases.begin(), g.cases.end(), [&](const CaseRecord* c) { return ok_summary(*c, part) != nullptr; }))
        b.parts.push_back(part);
    std::vector<StackedBar> bars;
    std::vector<std::string> names = b.parts;
    names.push_back("other");
    std::string unit;
    for (size_t i = 0; i < g.cases.size(); ++i) {
      const SummaryRow* total = ok_summary(*g.cases[i], b.total);
      if (!total) continue;
      StackedBar bar{labels[i], {}};
      double sum = 0;
      int present = 0;
      for (const std::string& part : b.parts) {
        const SummaryRow* s = ok_summary(*g.cases[i], part);
        bar.parts.push_back(s ? s->stats.median : 0);
        sum += s ? s->stats.median : 0;
        present += s != nullptr;
      }
      if (present < 2) continue;
      const double rest = total->stats.median - sum;
      bar.parts.push_back(rest > 0.01 * total->stats.median ? rest : 0);
      unit = total->unit;
      bars.push_back(std::move(bar));
    }
    if (bars.empty()) continue;
    const std::string caption = std::string(b.total) + " split into its parts (" + unit + ", medians per case)";
    out += html_figure(caption, stacked_bar_chart_svg(g.workload + " " + caption, unit, names, bars));
  }
}

void metric_charts(std::string& out, const WorkloadGroup& g) {
  const std::vector<std::string> labels = distinct_labels(g.names);
  std::set<std::string> primary;
  for (const CaseRecord* c : g.cases) primary.insert(c->primary_metric);
  std::string others;
  int more = 0;
  for (const auto& [metric, unit] : g.metrics) {
    std::vector<Bar> bars;
    Better better = Better::Lower;
    for (size_t i = 0; i < g.cases.size(); ++i) {
      const SummaryRow* s = ok_summary(*g.cases[i], metric);
      if (!s) continue;
      better = s->better;
      bars.push_back({labels[i], s->stats.median, s->stats.ci_lo, s->stats.ci_hi, case_group(*g.cases[i])});
    }
    // A family's bars together, the families in order of first appearance.
    std::vector<std::string> order;
    for (const Bar& b : bars)
      if (std::find(order.begin(), order.end(), b.group) == order.end()) order.push_back(b.group);
    std::stable_sort(bars.begin(), bars.end(), [&](const Bar& a, const Bar& b) {
      return std::find(order.begin(), order.end(), a.group) < std::find(order.begin(), order.end(), b.group);
    });
    const bool differ = std::any_of(bars.begin(), bars.end(), [&](const Bar& b) { return b.value != bars[0].value; });
    if (bars.size() < 2 || !differ) continue;
    double lo = INFINITY, hi = 0, smallest = INFINITY;  // medians; and every bound drawn (a CI may reach 0)
    for (const Bar& b : bars) {
      lo = std::min(lo, b.value), hi = std::max(hi, b.value);
      for (double v : {b.value, b.lo, b.hi})
        if (std::isfinite(v)) smallest = std::min(smallest, v);
    }
    const bool log_scale = lo > 0 && smallest > 0 && hi / lo >= 10;
    const std::string caption = metric_with_unit(metric, unit) + ", " + std::string(to_string(better)) +
                                " is better: median per case, 95% CI" + (log_scale ? ", log scale" : "");
    const std::string chart = html_figure(caption, bar_chart_svg(g.workload + " " + metric, unit, bars, log_scale));
    if (primary.count(metric)) {
      out += chart;
    } else {
      others += chart;
      ++more;
    }
  }
  if (more > 0) out += folded_charts(more, "bar charts: every other metric that differs between the cases", others);
}

}  // namespace mlsb::reports::detail
