#pragma once
// The precision axes' names: a value's index among its axis's names (the order of its enum).
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "util/text.hpp"

namespace mlsb::moe_train::precision {

/// The index of `name` in `names`. Throws std::invalid_argument naming `axis` and listing `names` for another name.
inline size_t index_in(const std::vector<std::string>& names, std::string_view name, std::string_view axis) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  throw std::invalid_argument(std::string(axis) + ": unknown '" + std::string(name) + "' (one of " +
                              join(names, ", ") + ")");
}

}  // namespace mlsb::moe_train::precision
