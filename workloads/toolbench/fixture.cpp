#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "workloads/toolbench/fixture.hpp"
#include "util/json_file.hpp"

namespace mlsb::toolbench {

namespace fs = std::filesystem;

FixtureSource resolve_fixture(const std::string& value, const fs::path& dataset) {
  if (value != "auto") {
    if (!fs::is_directory(value))
      throw FixtureError("fixture folder " + value + (fs::exists(value) ? " is not a folder" : " does not exist"));
    return {fs::path(value), false};
  }
  const fs::path dir = dataset.parent_path().empty() ? fs::path(".") : dataset.parent_path();
  if (fs::is_directory(dir / "fixture")) return {dir / "fixture", false};
  if (!fs::is_directory(dir)) throw FixtureError("fixture folder " + dir.string() + " does not exist");
  return {dir, true};
}

std::vector<Placeholder> load_placeholders(const fs::path& file) {
  nlohmann::json doc;
  try {
    doc = read_json_file(file, "placeholders file", kMaxConfigFileBytes);
  } catch (const JsonFileError& e) {
    throw FixtureError(e.what());
  }
  if (!doc.is_object() || !doc.contains("placeholders") || !doc["placeholders"].is_array())
    throw FixtureError("placeholders file " + file.string() + ": expected {\"placeholders\": [...]}");
  std::vector<Placeholder> out;
  for (std::size_t i = 0; i < doc["placeholders"].size(); ++i) {
    const auto& e = doc["placeholders"][i];
    const std::string where = "placeholders file " + file.string() + ": entry " + std::to_string(i);
    if (!e.is_object() || !e.contains("path") || !e["path"].is_string() || !e.contains("content") ||
        !e["content"].is_string())
      throw FixtureError(where + ": needs string fields 'path' and 'content'");
    fs::path p = e["path"].get<std::string>();
    bool escapes = false;
    for (const auto& part : p) escapes = escapes || part == "..";
    if (p.empty() || p.is_absolute() || escapes)
      throw FixtureError(where + ": path '" + p.string() + "' must be relative and stay inside the fixture");
    out.push_back({p.lexically_normal(), e["content"].get<std::string>()});
  }
  return out;
}

std::vector<fs::path> make_trial_copy(const FixtureSource& source, const fs::path& dest,
                                      const std::vector<Placeholder>& placeholders) {
  std::error_code ec;
  if (!fs::is_directory(source.dir)) throw FixtureError("fixture folder " + source.dir.string() + " does not exist");
  if (!fs::create_directories(dest, ec) || ec)
    throw FixtureError("cannot create fixture copy " + dest.string() + (ec ? ": " + ec.message() : ": exists"));
  const auto opts = fs::copy_options::recursive | fs::copy_options::copy_symlinks;
  for (const auto& entry : fs::directory_iterator(source.dir)) {
    if (source.subdirs_only && !entry.is_directory()) continue;
    fs::copy(entry.path(), dest / entry.path().filename(), opts, ec);
    if (ec) throw FixtureError("cannot copy " + entry.path().string() + " to " + dest.string() + ": " + ec.message());
  }
  // Sources may be read-only (a shared, published tree); write tasks need a writable copy.
  for (auto it = fs::recursive_directory_iterator(dest); it != fs::recursive_directory_iterator(); ++it)
    if (!it->is_symlink()) fs::permissions(it->path(), fs::perms::owner_write, fs::perm_options::add);
  std::vector<fs::path> created;
  for (const auto& p : placeholders) {
    const fs::path target = dest / p.path;
    const bool applies = std::distance(p.path.begin(), p.path.end()) == 1 || fs::is_directory(dest / *p.path.begin());
    if (!applies || fs::exists(target)) continue;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    if (!(out << p.content)) throw FixtureError("cannot write placeholder " + target.string());
    created.push_back(p.path);
  }
  return created;
}

}  // namespace mlsb::toolbench
