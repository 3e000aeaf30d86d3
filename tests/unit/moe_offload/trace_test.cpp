// Routing traces (trace.hpp): both file formats (moe_train's header format, sequences as (step, seq)
// ordered by pos; the plain format with an optional seq), records in any order, default weights,
// `source`, the shipped trace, every load error (with its line and the field it names) and
// check_against_model's messages.
#include "workloads/moe_offload/trace.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace mlsb::moe_offload {
namespace {

using nlohmann::json;
using testing::AllOf;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

/// Writes `text` as DIR/NAME and returns the path.
std::string write_trace(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const auto p = dir / name;
  test::write_file(p, text);
  return p.string();
}

/// The message of the std::runtime_error load_trace(path) throws ("" and a failure when none).
std::string load_error(const std::string& path) {
  try {
    load_trace(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "load_trace(" << path << ") did not throw std::runtime_error";
  return "";
}

std::vector<int32_t> experts_at(const RoutingTrace& t, int64_t token, int64_t layer) {
  return {t.experts_of(token, layer), t.experts_of(token, layer) + t.topk};
}
std::vector<float> weights_at(const RoutingTrace& t, int64_t token, int64_t layer) {
  return {t.weights_of(token, layer), t.weights_of(token, layer) + t.topk};
}

// --- The header (moe_train) format ---------------------------------------------------------------

/// The route the header-format test gives (step, seq, pos, layer): 2 distinct experts of 6.
std::vector<int32_t> route_of(int64_t step, int64_t seq, int64_t pos, int64_t layer) {
  const int32_t a = static_cast<int32_t>((step + 2 * seq + 3 * pos + layer) % 6);
  return {a, static_cast<int32_t>((a + 1 + layer) % 6)};
}
std::vector<float> weights_for(int64_t step, int64_t seq, int64_t pos, int64_t layer) {
  const float w = 0.5f + 0.01f * static_cast<float>((step + seq + pos + layer) % 40);
  return {w, 1.0f - w};
}

struct SeqSpec {
  int64_t step, seq, len;
};

/// Records of the given sequences (2 layers), as JSON lines, sequence by sequence, pos by pos.
std::vector<std::string> header_records(const std::vector<SeqSpec>& seqs) {
  std::vector<std::string> lines;
  for (const auto& s : seqs)
    for (int64_t pos = 0; pos < s.len; ++pos)
      for (int64_t l = 0; l < 2; ++l)
        lines.push_back(json{{"step", s.step},
                             {"layer", l},
                             {"seq", s.seq},
                             {"pos", pos},
                             {"token", 97 + pos},
                             {"experts", route_of(s.step, s.seq, pos, l)},
                             {"weights", weights_for(s.step, s.seq, pos, l)}}
                            .dump());
  return lines;
}

const std::string kHeader =
    R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 2, "experts": 8, "topk": 2, "seq": 64})";

std::string join(const std::string& first, const std::vector<std::string>& lines) {
  std::string out = first.empty() ? "" : first + "\n";
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// The sequences (step, seq) in (step, seq) order, each ordered by pos; the file lists their records
// with every sequence first appearing in that order, but positions and layers shuffled.
TEST(Trace, HeaderFormatGroupsStepSeqIntoSequencesOrderedByPos) {
  const std::vector<SeqSpec> seqs = {{3, 2, 1}, {5, 0, 2}, {5, 1, 3}};
  std::vector<std::string> lines = header_records(seqs);
  // Reverse the records of each sequence (positions and layers come backwards).
  std::reverse(lines.begin(), lines.begin() + 2);
  std::reverse(lines.begin() + 2, lines.begin() + 6);
  std::reverse(lines.begin() + 6, lines.end());
  test::TempDir dir;
  const std::string path = write_trace(dir, "t.jsonl", join(kHeader, lines));
  const RoutingTrace t = load_trace(path);

  EXPECT_EQ(t.layers, 2);
  EXPECT_EQ(t.experts, 8);  // the header's, though no id reaches 6
  EXPECT_EQ(t.topk, 2);
  EXPECT_EQ(t.seq_start, (std::vector<int64_t>{0, 1, 3, 6}));
  EXPECT_EQ(t.sequences(), 3);
  EXPECT_EQ(t.tokens(), 6);
  ASSERT_EQ(t.route.size(), 6u * 2 * 2);
  ASSERT_EQ(t.weights.size(), t.route.size());
  int64_t token = 0;
  for (const auto& s : seqs)
    for (int64_t pos = 0; pos < s.len; ++pos, ++token)
      for (int64_t l = 0; l < 2; ++l) {
        EXPECT_EQ(experts_at(t, token, l), route_of(s.step, s.seq, pos, l)) << "token " << token << " layer " << l;
        EXPECT_EQ(weights_at(t, token, l), weights_for(s.step, s.seq, pos, l)) << "token " << token << " layer " << l;
        EXPECT_EQ(t.vocab_id(token), 97 + pos) << "token " << token << ": the record's vocabulary id";
      }
  EXPECT_EQ(t.token_id.size(), 6u);
  EXPECT_EQ(t.source.at("file"), path);
}

TEST(Trace, HeaderFormatDoesNotDependOnRecordOrder) {
  const std::vector<SeqSpec> seqs = {{1, 0, 4}, {1, 1, 3}, {2, 0, 5}};
  std::vector<std::string> lines = header_records(seqs);
  test::TempDir dir;
  const RoutingTrace sorted = load_trace(write_trace(dir, "sorted.jsonl", join(kHeader, lines)));
  std::mt19937 rng(7);
  std::shuffle(lines.begin(), lines.end(), rng);
  const RoutingTrace shuffled = load_trace(write_trace(dir, "shuffled.jsonl", join(kHeader, lines)));
  EXPECT_EQ(shuffled.seq_start, sorted.seq_start);
  EXPECT_EQ(shuffled.route, sorted.route);
  EXPECT_EQ(shuffled.weights, sorted.weights);
  EXPECT_EQ(sorted.seq_start, (std::vector<int64_t>{0, 4, 7, 12}));
}

TEST(Trace, HeaderFormatMissingWeightsDefaultToOneOverK) {
  test::TempDir dir;
  const std::string text =
      R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 1, "experts": 4, "topk": 2})"
      "\n"
      R"({"step": 0, "layer": 0, "seq": 0, "pos": 0, "token": 5, "experts": [3, 1]})"
      "\n"
      R"({"step": 0, "layer": 0, "seq": 0, "pos": 1, "token": 6, "experts": [0, 2], "weights": [0.75, 0.25]})"
      "\n";
  const RoutingTrace t = load_trace(write_trace(dir, "t.jsonl", text));
  EXPECT_EQ(t.route, (std::vector<int32_t>{3, 1, 0, 2}));
  EXPECT_EQ(t.weights, (std::vector<float>{0.5f, 0.5f, 0.75f, 0.25f}));
}

