#include "workloads/compress/link_model.hpp"

#include <cmath>

namespace mlsb::compress {

double modelled_step_s(double compress_s, double wire_bytes, double decompress_s, double link_gbps) {
  return compress_s + transfer_s(wire_bytes, link_gbps) + decompress_s;
}

double break_even_gbps(double original_bytes, double ratio, double compress_s, double decompress_s) {
  if (!(ratio > 1)) return 0;
  const double codec_s = compress_s + decompress_s;
  if (!(codec_s > 0)) return INFINITY;
  return original_bytes * (1 - 1 / ratio) / codec_s / 1e9;
}

}  // namespace mlsb::compress
