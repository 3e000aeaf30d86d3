#pragma once
// The compress family of benchmarks, each registered on its own with only the axes it reads:
//   compress.codec       one codec's round trip on one tensor (ratio, GB/s, entropy bound, error)
//   compress.collective  a collective with the codec in the loop, beside the uncompressed collective
//   compress.plan        a Kimad-style per-tensor codec choice for a model's tensors under an error budget
// `compress` (with `-p mode=codec|collective|plan`, codec by default) is an alias for them, so suites,
// command lines and stored runs of the single workload they were keep working.
#include <string>
#include <string_view>
#include <vector>

#include "harness/workload.hpp"

namespace mlsb::compress {

/// The axes that define the input tensor: dtype, distribution, sigma, elements, tensor_file, tensor.
std::vector<Axis> input_axes();
/// The axes of the codec under test: codec, level, block, density, rank, error_feedback, threads.
std::vector<Axis> codec_axes();
/// threads: codec threads (the chunked codecs: exponent, zstd, lz4).
Axis threads_axis();
/// link_gbps: the modelled link's bandwidth (GB/s; 0 = no model).
Axis link_axis();

/// The family's metrics named by `names`, in that order, from one vocabulary (select_metrics).
std::vector<Metric> family_metrics(std::initializer_list<std::string_view> names);

/// The family's runner defaults: a round trip or collective takes milliseconds to seconds.
RunnerDefaults family_runner();

/// The size of a generated input (elements x the dtype's size), for the runner's out-of-memory reason;
/// "" for a tensor read from a file.
std::string input_memory_hint(const State& state);

}  // namespace mlsb::compress
