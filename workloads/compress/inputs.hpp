#pragma once
// Inputs of the compress workload: synthetic generators and real tensors from safetensors / .npy files.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "backends/formats/tensor_file.hpp"
#include "workloads/compress/tensor.hpp"

namespace mlsb::compress {

/// A tensor file is unreadable, truncated, malformed, or holds an unsupported dtype; the message
/// names the file and the field or tensor (backends/formats/tensor_file.hpp).
using formats::TensorFileError;

/// Synthetic distributions: "gaussian" N(0, sigma), "laplace" (scale sigma/sqrt 2, same stddev),
/// "uniform" U(-sigma*sqrt 3, sigma*sqrt 3) (same stddev), "outliers" (gaussian with 0.1% of elements
/// scaled by 100), "pathological" (gaussian mixed with NaNs of several payloads, ±Inf, ±0, subnormals,
/// the largest and smallest normals, in every dtype).
const std::vector<std::string>& distribution_names();

/// Generates `count` elements (64-bit: may exceed 2^31 bytes) of `dtype`, reproducibly from `seed`
/// (the same seed, distribution and sigma give the same bytes whatever the thread count).
/// Throws std::invalid_argument for an unknown distribution, count < 0 or sigma <= 0.
Tensor generate(std::string_view distribution, DType dtype, int64_t count, double sigma, uint64_t seed);

/// Tensors stored in a file: safetensors (Hugging Face format: 8-byte header length, JSON header with
/// dtype/shape/data_offsets per tensor) or NumPy .npy (v1-v3; '<f4', '<f2'; bf16 as '<V2' is not
/// standard, so .npy holds fp32/fp16). Dtypes F32, F16, BF16 are supported; others get TensorFileError.
/// The format is told by the magic bytes ("\x93NUMPY"), not the extension. safetensors: read and checked
/// by formats::read_safetensors_header (header limits, offsets against the data section and the shape),
/// tensors listed in data-offset order; only the requested tensor's bytes are read. .npy:
/// big-endian '>f4'/'>f2' are byte-swapped on load; fortran_order True is refused unless at most one
/// dimension exceeds 1 (then the bytes are the same).
struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t count;
};
/// Lists a file's tensors (header only). A .npy file holds one tensor named after the file's stem.
std::vector<TensorInfo> list_tensors(const std::filesystem::path& file);
/// Loads one tensor by name, or every tensor concatenated into one 1-D tensor for `name` == "all"
/// (all must share a dtype). Throws TensorFileError (unknown name, truncated data, bad header).
Tensor load_tensor(const std::filesystem::path& file, std::string_view name);

/// Writers, for tests and for users who want fixtures.
/// An empty shape is written as 1-D; std::invalid_argument for a shape that does not match the data, a
/// repeated/empty/"__metadata__" name, or (npy) bf16, which .npy cannot hold; TensorFileError on I/O failure.
void write_safetensors(const std::filesystem::path& file, const std::vector<Tensor>& tensors);
void write_npy(const std::filesystem::path& file, const Tensor& tensor);

}  // namespace mlsb::compress
