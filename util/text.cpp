#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace mlsb {
namespace {

// Words that mark the line of a log that names the cause (log_excerpt).
constexpr std::string_view kErrorWords[] = {"error", "exception", "fatal", "cannot", "denied"};

}  // namespace

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(sep, start);
    parts.emplace_back(text.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

namespace {
bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
}  // namespace

size_t utf8_boundary_before(std::string_view text, size_t i) {
  while (i > 0 && i < text.size() && continuation_byte(text[i])) --i;
  return i;
}

size_t utf8_boundary_after(std::string_view text, size_t i) {
  while (i < text.size() && continuation_byte(text[i])) ++i;
  return i;
}

size_t utf8_columns(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

std::string word_wrap(std::string_view text, size_t width, size_t indent) {
  std::string out;
  size_t line = indent;  // columns on the current line
  bool start = true;     // no word on the current line yet
  for (const std::string& word : split(text, ' ')) {
    if (word.empty()) continue;
    const size_t n = utf8_columns(word);
    if (!start && line + 1 + n > width) {
      out += "\n" + std::string(indent, ' ');
      line = indent;
      start = true;
    }
    if (!start) out += ' ', ++line;
    out += word;
    line += n;
    start = false;
  }
  return out;
}

std::string utf8_truncate(std::string_view text, size_t max_bytes, std::string_view ellipsis) {
  if (text.size() <= max_bytes) return std::string(text);
  const size_t cut = utf8_boundary_before(text, max_bytes > ellipsis.size() ? max_bytes - ellipsis.size() : 0);
  return std::string(text.substr(0, cut)) + std::string(ellipsis);
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string w = ascii_lower(word);
  const size_t limit = std::clamp<size_t>(w.size() / 3, 1, 3);
  size_t best = limit + 1;
  const std::string* pick = nullptr;
  for (const auto& cand : candidates) {
    const std::string c = ascii_lower(cand);
    if (cand == word) continue;  // itself; a candidate differing only in case is 0 edits away, the best
    // d[i][j]: edits between w[0, i) and c[0, j), a swap of two neighbours counting one (optimal string
    // alignment: "agnet" is one edit from "agent").
    std::vector<std::vector<size_t>> d(w.size() + 1, std::vector<size_t>(c.size() + 1));
    for (size_t i = 0; i <= w.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= c.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= w.size(); ++i)
      for (size_t j = 1; j <= c.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (w[i - 1] == c[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && w[i - 1] == c[j - 2] && w[i - 2] == c[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    if (d[w.size()][c.size()] < best) {
      best = d[w.size()][c.size()];
      pick = &cand;
    }
  }
  return pick ? " (did you mean '" + *pick + "'?)" : "";
}

std::string utf8_excerpt(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  const size_t cut = utf8_boundary_before(text, max_bytes);
  return std::string(text.substr(0, cut)) + "... [cut: " + std::to_string(cut) + " of " +
         std::to_string(text.size()) + " bytes shown]";
}

std::string log_excerpt(std::string_view text, size_t tail_bytes) {
  if (text.size() <= tail_bytes) return std::string(text);
  const auto gap = [&](size_t bytes) {
    return "[... " + std::to_string(bytes) + " bytes cut of " + std::to_string(text.size()) + " ...] ";
  };
  const size_t tail = utf8_boundary_after(text, text.size() - tail_bytes);
  std::string out;
  size_t shown = 0;  // bytes before the tail that `out` accounts for
  for (size_t pos = 0; pos < tail;) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = ascii_lower(text.substr(pos, end - pos));
    const bool names_error = std::any_of(std::begin(kErrorWords), std::end(kErrorWords),
                                         [&](std::string_view w) { return line.find(w) != std::string::npos; });
    if (names_error) {
      const size_t stop = std::min({end, tail, utf8_boundary_after(text, pos + tail_bytes)});
      out = (pos > 0 ? gap(pos) : "") + std::string(text.substr(pos, stop - pos)) + " ";
      shown = stop;
      break;
    }
    pos = end + 1;
  }
  if (tail > shown) out += gap(tail - shown);
  return out + std::string(text.substr(tail));
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string shortest(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

}  // namespace mlsb
