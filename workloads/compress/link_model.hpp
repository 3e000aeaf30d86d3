#pragma once
// What-if model of a link: a transfer costs compress + bytes / bandwidth + decompress. Bandwidths are
// GB/s (1e9 bytes/s, the unit of algbw/busbw; 100 Gbit/s Ethernet is 12.5 GB/s). The transfer itself is
// backends/comm/link_model.hpp's, which expert parallelism (moe_train) models its links with too.
#include "backends/comm/link_model.hpp"

namespace mlsb::compress {

using comm::transfer_s;

/// Modelled time of one compressed transfer step: compress_s + wire_bytes / link + decompress_s.
double modelled_step_s(double compress_s, double wire_bytes, double decompress_s, double link_gbps);

/// The bandwidth (GB/s) below which compressing `original_bytes` at `ratio` pays:
/// tc + td + S / (r B) < S / B  <=>  B < S (1 - 1/r) / (tc + td). 0 when ratio <= 1 (never pays);
/// +inf when the codec takes no measurable time.
double break_even_gbps(double original_bytes, double ratio, double compress_s, double decompress_s);

}  // namespace mlsb::compress
