#pragma once
// The text corpus of the lm mode: real English text found on the machine or given by the user.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mlsb::moe_train {

struct Corpus {
  std::string text;    ///< the bytes, files concatenated in sorted path order
  int64_t files = 0;   ///< files read
  std::string source;  ///< what was read, for the case's items
};

/// Reads at most `max_bytes` bytes: "system" = the licence texts under /usr/share/common-licenses,
/// then /usr/share/doc/*/copyright (Debian ships both on every machine); a file; or every regular
/// file under a folder; of each file only what still fits is read. Files with a NUL byte (binary),
/// special files (FIFOs, devices) and repeated targets of links are skipped.
/// Throws std::invalid_argument("corpus: ...") when nothing readable is found or fewer than
/// `min_bytes` bytes are.
Corpus load_corpus(const std::string& where, int64_t max_bytes, int64_t min_bytes);

}  // namespace mlsb::moe_train
