// Google Benchmark microbenchmarks of every codec. Lossless codecs run on the reference buffer,
// 128 MiB of bf16 drawn from N(0, 0.02) (seed 1), compressing and decompressing with 1 and 2 threads;
// lossy codecs (one thread) on 32 MiB of fp32 from the same distribution, with counter rel_l2_error.
// Bytes processed are the original tensor's bytes. Counters: ratio (original / stream bytes), and on
// `exponent` ideal_ratio (exponent_ideal_ratio) and ratio_vs_ideal. The last benchmark, SpeedVsZstd1,
// reports exponent's compress and decompress speed over zstd level 1's, measured earlier in this run.
//
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/workloads/compress/bench/bench_codecs --benchmark_min_time=1
//   (--benchmark_format=json > out.json; `mlsysbench import gbench out.json` stores it)
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <string>
#include <tuple>

#include "workloads/compress/codec.hpp"
#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/inputs.hpp"

namespace {

using mlsb::compress::CodecConfig;
using mlsb::compress::MutableTensorView;
using mlsb::compress::Tensor;

constexpr int64_t kElements = int64_t{64} << 20;  // 128 MiB of bf16

const Tensor& input(bool lossless) {
  static const Tensor bf16 = mlsb::compress::generate("gaussian", mlsb::compress::DType::BF16, kElements, 0.02, 1);
  static const Tensor fp32 = mlsb::compress::generate("gaussian", mlsb::compress::DType::F32, kElements / 8, 0.02, 1);
  return lossless ? bf16 : fp32;
}

// Seconds per iteration of each (codec, decompress, threads), for SpeedVsZstd1.
std::map<std::tuple<std::string, bool, int>, double>& timings() {
  static std::map<std::tuple<std::string, bool, int>, double> m;
  return m;
}

void run(benchmark::State& state, const std::string& codec_name, bool decompress) {
  const int threads = static_cast<int>(state.range(0));
  auto codec = mlsb::compress::make_codec(CodecConfig{.name = codec_name, .level = 1, .threads = threads});
  const Tensor& t = input(codec->lossless());
  std::vector<uint8_t> stream(codec->max_compressed_bytes(t.view()));
  stream.resize(codec->compress(t.view(), stream));
  std::vector<uint8_t> back(t.data.size());
  codec->decompress(stream, MutableTensorView{back.data(), t.count(), t.dtype});
  if (codec->lossless() && back != t.data) {
    state.SkipWithError("round trip is not bit-exact");
    return;
  }
  if (!codec->lossless())
    state.counters["rel_l2_error"] =
        mlsb::compress::compare_tensors(t.view(), {back.data(), t.count(), t.dtype, {}}).rel_l2;
  std::vector<uint8_t> out(codec->max_compressed_bytes(t.view()));
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (decompress) {
      codec->decompress(stream, MutableTensorView{back.data(), t.count(), t.dtype});
      benchmark::DoNotOptimize(back.data());
    } else {
      benchmark::DoNotOptimize(codec->compress(t.view(), out));
    }
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  timings()[{codec_name, decompress, threads}] = elapsed.count() / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(t.data.size()));
  const double ratio = static_cast<double>(t.data.size()) / static_cast<double>(stream.size());
  state.counters["ratio"] = ratio;
  if (codec_name == "exponent") {
    const double ideal = mlsb::compress::exponent_ideal_ratio(t.view());
    state.counters["ideal_ratio"] = ideal;
    state.counters["ratio_vs_ideal"] = ratio / ideal;
  }
}

void speed_vs_zstd(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(timings().size());
  const auto& m = timings();
  for (int threads : {1, 2}) {
    for (bool decompress : {false, true}) {
      const auto e = m.find({"exponent", decompress, threads}), z = m.find({"zstd", decompress, threads});
      if (e == m.end() || z == m.end()) continue;  // filtered out of this run
      const std::string name = std::string(decompress ? "decompress" : "compress") + "_t" + std::to_string(threads);
      state.counters[name] = z->second / e->second;
    }
  }
}

void register_codec(const std::string& codec, const std::vector<int64_t>& threads) {
  for (bool decompress : {false, true}) {
    const std::string name = std::string(decompress ? "Decompress/" : "Compress/") + codec;
    benchmark::RegisterBenchmark(name.c_str(), [codec, decompress](benchmark::State& s) { run(s, codec, decompress); })
        ->ArgName("threads")->ArgsProduct({threads})->Unit(benchmark::kMillisecond)->UseRealTime();
  }
}

void register_all() {
  for (const char* codec : {"exponent", "zstd", "lz4", "none"}) register_codec(codec, {1, 2});
  for (const char* codec : {"cast-bf16", "cast-fp16", "int8-block", "fp8-e4m3", "fp8-e5m2", "topk", "randomk", "powersgd"})
    register_codec(codec, {1});
  benchmark::RegisterBenchmark("SpeedVsZstd1", speed_vs_zstd)->Iterations(1);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