// --- The plain format ----------------------------------------------------------------------------

TEST(Trace, PlainFormatWithoutSeqIsOneSequenceOrderedByToken) {
  test::TempDir dir;
  // token 2, 0, 1 (layers 1 then 0 for token 0); no weights anywhere; top-3.
  const std::string text =
      R"({"token": 2, "layer": 0, "experts": [4, 0, 1]})"
      "\n"
      R"({"token": 0, "layer": 1, "experts": [1, 2, 3]})"
      "\n"
      "\n"  // a blank line is skipped
      R"({"token": 1, "layer": 1, "experts": [0, 5, 2]})"
      "\n"
      R"({"token": 0, "layer": 0, "experts": [2, 3, 0]})"
      "\n"
      R"({"token": 2, "layer": 1, "experts": [3, 1, 0]})"
      "\n"
      R"({"token": 1, "layer": 0, "experts": [1, 0, 4]})"
      "\n";
  const std::string path = write_trace(dir, "plain.jsonl", text);
  const RoutingTrace t = load_trace(path);
  EXPECT_EQ(t.layers, 2);
  EXPECT_EQ(t.topk, 3);
  EXPECT_EQ(t.experts, 6);  // 1 + the largest id (5)
  EXPECT_EQ(t.max_expert_line, 4);
  EXPECT_EQ(t.seq_start, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(t.sequences(), 1);
  EXPECT_EQ(t.tokens(), 3);
  EXPECT_EQ(t.route, (std::vector<int32_t>{2, 3, 0, 1, 2, 3, 1, 0, 4, 0, 5, 2, 4, 0, 1, 3, 1, 0}));
  ASSERT_EQ(t.weights.size(), t.route.size());
  for (const float w : t.weights) EXPECT_FLOAT_EQ(w, 1.0f / 3.0f);
  for (int64_t tok = 0; tok < 3; ++tok) EXPECT_EQ(t.vocab_id(tok), -1) << "no token_id given";
  EXPECT_EQ(t.source.at("file"), path);
}

TEST(Trace, PlainFormatTokenIdIsTheVocabularyId) {
  test::TempDir dir;
  const std::string text =
      R"({"token": 1, "layer": 0, "experts": [1], "token_id": 2147483647})"
      "\n"
      R"({"token": 0, "layer": 1, "experts": [0], "token_id": 42})"
      "\n"
      R"({"token": 0, "layer": 0, "experts": [2], "token_id": 42})"
      "\n"
      R"({"token": 1, "layer": 1, "experts": [3], "token_id": 2147483647})"
      "\n"
      R"({"token": 2, "layer": 0, "experts": [1]})"
      "\n"
      R"({"token": 2, "layer": 1, "experts": [0]})"
      "\n";
  const RoutingTrace t = load_trace(write_trace(dir, "ids.jsonl", text));
  EXPECT_EQ(t.token_id, (std::vector<int32_t>{42, 2147483647, -1}));
}

TEST(Trace, PlainFormatWithSeqGroupsBySequence) {
  test::TempDir dir;
  const std::string text =
      R"({"seq": 1, "token": 1, "layer": 0, "experts": [7], "weights": [1.0]})"
      "\n"
      R"({"seq": 0, "token": 0, "layer": 0, "experts": [2], "weights": [0.5]})"
      "\n"
      R"({"seq": 1, "token": 0, "layer": 0, "experts": [3]})"
      "\n"
      R"({"seq": 2, "token": 0, "layer": 0, "experts": [1]})"
      "\n"
      R"({"seq": 1, "token": 2, "layer": 0, "experts": [0]})"
      "\n";
  const RoutingTrace t = load_trace(write_trace(dir, "plain.jsonl", text));
  EXPECT_EQ(t.layers, 1);
  EXPECT_EQ(t.topk, 1);
  EXPECT_EQ(t.experts, 8);
  EXPECT_EQ(t.max_expert_line, 1);
  EXPECT_EQ(t.seq_start, (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(t.route, (std::vector<int32_t>{2, 3, 7, 0, 1}));
  EXPECT_EQ(t.weights, (std::vector<float>{0.5f, 1.0f, 1.0f, 1.0f, 1.0f}));
}

TEST(Trace, PlainFormatDoesNotDependOnRecordOrder) {
  std::vector<std::string> lines;
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t tok = 0; tok < 4 + s; ++tok)
      for (int64_t l = 0; l < 3; ++l)
        lines.push_back(json{{"seq", s}, {"token", tok}, {"layer", l}, {"experts", route_of(0, s, tok, l)}}.dump());
  test::TempDir dir;
  const RoutingTrace sorted = load_trace(write_trace(dir, "a.jsonl", join("", lines)));
  std::mt19937 rng(3);
  std::shuffle(lines.begin(), lines.end(), rng);
  const RoutingTrace shuffled = load_trace(write_trace(dir, "b.jsonl", join("", lines)));
  EXPECT_EQ(sorted.seq_start, (std::vector<int64_t>{0, 4, 9, 15}));
  EXPECT_EQ(shuffled.seq_start, sorted.seq_start);
  EXPECT_EQ(shuffled.route, sorted.route);
  EXPECT_EQ(shuffled.weights, sorted.weights);
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t tok = 0; tok < 4 + s; ++tok)
      for (int64_t l = 0; l < 3; ++l)
        EXPECT_EQ(experts_at(sorted, sorted.seq_start[s] + tok, l), route_of(0, s, tok, l));
}

// --- The shipped trace ---------------------------------------------------------------------------

TEST(Trace, ShippedLmTraceLoads) {
  const std::string path = (test::source_dir() / "datasets" / "moe_traces" / "lm-l4-e16-top2.jsonl").string();
  const RoutingTrace t = load_trace(path);
  EXPECT_EQ(t.layers, 4);
  EXPECT_EQ(t.experts, 16);
  EXPECT_EQ(t.topk, 2);
  ASSERT_EQ(t.sequences(), 64);
  for (int64_t s = 0; s <= 64; ++s) EXPECT_EQ(t.seq_start[s], 64 * s);
  EXPECT_EQ(t.tokens(), 4096);
  ASSERT_EQ(t.route.size(), 4096u * 4 * 2);
  ASSERT_EQ(t.weights.size(), t.route.size());
  EXPECT_EQ(t.source.at("file"), path);
  // Its first record: step 400 (the trained model on held-out text), seq 0, pos 0, layer 0.
  EXPECT_EQ(experts_at(t, 0, 0), (std::vector<int32_t>{5, 7}));
  EXPECT_FLOAT_EQ(t.weights[0], 0.79652f);
  EXPECT_FLOAT_EQ(t.weights[1], 0.20348f);
  // Its last: seq 63, pos 63, layer 3.
  EXPECT_EQ(experts_at(t, 4095, 3), (std::vector<int32_t>{0, 10}));
  EXPECT_FLOAT_EQ(t.weights_of(4095, 3)[0], 0.539994f);
  for (int64_t tok = 0; tok < t.tokens(); ++tok)
    for (int64_t l = 0; l < t.layers; ++l) {
      const int32_t* e = t.experts_of(tok, l);
      EXPECT_NE(e[0], e[1]);
      EXPECT_GE(std::min(e[0], e[1]), 0);
      EXPECT_LT(std::max(e[0], e[1]), 16);
      EXPECT_NEAR(t.weights_of(tok, l)[0] + t.weights_of(tok, l)[1], 1.0f, 1e-4);
    }
  EXPECT_NO_THROW(check_against_model(t, 4, 16));
}

// --- Load errors ---------------------------------------------------------------------------------

TEST(TraceErrors, UnreadableFile) {
  test::TempDir dir;
  const std::string path = (dir / "does-not-exist.jsonl").string();
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, StartsWith("trace " + path + ": "));
  EXPECT_THAT(msg, Not(HasSubstr(" line ")));
}

