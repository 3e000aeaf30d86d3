#include "workloads/moe_train/corpus.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

namespace mlsb::moe_train {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> system_files() {
  std::vector<fs::path> out = files_under("/usr/share/common-licenses");
  std::vector<fs::path> docs;
  std::error_code ec;
  for (fs::directory_iterator it("/usr/share/doc", ec), end; !ec && it != end; it.increment(ec))
    if (fs::is_regular_file(it->path() / "copyright", ec)) docs.push_back(it->path() / "copyright");
  std::sort(docs.begin(), docs.end());
  out.insert(out.end(), docs.begin(), docs.end());
  return out;
}

}  // namespace

Corpus load_corpus(const std::string& where, int64_t max_bytes, int64_t min_bytes) {
  std::vector<fs::path> files;
  if (where == "system") {
    files = system_files();
  } else if (fs::is_directory(where)) {
    files = files_under(where);
  } else if (fs::is_regular_file(where)) {
    files = {where};
  } else {
    throw std::invalid_argument("corpus: '" + where + "' is neither a file, a folder nor 'system'");
  }
  Corpus c;
  c.source = where == "system" ? "/usr/share/common-licenses + /usr/share/doc/*/copyright" : where;
  std::set<fs::path> seen;
  for (const auto& f : files) {
    if (static_cast<int64_t>(c.text.size()) >= max_bytes) break;
    std::error_code ec;
    const fs::path real = fs::canonical(f, ec);
    if (ec || !fs::is_regular_file(real, ec) || !seen.insert(real).second) continue;
    // Read no more than still fits: a huge file costs only what is kept of it.
    const size_t room = static_cast<size_t>(max_bytes) - c.text.size();
    std::string body(std::min<uintmax_t>(room, fs::file_size(real, ec)), '\0');
    if (ec) continue;
    std::ifstream in(real, std::ios::binary);
    in.read(body.data(), static_cast<std::streamsize>(body.size()));
    body.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
    if (body.empty() || body.find('\0') != std::string::npos) continue;
    c.text += body;
    ++c.files;
  }
  if (static_cast<int64_t>(c.text.size()) < min_bytes)
    throw std::invalid_argument("corpus: " + c.source + " holds " + std::to_string(c.text.size()) +
                                " bytes of text; the run needs at least " + std::to_string(min_bytes));
  return c;
}

}  // namespace mlsb::moe_train
