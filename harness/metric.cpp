#include "harness/metric.hpp"

#include <stdexcept>

namespace mlsb {

std::string_view to_string(Better b) { return b == Better::Lower ? "lower" : "higher"; }

Better parse_better(std::string_view text) {
  if (text == "lower") return Better::Lower;
  if (text == "higher") return Better::Higher;
  throw std::invalid_argument("better: '" + std::string(text) + "' is not 'lower' or 'higher'");
}

}  // namespace mlsb