TEST(TraceErrors, AFolderIsNotAFile) {
  test::TempDir dir;
  const std::string path = (dir / "folder.jsonl").string();
  std::filesystem::create_directories(path);
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, StartsWith("trace " + path + ": "));
  EXPECT_THAT(msg, Not(HasSubstr(" line ")));
}

TEST(TraceErrors, EmptyFile) {
  test::TempDir dir;
  for (const std::string& text : {std::string(""), std::string("\n  \n\t\n"), kHeader + "\n"}) {
    const std::string path = write_trace(dir, "empty.jsonl", text);
    const std::string msg = load_error(path);
    EXPECT_THAT(msg, StartsWith("trace " + path + ": ")) << "file: '" << text << "'";
    EXPECT_THAT(msg, Not(HasSubstr(" line "))) << "file: '" << text << "'";
  }
}

struct BadFile {
  const char* what;
  std::string text;
  int line;                        // the line the message must name
  std::vector<std::string> words;  // what it must also say (the field, the value)
  bool truncated_hint = false;     // whether it must say the file may be truncated
};

const std::string kGood0 = R"({"token": 0, "layer": 0, "experts": [0, 1]})";
const std::string kGood1 = R"({"token": 1, "layer": 0, "experts": [1, 2]})";
const std::string kHeader4 =
    R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 2, "experts": 4, "topk": 2})";
