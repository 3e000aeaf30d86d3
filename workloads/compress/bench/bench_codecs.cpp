// Google Benchmark microbenchmarks of every codec and their peers. Lossless codecs run on the reference
// buffer, 128 MiB of bf16 drawn from N(0, 0.02) (seed 1), compressing and decompressing with 1 and 2 threads,
// beside c-blosc 1 (Debian's libblosc-dev) as the peer of `exponent`: `blosc-bitshuffle-lz4` (clevel 5, blosc's
// default, the best blosc setting for this data) and `blosc-shuffle-zstd` (clevel 1, zstd level 1), with
// typesize 2 and `threads` internal threads. Lossy codecs (one thread) run on 32 MiB of fp32 from the same
// distribution, with counter rel_l2_error, beside `memcpy` of the same buffer as their peer.
// Bytes processed are the original tensor's bytes. Counters: ratio (original / stream bytes), and on `exponent`
// ideal_ratio (exponent_ideal_ratio) and ratio_vs_ideal. Three summaries close the run, each over timings
// measured earlier in the same run, the fastest repetition of each benchmark (a counter is absent when its
// benchmarks were filtered out):
//   SpeedVsZstd1: exponent's compress and decompress speed over zstd level 1's (compress_t1, decompress_t2, ...).
//   SpeedVsBlosc: exponent's speed over each blosc setting's (lz4_compress_t1, zstd_decompress_t1, ...) and
//                 exponent's ratio over that setting's (lz4_ratio, zstd_ratio).
//   SpeedVsMemcpy: each lossy codec's speed as a fraction of memcpy's (int8-block_compress, ...).
//
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/workloads/compress/bench/bench_codecs --benchmark_min_time=1
//   (--benchmark_format=json > out.json; `mlsysbench import gbench out.json` stores it)
#include <benchmark/benchmark.h>

#ifdef MLSB_HAVE_BLOSC
#include <blosc.h>
#endif

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include "workloads/compress/codec.hpp"
#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/inputs.hpp"

namespace {

using mlsb::compress::Codec;
using mlsb::compress::CodecConfig;
using mlsb::compress::CodecError;
using mlsb::compress::MutableTensorView;
using mlsb::compress::Tensor;
using mlsb::compress::TensorView;

constexpr int64_t kElements = int64_t{64} << 20;  // 128 MiB of bf16

const Tensor& input(bool lossless) {
  static const Tensor bf16 = mlsb::compress::generate("gaussian", mlsb::compress::DType::BF16, kElements, 0.02, 1);
  static const Tensor fp32 = mlsb::compress::generate("gaussian", mlsb::compress::DType::F32, kElements / 8, 0.02, 1);
  return lossless ? bf16 : fp32;
}

/// The lossy codecs' peer: a plain memcpy of the tensor's bytes (no header), both ways. It reports itself
/// lossy only so that it runs on the lossy codecs' input.
class MemcpyPeer final : public Codec {
 public:
  std::string name() const override { return "memcpy"; }
  bool lossless() const override { return false; }
  size_t max_compressed_bytes(TensorView in) const override { return in.bytes(); }
  size_t compress(TensorView in, std::span<uint8_t> out) override {
    std::memcpy(out.data(), in.data, in.bytes());
    return in.bytes();
  }
  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    std::memcpy(out.data, in.data(), out.bytes());
  }
};

/// c-blosc settings measured as exponent's peers: the benchmark's name, the shuffle, the compressor, clevel.
struct BloscSetting {
  const char* name;
  const char* summary;  ///< the prefix of SpeedVsBlosc's counters
  int shuffle;          ///< BLOSC_SHUFFLE (1) or BLOSC_BITSHUFFLE (2)
  const char* compressor;
  int clevel;
};
constexpr BloscSetting kBloscSettings[] = {{"blosc-bitshuffle-lz4", "lz4", 2, "lz4", 5},
                                           {"blosc-shuffle-zstd", "zstd", 1, "zstd", 1}};

#ifdef MLSB_HAVE_BLOSC
/// A blosc setting as a Codec: one blosc frame of the whole tensor (typesize = the element's size), compressed
/// and decompressed with `threads` blosc-internal threads through the context API (no global state).
class BloscPeer final : public Codec {
 public:
  BloscPeer(const BloscSetting& s, int threads) : setting_(s), threads_(threads) {}
  std::string name() const override { return setting_.name; }
  bool lossless() const override { return true; }
  size_t max_compressed_bytes(TensorView in) const override { return in.bytes() + BLOSC_MAX_OVERHEAD; }
  size_t compress(TensorView in, std::span<uint8_t> out) override {
    const int n = blosc_compress_ctx(setting_.clevel, setting_.shuffle, mlsb::compress::dtype_size(in.dtype),
                                     in.bytes(), in.data, out.data(), out.size(), setting_.compressor, 0, threads_);
    if (n <= 0) throw CodecError(name() + ": blosc_compress_ctx returned " + std::to_string(n));
    return static_cast<size_t>(n);
  }
  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    const int n = blosc_decompress_ctx(in.data(), out.data, out.bytes(), threads_);
    if (n < 0 || static_cast<size_t>(n) != out.bytes())
      throw CodecError(name() + ": blosc_decompress_ctx returned " + std::to_string(n));
  }

 private:
  BloscSetting setting_;
  int threads_;
};
#endif

