#pragma once
// Builders for the axes workloads declare in info(), and the reader of path axes.
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "harness/workload.hpp"

namespace mlsb {

/// An Int axis bounded to [min, max] (inclusive): the plan rejects values outside, so a workload may
/// narrow the value to a smaller integer type.
Axis int_axis(std::string name, std::vector<int64_t> defaults, std::string help, double min, double max);
/// A Float axis bounded to [min, max] (inclusive).
Axis float_axis(std::string name, std::vector<double> defaults, std::string help, double min, double max);
/// A String axis; when `choices` is not empty its values must be among them.
Axis string_axis(std::string name, std::vector<std::string> defaults, std::string help,
                 std::vector<std::string> choices = {});
/// A String axis whose value is a path (made checkout-independent by the plan) or one of `keywords`.
Axis path_axis(std::string name, std::string def, std::string help, std::vector<std::string> keywords = {});

/// `axis` marked as a data axis (Axis::data): cases that differ only in other axes get the same input.
Axis data_axis(Axis axis);
/// `axis` made to matter only when axis `other` takes one of `values` (Axis::applies_if): `chunks` only with
/// `overlap=chunked`.
Axis applies_when(Axis axis, std::string other, std::vector<std::string> values);

/// The metrics of `vocabulary` named by `names`, in that order: a family of benchmarks declares each metric
/// once and every benchmark picks its own. Throws std::logic_error naming a name not in the vocabulary.
std::vector<Metric> select_metrics(const std::vector<Metric>& vocabulary,
                                   std::initializer_list<std::string_view> names);

/// The path a path axis names (the plan made it absolute or ${source_dir}/${shared_dir}-based).
std::filesystem::path input_path(const State& state, const char* axis);

}  // namespace mlsb
