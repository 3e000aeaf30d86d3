// The LLM agents' parts without a network: MCP tools as API tools (names and schemas), the OpenAI
// and Anthropic wire formats against recorded replies (tests/data/llm_replies), tool results fed back,
// redaction, retry rules and backoff, the run budget and the price table.
#include <gtest/gtest.h>

#include <random>

#include "util/json_file.hpp"
#include "support/test_support.hpp"
#include "workloads/toolbench/agents/anthropic_format.hpp"
#include "workloads/toolbench/agents/model_request.hpp"
#include "workloads/toolbench/agents/openai_format.hpp"
#include "workloads/toolbench/agents/tool_names.hpp"
#include "workloads/toolbench/prices.hpp"

namespace mlsb::toolbench {
namespace {

using nlohmann::json;

json recorded(const std::string& name) {
  return json::parse(test::read_file(test::source_dir() / "tests/data/llm_replies" / (name + ".json")));
}

const json kReadSchema = {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}, {"required", {"path"}}};

TEST(ToolbenchApiTools, NamesAreValidUniqueAndMapBack) {
  const std::string long_name(70, 'x');
  const std::vector<ApiTool> tools = api_tools({{"read_text_file", "Read a file.", kReadSchema},
                                                {"maps.search places", "Search.", json::object()},
                                                {"maps/search-places", "Search too.", json("not a schema")},
                                                {long_name, "", json::object()},
                                                {"", "", json::object()}});
  ASSERT_EQ(tools.size(), 5u);
  EXPECT_EQ(tools[0].name, "read_text_file");
  EXPECT_EQ(tools[0].parameters, kReadSchema);
  EXPECT_EQ(tools[1].name, "maps_search_places");
  EXPECT_EQ(tools[1].parameters, (json{{"type", "object"}}));
  EXPECT_EQ(tools[2].name, "maps_search-places");
  EXPECT_EQ(tools[2].parameters, (json{{"type", "object"}, {"properties", json::object()}}));
  EXPECT_EQ(tools[3].name, std::string(64, 'x'));
  EXPECT_EQ(tools[4].name, "tool");
  const std::vector<ApiTool> twins = api_tools({{"a.b", "", {}}, {"a_b", "", {}}, {"a b", "", {}}});
  EXPECT_EQ(twins[0].name, "a_b");
  EXPECT_EQ(twins[1].name, "a_b_2");
  EXPECT_EQ(twins[2].name, "a_b_3");
  EXPECT_EQ(mcp_name_of(twins, "a_b_2"), "a_b");
  EXPECT_EQ(mcp_name_of(twins, "a_b"), "a.b");
  EXPECT_EQ(mcp_name_of(twins, "teleport"), "teleport");  // unknown: as the model spelled it
  const std::vector<ApiTool> cut = api_tools({{long_name, "", {}}, {long_name + "y", "", {}}});
  EXPECT_EQ(cut[1].name, std::string(62, 'x') + "_2");
}

TEST(ToolbenchOpenAiFormat, RequestCarriesToolsSamplingAndKey) {
  const OpenAiFormat f;
  EXPECT_EQ(f.endpoint("http://127.0.0.1:8000/v1/"), "http://127.0.0.1:8000/v1/chat/completions");
  EXPECT_EQ(f.endpoint(f.default_base_url()), "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(f.headers("sk-1"), (std::vector<std::string>{"Content-Type: application/json", "Authorization: Bearer sk-1"}));
  EXPECT_EQ(f.headers("").size(), 1u);
  const json messages = json::array({f.user_message("read notes/todo.txt")});
  const json body = f.request("be brief", messages, api_tools({{"read_text_file", "Read a file.", kReadSchema}}),
                              {"gpt-4o", 0.2, 256, 7});
  EXPECT_EQ(body["model"], "gpt-4o");
  EXPECT_EQ(body["messages"][0], (json{{"role", "system"}, {"content", "be brief"}}));
  EXPECT_EQ(body["messages"][1], (json{{"role", "user"}, {"content", "read notes/todo.txt"}}));
  EXPECT_EQ(body["tools"][0]["type"], "function");
  EXPECT_EQ(body["tools"][0]["function"]["name"], "read_text_file");
  EXPECT_EQ(body["tools"][0]["function"]["parameters"], kReadSchema);
  EXPECT_EQ(body["tool_choice"], "auto");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.2);
  EXPECT_EQ(body["max_tokens"], 256);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_FALSE(f.request("s", messages, {}, {"m", 0, 1, std::nullopt}).contains("tools"));
  EXPECT_FALSE(f.request("s", messages, {}, {"m", 0, 1, std::nullopt}).contains("seed"));
}

TEST(ToolbenchOpenAiFormat, ParsesRecordedReplies) {
  const OpenAiFormat f;
  ModelReply r = f.parse(recorded("openai_tool_calls"));
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].id, "call_read_a");
  EXPECT_EQ(r.calls[0].name, "read_text_file");
  EXPECT_EQ(r.calls[0].arguments, (json{{"path", "notes/todo.txt"}}));
  EXPECT_EQ(r.calls[0].invalid, "");
  EXPECT_EQ(r.calls[1].name, "list_directory");
  EXPECT_EQ(r.input_tokens, 812);
  EXPECT_EQ(r.output_tokens, 41);
  EXPECT_EQ(r.stop_reason, "tool_calls");
  EXPECT_EQ(r.assistant["role"], "assistant");
  EXPECT_EQ(r.assistant["tool_calls"][1]["id"], "call_list");
  EXPECT_EQ(r.assistant["tool_calls"][0]["function"]["arguments"], "{\"path\":\"notes/todo.txt\"}");

  r = f.parse(recorded("openai_bad_arguments"));
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(r.calls[0].invalid.rfind("arguments are not JSON: ", 0), 0u) << r.calls[0].invalid;
  EXPECT_EQ(r.calls[0].arguments, "{\"path\": \"notes/todo.txt\"");  // kept as sent
  EXPECT_EQ(r.assistant["tool_calls"][0]["function"]["arguments"], "{\"path\": \"notes/todo.txt\"");
  EXPECT_EQ(r.calls[1].invalid, "arguments are not a JSON object (got array)");
  EXPECT_EQ(r.calls[2].invalid, "");  // "" = no arguments
  EXPECT_EQ(r.calls[2].arguments, json::object());

  r = f.parse(recorded("openai_answer"));
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.text, "I cannot find a tool for that.");
  EXPECT_EQ(r.stop_reason, "stop");
}

