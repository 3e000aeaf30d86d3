#pragma once
// A stored case's summary of a metric, as the integration tests read them: one lookup for every test.
#include <gtest/gtest.h>

#include <cmath>
#include <string_view>

#include "reports/detail/report_text.hpp"

namespace mlsb::test {

/// The case's summary row of `metric` (nullptr when it has none): the reports' own lookup.
using reports::detail::find_summary;

/// The median of `metric` over the case's samples; a test failure, and NaN, when the case lacks it.
inline double median_of(const reports::CaseRecord& c, std::string_view metric) {
  const reports::SummaryRow* s = find_summary(c, metric);
  if (!s) {
    ADD_FAILURE() << c.params_key << " lacks " << metric;
    return NAN;
  }
  return s->stats.median;
}

}  // namespace mlsb::test
