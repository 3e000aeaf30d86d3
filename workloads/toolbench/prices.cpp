#include "workloads/toolbench/prices.hpp"

#include "util/json_file.hpp"

namespace mlsb::toolbench {

std::optional<Price> PriceTable::find(std::string_view model) const {
  if (auto it = models.find(std::string(model)); it != models.end()) return it->second;
  std::optional<Price> best;
  std::size_t best_len = 0;
  for (const auto& [name, price] : models) {
    const bool prefix = model.size() > name.size() && model.starts_with(name) &&
                        (model[name.size()] == '-' || model[name.size()] == '@');
    if (prefix && name.size() > best_len) best = price, best_len = name.size();
  }
  return best;
}

double cost_usd(const Price& price, double input_tokens, double output_tokens) {
  return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6;
}

PriceTable load_prices(const std::filesystem::path& path) {
  const nlohmann::json j = read_json_file(path, "prices", kMaxConfigFileBytes);
  const std::string where = "prices " + path.string() + ": ";
  if (!j.is_object() || !j.contains("models") || !j["models"].is_object())
    throw JsonFileError(where + "expected an object with a \"models\" object");
  PriceTable table;
  for (const auto& [model, entry] : j["models"].items()) {
    Price p;
    for (auto [field, out] : {std::pair{"input_per_mtok", &p.input_per_mtok}, std::pair{"output_per_mtok", &p.output_per_mtok}}) {
      const std::string at = "models." + model + "." + field;
      if (!entry.is_object() || !entry.contains(field) || !entry[field].is_number() || entry[field].get<double>() < 0)
        throw JsonFileError(where + at + ": expected a number >= 0 (USD per million tokens)");
      *out = entry[field].get<double>();
    }
    table.models[model] = p;
  }
  return table;
}

}  // namespace mlsb::toolbench