TEST(ToolbenchOpenAiFormat, MalformedRepliesNameTheField) {
  const OpenAiFormat f;
  const auto message_of = [&](const json& body) {
    try {
      f.parse(body);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_EQ(message_of(json::object()), "reply has no choices");
  EXPECT_EQ(message_of({{"choices", json::array()}}), "reply has no choices[0]");
  EXPECT_EQ(message_of({{"choices", {{{"finish_reason", "stop"}}}}}), "reply has no choices[0].message");
  json no_name = recorded("openai_tool_calls");
  no_name["choices"][0]["message"]["tool_calls"][1]["function"].erase("name");
  EXPECT_EQ(message_of(no_name), "reply has no choices[0].message.tool_calls[1].function.name");
  json missing_usage = recorded("openai_answer");
  missing_usage.erase("usage");
  EXPECT_EQ(f.parse(missing_usage).input_tokens, 0);
  json lying = recorded("openai_answer");
  lying["usage"] = {{"prompt_tokens", -5}, {"completion_tokens", 1e300}};
  EXPECT_EQ(f.parse(lying).input_tokens, 0);
  EXPECT_EQ(f.parse(lying).output_tokens, 0);
}

TEST(ToolbenchOpenAiFormat, ResultsFollowAsToolMessages) {
  const OpenAiFormat f;
  json messages = json::array();
  ToolOutcome ok;
  ok.text = "buy milk";
  ToolOutcome failed;
  failed.error = "server 'filesystem' timed out";
  f.append_results(messages, {call_result("call_read_a", ok), call_result("call_list", failed)});
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], (json{{"role", "tool"}, {"tool_call_id", "call_read_a"}, {"content", "buy milk"}}));
  EXPECT_EQ(messages[1]["content"], "error: server 'filesystem' timed out");
}

TEST(ToolbenchAnthropicFormat, RequestAndRecordedReplies) {
  const AnthropicFormat f;
  EXPECT_EQ(f.endpoint("https://api.anthropic.com/"), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(f.headers("k"), (std::vector<std::string>{"Content-Type: application/json", "anthropic-version: 2023-06-01",
                                                      "x-api-key: k"}));
  const json body = f.request("be brief", json::array({f.user_message("q")}),
                              api_tools({{"read_text_file", "Read a file.", kReadSchema}}), {"claude-sonnet-4", 0, 512, 7});
  EXPECT_EQ(body["system"], "be brief");
  EXPECT_EQ(body["max_tokens"], 512);
  EXPECT_EQ(body["tools"][0], (json{{"name", "read_text_file"}, {"description", "Read a file."}, {"input_schema", kReadSchema}}));
  EXPECT_FALSE(body.contains("seed"));

  ModelReply r = f.parse(recorded("anthropic_tool_use"));
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.text, "I'll read the file first.");
  EXPECT_EQ(r.calls[0].id, "toolu_01Read");
  EXPECT_EQ(r.calls[0].arguments, (json{{"path", "notes/todo.txt"}}));
  EXPECT_EQ(r.input_tokens, 905);
  EXPECT_EQ(r.output_tokens, 77);
  EXPECT_EQ(r.stop_reason, "tool_use");
  EXPECT_EQ(r.assistant["content"].size(), 3u);

  r = f.parse(recorded("anthropic_bad_input"));
  EXPECT_EQ(r.calls.at(0).invalid, "arguments are not a JSON object (got string)");
  r = f.parse(recorded("anthropic_answer"));
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.stop_reason, "end_turn");
  EXPECT_THROW(f.parse({{"content", {{{"type", "tool_use"}, {"name", "x"}}}}}), std::runtime_error);

  json messages = json::array();
  ToolOutcome refused;
  refused.is_error = true;
  refused.text = "Access denied";
  f.append_results(messages, {call_result("toolu_01Read", refused), call_result("toolu_02List", ToolOutcome{})});
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["role"], "user");
  EXPECT_EQ(messages[0]["content"][0], (json{{"type", "tool_result"}, {"tool_use_id", "toolu_01Read"},
                                             {"content", "error: Access denied"}, {"is_error", true}}));
  EXPECT_EQ(messages[0]["content"][1]["is_error"], false);
}