const std::string kHdrRec = R"({"step": 0, "layer": 0, "seq": 0, "pos": 0, "token": 1, "experts": [0, 1]})";

std::vector<BadFile> bad_files() {
  return {
      {"not JSON, in the middle", kGood0 + "\n" + R"({"token": 1, "layer": 0, "experts": [1, 2])" + "\n" + kGood1 + "\n",
       2, {"JSON"}},
      {"not JSON, the last line (cut)", kGood0 + "\n" + R"({"token": 1, "layer": 0, "exp)", 2, {"JSON"}, true},
      {"not JSON, the last line with its newline", kGood0 + "\n" + R"({"token": 1, "la)" + "\n", 2, {"JSON"}, true},
      {"not JSON at all", "hello\n" + kGood0 + "\n", 1, {"JSON"}},
      {"not JSON, a byte that is not UTF-8", kGood0 + "\n" + "{\"token\": 1, \"layer\": 0, \"experts\": [1, \"\xff\"]}\n" + kGood0 + "\n", 2,
       {"column 42: ", "ill-formed UTF-8 byte"}},
      {"missing token", kGood0 + "\n" + R"({"layer": 0, "experts": [1, 2]})" + "\n", 2, {"missing", "token"}},
      {"missing layer", R"({"token": 0, "experts": [1, 2]})" "\n", 1, {"missing", "layer"}},
      {"missing experts", kGood0 + "\n" + kGood1 + "\n" + R"({"token": 2, "layer": 0})" + "\n", 3, {"missing", "experts"}},
      {"missing pos (header format)", kHeader4 + "\n" + R"({"step": 0, "layer": 0, "seq": 0, "token": 1, "experts": [0, 1]})" + "\n",
       2, {"missing", "pos"}},
      {"missing step (header format)", kHeader4 + "\n" + R"({"layer": 0, "seq": 0, "pos": 0, "token": 1, "experts": [0, 1]})" + "\n",
       2, {"missing", "step"}},
      {"missing seq (header format)", kHeader4 + "\n" + R"({"step": 0, "layer": 0, "pos": 0, "token": 1, "experts": [0, 1]})" + "\n",
       2, {"missing", "seq"}},
      {"non-integer layer", kGood0 + "\n" + R"({"token": 1, "layer": 0.5, "experts": [1, 2]})" + "\n", 2, {"integer", "layer"}},
      {"non-integer token (a string)", R"({"token": "1", "layer": 0, "experts": [1, 2]})" "\n", 1, {"integer", "token"}},
      {"non-integer seq", R"({"seq": true, "token": 1, "layer": 0, "experts": [1, 2]})" "\n", 1, {"integer", "seq"}},
      {"non-integer expert id", R"({"token": 1, "layer": 0, "experts": [1, 2.5]})" "\n", 1, {"experts"}},
      {"negative token", kGood0 + "\n" + R"({"token": -1, "layer": 0, "experts": [1, 2]})" + "\n", 2, {"negative", "token"}},
      {"negative seq", R"({"seq": -2, "token": 1, "layer": 0, "experts": [1, 2]})" "\n", 1, {"negative", "seq"}},
      {"negative layer", R"({"token": 1, "layer": -1, "experts": [1, 2]})" "\n", 1, {"negative", "layer"}},
      {"negative expert id", kGood0 + "\n" + R"({"token": 1, "layer": 0, "experts": [-1, 2]})" + "\n", 2, {"negative", "experts"}},
      {"k differs between records", kGood0 + "\n" + R"({"token": 1, "layer": 0, "experts": [1, 2, 3]})" + "\n", 2, {"experts", "3"}},
      {"k differs from the header's", kHeader4 + "\n" + R"({"step": 0, "layer": 0, "seq": 0, "pos": 0, "token": 1, "experts": [0]})" + "\n",
       2, {"experts", "2"}},
      {"repeated expert", kGood0 + "\n" + R"({"token": 1, "layer": 0, "experts": [3, 3]})" + "\n", 2, {"experts", "3"}},
      {"id >= the header's experts", kHeader4 + "\n" + kHdrRec + "\n" + R"({"step": 0, "layer": 0, "seq": 0, "pos": 1, "token": 1, "experts": [1, 4]})" + "\n",
       3, {"expert id 4", "(4)"}},
      {"id >= 65536 (plain)", kGood0 + "\n" + R"({"token": 1, "layer": 0, "experts": [65536, 2]})" + "\n", 2, {"65536"}},
      {"id far beyond 65536 (plain)", R"({"token": 1, "layer": 0, "experts": [1, 4294967296]})" "\n", 1, {"4294967296"}},
      {"layer >= 4096 (plain)", kGood0 + "\n" + kGood1 + "\n" + R"({"token": 2, "layer": 4096, "experts": [1, 2]})" + "\n", 3,
       {"layer 4096"}},
      {"layer >= the header's", kHeader4 + "\n" + R"({"step": 0, "layer": 2, "seq": 0, "pos": 0, "token": 1, "experts": [0, 1]})" + "\n",
       2, {"layer 2"}},
      {"header layers 0", R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 0, "experts": 4, "topk": 2})" "\n" + kHdrRec + "\n",
       1, {"layers"}},
      {"header layers > 4096", R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 5000, "experts": 4, "topk": 2})" "\n" + kHdrRec + "\n",
       1, {"layers"}},
      {"header experts > 65536", R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 2, "experts": 70000, "topk": 2})" "\n" + kHdrRec + "\n",
       1, {"experts"}},
      {"header topk > experts", R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 2, "experts": 4, "topk": 5})" "\n" + kHdrRec + "\n",
       1, {"topk"}},
      {"header topk missing", R"({"format": "mlsysbench-routing-trace", "version": 1, "layers": 2, "experts": 4})" "\n" + kHdrRec + "\n",
       1, {"missing", "topk"}},
      {"header not on line 1", kGood0 + "\n" + kHeader4 + "\n", 2, {"header"}},
      {"unknown format", R"({"format": "some-other-trace", "version": 1, "layers": 2, "experts": 4, "topk": 2})" "\n" + kHdrRec + "\n",
       1, {"format"}},
      {"unknown version", R"({"format": "mlsysbench-routing-trace", "version": 2, "layers": 2, "experts": 4, "topk": 2})" "\n" + kHdrRec + "\n",
       1, {"version"}},
      {"duplicate layer record", kGood0 + "\n" + kGood1 + "\n" + R"({"token": 0, "layer": 0, "experts": [2, 3]})" + "\n", 3, {"layer 0"}},
      {"a token missing a layer", kGood0 + "\n" + R"({"token": 0, "layer": 1, "experts": [2, 3]})" + "\n" + kGood1 + "\n",
       3, {"layer 1"}},
      {"a token missing its layer 0", kGood0 + "\n" + R"({"token": 0, "layer": 1, "experts": [2, 3]})" + "\n" +
                                           R"({"token": 1, "layer": 1, "experts": [2, 3]})" + "\n",
       3, {"layer 0"}},
      {"header format: a token missing a layer", kHeader4 + "\n" + kHdrRec + "\n", 2, {"layer 1"}},
      {"vocabulary id differs between a token's layers (header format)",
       kHeader4 + "\n" + kHdrRec + "\n" + R"({"step": 0, "layer": 1, "seq": 0, "pos": 0, "token": 9, "experts": [0, 1]})" + "\n",
       3, {"field 'token'", "is 9", "line 2 gives 1"}},
      {"token_id given on one layer only (plain)",
       kGood0 + "\n" + R"({"token": 0, "layer": 1, "experts": [2, 3], "token_id": 5})" + "\n", 2,
       {"field 'token_id'", "is 5", "line 1 gives none"}},
      {"token_id missing on one layer (plain)",
       R"({"token": 0, "layer": 1, "experts": [2, 3], "token_id": 5})" "\n" + kGood0 + "\n", 2,
       {"field 'token_id'", "is missing", "line 1 gives 5"}},
      {"token_id >= 2^31", R"({"token": 0, "layer": 0, "experts": [0, 1], "token_id": 2147483648})" "\n", 1,
       {"field 'token_id'", "2147483648", "more than 2147483647"}},
      {"token >= 2^31 (header format)", kHeader4 + "\n" + R"({"step": 0, "layer": 0, "seq": 0, "pos": 0, "token": 4294967296, "experts": [0, 1]})" + "\n",
       2, {"field 'token'", "4294967296"}},
      {"token_id >= 2^63", R"({"token": 0, "layer": 0, "experts": [0, 1], "token_id": 9223372036854775808})" "\n", 1,
       {"field 'token_id'", "9223372036854775808", "too large"}},
      {"token_id in the header format", kHeader4 + "\n" + R"({"step": 0, "layer": 0, "seq": 0, "pos": 0, "token": 1, "token_id": 1, "experts": [0, 1]})" + "\n",
       2, {"field 'token_id'", "'token'"}},
      {"negative token_id", R"({"token": 0, "layer": 0, "experts": [0, 1], "token_id": -3})" "\n", 1, {"negative", "token_id"}},
  };
}

