#pragma once
// Golden files: an output checked in under tests/unit/<area>/golden/ and compared line by line, with
// placeholders for what may vary (`{{num}}` a number, `{{*}}` any text). MLSB_UPDATE_GOLDEN=1 rewrites a
// golden file that holds no placeholder with the actual output (one that holds some is edited by hand).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

#include "support/test_support.hpp"

namespace mlsb::test {

/// tests/unit/<area>/golden/<name> in the source tree.
inline std::filesystem::path golden_file(std::string_view area, std::string_view name) {
  return source_dir() / "tests" / "unit" / area / "golden" / name;
}

/// Compares `actual` with a golden file line by line. In the golden text `{{num}}` matches a number
/// (or null), `{{*}}` any text; everything else is literal, the final newline included. Returns "" on a match,
/// else the first mismatch.
inline std::string golden_mismatch(const std::string& golden, const std::string& actual) {
  std::istringstream g(golden), a(actual);
  std::string gl, al;
  for (int line = 1;; ++line) {
    const bool more_g = static_cast<bool>(std::getline(g, gl)), more_a = static_cast<bool>(std::getline(a, al));
    if (!more_g && !more_a) return golden.ends_with('\n') == actual.ends_with('\n') ? "" : "the final newline differs";
    if (more_g != more_a)
      return "line " + std::to_string(line) + ": lengths differ (golden " + (more_g ? "'" + gl + "'" : "ended") +
             ", actual " + (more_a ? "'" + al + "'" : "ended") + ")";
    std::string pattern;
    for (size_t i = 0; i < gl.size();) {
      if (gl.compare(i, 7, "{{num}}") == 0) {
        pattern += R"((-?[0-9][0-9.]*(e[-+]?[0-9]+)?|null|n/a))";
        i += 7;
      } else if (gl.compare(i, 5, "{{*}}") == 0) {
        pattern += ".*";
        i += 5;
      } else {
        if (std::string_view("\\^$.|?*+()[]{}").find(gl[i]) != std::string_view::npos) pattern += '\\';
        pattern += gl[i++];
      }
    }
    if (!std::regex_match(al, std::regex(pattern)))
      return "line " + std::to_string(line) + ":\n  golden: " + gl + "\n  actual: " + al;
  }
}

/// Expects `actual` to match the golden file `file` (see golden_mismatch); prints the actual output when not.
inline void expect_golden(const std::filesystem::path& file, const std::string& actual) {
  const std::string golden = read_file(file);
  const std::string mismatch = golden_mismatch(golden, actual);
  if (mismatch.empty()) return;
  if (const char* update = std::getenv("MLSB_UPDATE_GOLDEN"); update && std::string_view(update) == "1") {
    if (golden.find("{{num}}") == std::string::npos && golden.find("{{*}}") == std::string::npos) {
      write_file(file, actual);
      std::cerr << "updated golden file " << file.string() << "\n";
      return;
    }
    ADD_FAILURE() << file.filename().string() << " holds placeholders: edit it by hand";
  }
  ADD_FAILURE() << file.filename().string() << " differs: " << mismatch << "\nactual output:\n" << actual;
}

}  // namespace mlsb::test