TEST(ToolbenchLlmResults, LongResultsAreCutAtACharacterBoundary) {
  ToolOutcome o;
  o.text = std::string(kMaxResultBytes - 1, 'a') + "\xC3\xA9" + std::string(100, 'b');
  const CallResult r = call_result("c", o);
  // The model is told that it sees a part, and of how much.
  const std::string marker = "... [cut: " + std::to_string(kMaxResultBytes - 1) + " of " +
                             std::to_string(o.text.size()) + " bytes shown]";
  EXPECT_EQ(r.text, std::string(kMaxResultBytes - 1, 'a') + marker);  // the 2-byte character is not split
}

TEST(ToolbenchModelRequest, RedactionRetryRulesAndBackoff) {
  EXPECT_EQ(redact("key sk-abc and sk-abc again", "sk-abc"), "key [redacted] and [redacted] again");
  EXPECT_EQ(redact("nothing", ""), "nothing");
  EXPECT_EQ(redact("aaaa", "aa"), "[redacted][redacted]");
  for (long s : {408L, 409L, 425L, 429L, 500L, 502L, 503L, 529L}) EXPECT_TRUE(retryable_status(s)) << s;
  for (long s : {400L, 401L, 403L, 404L, 422L}) EXPECT_FALSE(retryable_status(s)) << s;
  std::mt19937_64 rng(1);
  for (int retry = 1; retry <= 40; ++retry) {
    const auto w = backoff(retry, std::chrono::milliseconds(500), std::nullopt, rng);
    EXPECT_GE(w.count(), 0);
    EXPECT_LE(w.count(), std::min<int64_t>(30000, 500LL << std::min(retry - 1, 20))) << retry;
  }
  EXPECT_GE(backoff(1, std::chrono::milliseconds(10), 2.0, rng).count(), 2000);    // Retry-After wins
  EXPECT_EQ(backoff(1, std::chrono::milliseconds(0), 1e9, rng).count(), 60000);   // capped
}

TEST(ToolbenchRunBudget, RequestsAndTokensRunOutAndStopIsSticky) {
  RunBudget b(2, 100);
  b.take_request();
  b.add_tokens(60);
  b.take_request();
  EXPECT_EQ(b.requests(), 2);
  try {
    b.take_request();
    FAIL() << "third request allowed";
  } catch (const AgentError& e) {
    EXPECT_NE(std::string(e.what()).find("2 model requests used up (budget_requests)"), std::string::npos) << e.what();
  }
  RunBudget tokens(0, 100);
  tokens.take_request();
  tokens.add_tokens(100);
  EXPECT_THROW(tokens.take_request(), AgentError);
  RunBudget open(0, 0);
  open.stop("HTTP 401");
  open.stop("later reason");
  try {
    open.take_request();
    FAIL() << "stopped budget allowed a request";
  } catch (const AgentError& e) {
    EXPECT_STREQ(e.what(), "run stopped: HTTP 401");
  }
}

TEST(ToolbenchPrices, LongestPrefixAndBadFiles) {
  PriceTable t;
  t.models["gpt-4o"] = {2.5, 10};
  t.models["gpt-4o-mini"] = {0.15, 0.6};
  t.models["gpt-4"] = {30, 60};
  EXPECT_DOUBLE_EQ(t.find("gpt-4o-2024-08-06")->input_per_mtok, 2.5);
  EXPECT_DOUBLE_EQ(t.find("gpt-4o-mini-2024-07-18")->input_per_mtok, 0.15);
  EXPECT_DOUBLE_EQ(t.find("gpt-4")->input_per_mtok, 30);
  EXPECT_FALSE(t.find("gpt-4o2"));
  EXPECT_FALSE(t.find("llama-3.1-8b"));
  EXPECT_DOUBLE_EQ(cost_usd({2.5, 10}, 1e6, 5e5), 7.5);

  const PriceTable shipped = load_prices(test::source_dir() / "workloads/toolbench/prices.json");
  EXPECT_TRUE(shipped.find("gpt-4o-mini"));
  EXPECT_TRUE(shipped.find("claude-sonnet-4-20250514"));
  test::TempDir dir;
  test::write_file(dir / "p.json", R"({"models": {"m": {"input_per_mtok": -1, "output_per_mtok": 1}}})");
  try {
    load_prices(dir / "p.json");
    FAIL() << "negative price accepted";
  } catch (const JsonFileError& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: models.m.input_per_mtok: expected a number >= 0"), std::string::npos)
        << e.what();
  }
  test::write_file(dir / "q.json", R"({"gpt-4o": 1})");
  EXPECT_THROW(load_prices(dir / "q.json"), JsonFileError);
}

}  // namespace
}  // namespace mlsb::toolbench