TEST(TraceErrors, EveryMalformedRecordNamesItsLineAndField) {
  test::TempDir dir;
  int i = 0;
  for (const BadFile& f : bad_files()) {
    SCOPED_TRACE(f.what);
    const std::string path = write_trace(dir, "bad" + std::to_string(i++) + ".jsonl", f.text);
    const std::string msg = load_error(path);
    EXPECT_THAT(msg, StartsWith("trace " + path + " line " + std::to_string(f.line) + ": "));
    for (const auto& w : f.words) EXPECT_THAT(msg, HasSubstr(w));
    EXPECT_THAT(msg, Not(HasSubstr("json.exception"))) << "nlohmann's own prefix (line 1 of its input) is dropped";
    EXPECT_THAT(msg, Not(HasSubstr("\xff"))) << "raw input bytes are not echoed";
    if (f.truncated_hint) {
      EXPECT_THAT(msg, HasSubstr("truncated"));
    } else if (std::string(f.what).rfind("not JSON", 0) == 0) {
      EXPECT_THAT(msg, Not(HasSubstr("truncated")));
    }
  }
}

// A record whose layer is absurdly large gets the "trace FILE line N: ..." std::runtime_error, not an
// allocation failure (or an overflow) while the trace is assembled.
TEST(TraceErrors, HugeLayerIsAMalformedRecordNotAnAllocationFailure) {
  test::TempDir dir;
  const std::string path = write_trace(dir, "huge.jsonl", R"({"token": 0, "layer": 4611686018427387904, "experts": [0]})" "\n");
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, StartsWith("trace " + path + " line 1: "));
}

