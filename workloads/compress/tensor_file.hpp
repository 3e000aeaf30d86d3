#pragma once
// Shared pieces of the tensor-file readers and writers (tensor_file.cpp, npy.cpp); not part of the public API.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "backends/formats/tensor_file.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress::detail {

std::vector<TensorInfo> npy_list(formats::InputFile& file);
Tensor npy_load(formats::InputFile& file, std::string_view name);

/// Writes the concatenated `pieces` to `file` (truncating it); throws TensorFileError naming the file on failure.
void write_file(const std::filesystem::path& file, std::span<const std::span<const uint8_t>> pieces);

}  // namespace mlsb::compress::detail