/// The codec a benchmark measures: a peer of this file, or one of the codec table.
std::unique_ptr<Codec> make_bench_codec(const std::string& name, int threads) {
  if (name == "memcpy") return std::make_unique<MemcpyPeer>();
#ifdef MLSB_HAVE_BLOSC
  for (const BloscSetting& s : kBloscSettings)
    if (name == s.name) return std::make_unique<BloscPeer>(s, threads);
#endif
  return mlsb::compress::make_codec(CodecConfig{.name = name, .level = 1, .threads = threads});
}

struct Timing {
  double seconds;  ///< per iteration
  double ratio;
};

// The fastest timing of each (codec, decompress, threads) measured so far, for the summaries.
std::map<std::tuple<std::string, bool, int>, Timing>& timings() {
  static std::map<std::tuple<std::string, bool, int>, Timing> m;
  return m;
}

void run(benchmark::State& state, const std::string& codec_name, bool decompress) {
  const int threads = static_cast<int>(state.range(0));
  auto codec = make_bench_codec(codec_name, threads);
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
  const double ratio = static_cast<double>(t.data.size()) / static_cast<double>(stream.size());
  const Timing timing{elapsed.count() / static_cast<double>(state.iterations()), ratio};
  const auto [it, first] = timings().try_emplace({codec_name, decompress, threads}, timing);
  if (!first && timing.seconds < it->second.seconds) it->second = timing;
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(t.data.size()));
  state.counters["ratio"] = ratio;
  if (codec_name == "exponent") {
    const double ideal = mlsb::compress::exponent_ideal_ratio(t.view());
    state.counters["ideal_ratio"] = ideal;
    state.counters["ratio_vs_ideal"] = ratio / ideal;
  }
}

/// Sets counter `prefix`{compress,decompress}_t`threads` to `peer`'s time over `codec`'s (both measured in
/// this run; skipped when either was filtered out), for the given thread counts.
void speed_counters(benchmark::State& state, const std::string& prefix, const std::string& codec,
                    const std::string& peer, std::initializer_list<int> thread_counts) {
  const auto& m = timings();
  for (int threads : thread_counts) {
    for (bool decompress : {false, true}) {
      const auto c = m.find({codec, decompress, threads}), p = m.find({peer, decompress, threads});
      if (c == m.end() || p == m.end()) continue;
      const std::string op = decompress ? "decompress" : "compress";
      state.counters[prefix + op + "_t" + std::to_string(threads)] = p->second.seconds / c->second.seconds;
    }
  }
}

void speed_vs_zstd(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(timings().size());
  speed_counters(state, "", "exponent", "zstd", {1, 2});
}

void speed_vs_blosc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(timings().size());
  for (const BloscSetting& s : kBloscSettings) {
    const std::string prefix = std::string(s.summary) + "_";
    speed_counters(state, prefix, "exponent", s.name, {1, 2});
    const auto e = timings().find({"exponent", false, 1}), b = timings().find({s.name, false, 1});
    if (e != timings().end() && b != timings().end())
      state.counters[prefix + "ratio"] = e->second.ratio / b->second.ratio;
  }
}

/// Counters named `codec`_compress (its speed over memcpy's), without the thread suffix: all run one thread.
void speed_vs_memcpy(benchmark::State& state, const std::vector<std::string>& lossy) {
  for (auto _ : state) benchmark::DoNotOptimize(timings().size());
  const auto& m = timings();
  for (const std::string& codec : lossy) {
    for (bool decompress : {false, true}) {
      const auto c = m.find({codec, decompress, 1}), p = m.find({"memcpy", decompress, 1});
      if (c == m.end() || p == m.end()) continue;
      state.counters[codec + (decompress ? "_decompress" : "_compress")] = p->second.seconds / c->second.seconds;
    }
  }
}

void register_codec(const std::string& codec, const std::vector<int64_t>& threads) {
  for (bool decompress : {false, true}) {
    const std::string name = std::string(decompress ? "Decompress/" : "Compress/") + codec;
    benchmark::RegisterBenchmark(name.c_str(), [codec, decompress](benchmark::State& s) { run(s, codec, decompress); })
        ->ArgName("threads")
        ->ArgsProduct({threads})
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

/// The blosc peers, or, in a build without c-blosc, benchmarks that say so.
void register_blosc() {
  for (const BloscSetting& s : kBloscSettings) {
#ifdef MLSB_HAVE_BLOSC
    register_codec(s.name, {1, 2});
#else
    benchmark::RegisterBenchmark((std::string("Compress/") + s.name).c_str(), [](benchmark::State& st) {
      st.SkipWithError("c-blosc was not found when bench_codecs was built (Debian: libblosc-dev)");
    });
#endif
  }
}

void register_all() {
  for (const char* codec : {"exponent", "zstd", "lz4", "none"}) register_codec(codec, {1, 2});
  register_blosc();
  const std::vector<std::string> lossy = {"cast-bf16", "cast-fp16", "int8-block", "fp8-e4m3",
                                          "fp8-e5m2",  "topk",      "randomk",    "powersgd"};
  register_codec("memcpy", {1});
  for (const std::string& codec : lossy) register_codec(codec, {1});
  benchmark::RegisterBenchmark("SpeedVsZstd1", speed_vs_zstd)->Iterations(1);
  benchmark::RegisterBenchmark("SpeedVsBlosc", speed_vs_blosc)->Iterations(1);
  benchmark::RegisterBenchmark("SpeedVsMemcpy", [lossy](benchmark::State& s) {
    speed_vs_memcpy(s, lossy);
  })->Iterations(1);
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