TEST(Trace, IdsAndLayersJustBelowTheCapsLoad) {
  test::TempDir dir;
  const RoutingTrace t = load_trace(write_trace(dir, "big.jsonl", R"({"token": 0, "layer": 0, "experts": [65535, 0]})" "\n"));
  EXPECT_EQ(t.experts, 65536);
  EXPECT_EQ(t.route, (std::vector<int32_t>{65535, 0}));
  std::string text;
  for (int l = 0; l < 4096; ++l) text += json{{"token", 0}, {"layer", l}, {"experts", {l % 3}}}.dump() + "\n";
  const RoutingTrace deep = load_trace(write_trace(dir, "deep.jsonl", text));
  EXPECT_EQ(deep.layers, 4096);
  EXPECT_EQ(deep.tokens(), 1);
  EXPECT_EQ(deep.route[4095], 4095 % 3);
}

// --- check_against_model -------------------------------------------------------------------------

RoutingTrace hand_trace(int64_t layers, int64_t topk, std::vector<int32_t> route) {
  RoutingTrace t;
  t.layers = layers;
  t.topk = topk;
  t.route = std::move(route);
  t.experts = 1 + *std::max_element(t.route.begin(), t.route.end());
  t.weights.assign(t.route.size(), 1.0f / static_cast<float>(topk));
  t.seq_start = {0, static_cast<int64_t>(t.route.size()) / (layers * topk)};
  return t;
}

