// OCP 8-bit floats for the fp8 block quantisers; the conversions are backends/formats/small_floats.hpp's.
#include "backends/formats/small_floats.hpp"
#include "workloads/compress/quantize.hpp"

namespace mlsb::compress {

uint8_t float_to_e4m3(float f) { return formats::f32_to_e4m3(f); }
float e4m3_to_float(uint8_t q) { return formats::e4m3_to_f32(q); }
uint8_t float_to_e5m2(float f) { return formats::f32_to_e5m2(f); }
float e5m2_to_float(uint8_t q) { return formats::e5m2_to_f32(q); }

}  // namespace mlsb::compress
