#include "util/uuid.hpp"

#include <cstdint>
#include <cstdio>
#include <random>

namespace mlsb {

std::string random_uuid() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  const uint64_t hi = (rng() & ~0xF000ULL) | 0x4000ULL;                       // version 4
  const uint64_t lo = (rng() & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
                (unsigned long long)((hi >> 16) & 0xFFFF), (unsigned long long)(hi & 0xFFFF),
                (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

}  // namespace mlsb