std::string model_error(const RoutingTrace& t, int64_t layers, int64_t experts) {
  try {
    check_against_model(t, layers, experts);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "check_against_model did not throw std::invalid_argument";
  return "";
}

TEST(TraceCheckAgainstModel, AcceptsAMatchingModel) {
  const RoutingTrace t = hand_trace(2, 2, {0, 1, 2, 3, 3, 1, 0, 2});
  EXPECT_NO_THROW(check_against_model(t, 2, 4));
  EXPECT_NO_THROW(check_against_model(t, 2, 64));
}

TEST(TraceCheckAgainstModel, Layers) {
  const RoutingTrace t = hand_trace(4, 1, {0, 1, 0, 1});
  EXPECT_THAT(model_error(t, 2, 8), HasSubstr("trace: 4 layers but the model has 2"));
  EXPECT_THAT(model_error(t, 5, 8), HasSubstr("trace: 4 layers but the model has 5"));
}

TEST(TraceCheckAgainstModel, TopK) {
  const RoutingTrace t = hand_trace(1, 4, {0, 1, 2, 3});
  EXPECT_THAT(model_error(t, 1, 2), HasSubstr("trace: top-k 4 exceeds the model's experts (2)"));
}

TEST(TraceCheckAgainstModel, TokenIdsMustCoverEveryTokenOrNone) {
  RoutingTrace t = hand_trace(1, 2, {0, 1, 2, 3});  // 2 tokens
  t.token_id = {7};
  EXPECT_THAT(model_error(t, 1, 8), HasSubstr("trace: token_id has 1 entries for 2 tokens"));
  t.token_id = {7, 8};
  EXPECT_NO_THROW(check_against_model(t, 1, 8));
  t.token_id.clear();
  EXPECT_NO_THROW(check_against_model(t, 1, 8));
}

TEST(TraceCheckAgainstModel, ExpertIdWithTheLineOfALoadedFile) {
  test::TempDir dir;
  std::string text;
  for (int tok = 0; tok < 11; ++tok)
    text += json{{"token", tok}, {"layer", 0}, {"experts", {tok % 8}}}.dump() + "\n";
  text += json{{"token", 11}, {"layer", 0}, {"experts", {9}}}.dump() + "\n";  // line 12
  text += json{{"token", 12}, {"layer", 0}, {"experts", {3}}}.dump() + "\n";
  const RoutingTrace t = load_trace(write_trace(dir, "t.jsonl", text));
  EXPECT_EQ(t.max_expert_line, 12);
  EXPECT_EQ(t.experts, 10);
  EXPECT_THAT(model_error(t, 1, 8), HasSubstr("trace: expert id 9 (line 12) exceeds the model's experts (8)"));
  EXPECT_THAT(model_error(t, 1, 9), HasSubstr("trace: expert id 9 (line 12) exceeds the model's experts (9)"));
  EXPECT_NO_THROW(check_against_model(t, 1, 10));
}

TEST(TraceCheckAgainstModel, ExpertIdOfAHandBuiltTrace) {
  const RoutingTrace t = hand_trace(1, 2, {0, 1, 9, 2});
  const std::string msg = model_error(t, 1, 8);
  EXPECT_THAT(msg, AllOf(HasSubstr("trace: expert id 9"), HasSubstr("exceeds the model's experts (8)")));
}

}  // namespace
}  // namespace mlsb::moe_offload
