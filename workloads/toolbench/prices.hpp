#pragma once
// Model prices, for the estimated cost of a toolbench run: a JSON file of USD per million tokens.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mlsb::toolbench {

/// USD per million input and output tokens.
struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

/// A price table: {"models": {"<model>": {"input_per_mtok": 2.5, "output_per_mtok": 10}, ...}}.
struct PriceTable {
  std::map<std::string, Price> models;

  /// The price of `model`: its own entry, else the longest entry that is a prefix of it followed by
  /// '-' or '@' (a dated snapshot "gpt-4o-2024-08-06" takes "gpt-4o", not "gpt-4"); nullopt when none.
  std::optional<Price> find(std::string_view model) const;
};

/// Estimated cost in USD of `input_tokens` and `output_tokens` at `price`.
double cost_usd(const Price& price, double input_tokens, double output_tokens);

/// Reads a price table. Throws JsonFileError naming the file, and for a field that is missing, not a
/// number or negative ("prices <file>: models.gpt-4o.input_per_mtok: ...").
PriceTable load_prices(const std::filesystem::path& path);

}  // namespace mlsb::toolbench
