// The LLM agents (openai, anthropic) through the toolbench workload against a local chat server that
// answers in each API's wire format (fake_llm.hpp) and real MCP servers: a perfect model matches the
// oracle, the multi-step loop feeds results back, model mistakes are misses with reasons, transient
// failures are retried, and what cannot be got past is an agent error, not a crash.
#include <gtest/gtest.h>

#include <cstdlib>

#include "integration/toolbench/fake_llm.hpp"
#include "integration/toolbench/toolbench_case.hpp"
#include "support/test_support.hpp"
#include "workloads/toolbench/task.hpp"

namespace mlsb {
namespace {

using nlohmann::json;
using test::CaseResult;
using test::FakeLlm;

constexpr const char* kKeyVar = "MLSB_FAKE_LLM_KEY";
constexpr const char* kKey = "sk-mlsb-test-0123456789abcdef";

std::vector<toolbench::Task> authored_tasks() {
  return toolbench::load_dataset(test::source_dir() / "datasets/toolbench/tasks.json").tasks;
}

// A case of `agent` against `llm`, with `more` on top.
CaseResult run_llm(const FakeLlm& llm, const std::string& agent, std::map<std::string, Value> more = {}) {
  ::setenv(kKeyVar, kKey, 1);
  std::map<std::string, Value> params = {{"agent", agent},
                                         {"model", std::string("fake-model")},
                                         {"base_url", llm.base_url(agent)},
                                         {"api_key_env", std::string(kKeyVar)},
                                         {"retry_base_ms", int64_t{5}}};
  for (auto& [k, v] : more) params[k] = v;
  return test::run_toolbench_case(params);
}

std::string reasons(const CaseResult& r) {
  std::string s;
  for (const auto& [key, item] : r.items) s += key + ": " + item["reason"].get<std::string>() + "\n";
  return s;
}

TEST(ToolbenchLlmAgent, OpenAiWithAPerfectModelMatchesTheOracle) {
  const auto tasks = authored_tasks();
  FakeLlm llm(tasks);
  const CaseResult r = run_llm(llm, "openai", {{"concurrency", int64_t{2}}});
  ASSERT_EQ(r.failure, "");
  EXPECT_EQ(r.metric("pass_at_1"), 1.0) << reasons(r);
  EXPECT_EQ(r.metric("agent_error_rate"), 0.0);
  EXPECT_GT(r.metric("model_latency_p50_ms"), 0.0);
  EXPECT_GE(r.metric("model_latency_p95_ms"), r.metric("model_latency_p50_ms"));
  EXPECT_EQ(r.samples.count("cost_usd"), 0u);  // no price for fake-model: warned, not recorded
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("no price for model 'fake-model'"), std::string::npos) << r.warnings[0];

  // Each task: one request per label (a call each) and one for the final answer, each item keeping them.
  double input = 0;
  std::size_t expected_requests = 0;
  for (const auto& [key, item] : r.items) {
    const std::size_t labels = item["expected"].size();
    ASSERT_EQ(item["model_turns"].size(), labels + 1) << key;
    EXPECT_EQ(item["model_turns"][0]["attempts"], 1);
    EXPECT_EQ(item["model_turns"][0]["stop_reason"], "tool_calls");
    EXPECT_EQ(item["model_turns"][labels]["calls"], 0);
    EXPECT_EQ(item["answer"], "done");
    EXPECT_FALSE(item["agent_error"].get<bool>());
    for (const auto& c : item["calls"]) EXPECT_FALSE(c["is_error"].get<bool>()) << key << ": " << c["result"];
    input += item["input_tokens"].get<double>();
    expected_requests += labels + 1;
  }
  EXPECT_DOUBLE_EQ(r.metric("input_tokens_per_task"), input / static_cast<double>(r.items.size()));

  const auto requests = llm.requests();
  EXPECT_EQ(requests.size(), expected_requests);
  bool saw_multi_step = false;
  for (const auto& q : requests) {
    EXPECT_EQ(q.path, "/v1/chat/completions");
    EXPECT_EQ(q.authorization, std::string("Bearer ") + kKey);
    EXPECT_EQ(q.body["model"], "fake-model");
    EXPECT_EQ(q.body["messages"][0]["role"], "system");
    EXPECT_TRUE(q.body.contains("seed"));
    EXPECT_EQ(q.body["tools"][0]["type"], "function");
    const json& m = q.body["messages"];
    if (m.size() < 6) continue;  // system, user, call, result, call, result: the second step was fed back
    saw_multi_step = true;
    EXPECT_EQ(m[2]["role"], "assistant");
    EXPECT_EQ(m[3]["role"], "tool");
    EXPECT_EQ(m[3]["tool_call_id"], m[2]["tool_calls"][0]["id"]);
    EXPECT_EQ(m[5]["tool_call_id"], m[4]["tool_calls"][0]["id"]);
    EXPECT_NE(m[3]["content"].get<std::string>().rfind("error:", 0), 0u) << m[3]["content"];
  }
  EXPECT_TRUE(saw_multi_step);
}

TEST(ToolbenchLlmAgent, AnthropicWithAPerfectModelMatchesTheOracleAndIsPriced) {
  FakeLlm llm(authored_tasks());
  const CaseResult r = run_llm(llm, "anthropic", {{"model", std::string("claude-sonnet-4-20250514")},
                                                  {"concurrency", int64_t{2}}, {"limit", int64_t{12}}});
  ASSERT_EQ(r.failure, "");
  EXPECT_EQ(r.metric("pass_at_1"), 1.0) << reasons(r);
  EXPECT_TRUE(r.warnings.empty());
  double input = 0, output = 0;
  for (const auto& [key, item] : r.items) {
    input += item["input_tokens"].get<double>();
    output += item["output_tokens"].get<double>();
  }
  EXPECT_NEAR(r.metric("cost_usd"), (input * 3.0 + output * 15.0) / 1e6, 1e-12);  // the shipped prices.json
  bool saw_result = false;
  for (const auto& q : llm.requests()) {
    EXPECT_EQ(q.path, "/v1/messages");
    EXPECT_EQ(q.api_key, kKey);
    EXPECT_EQ(q.authorization, "");
    EXPECT_EQ(q.anthropic_version, "2023-06-01");
    EXPECT_FALSE(q.body.contains("seed"));
    const json& m = q.body["messages"];
    if (m.size() < 3) continue;
    saw_result = true;
    EXPECT_EQ(m[1]["content"][0]["type"], "tool_use");
    EXPECT_EQ(m[2]["content"][0]["type"], "tool_result");
    EXPECT_EQ(m[2]["content"][0]["tool_use_id"], m[1]["content"][0]["id"]);
    EXPECT_EQ(m[2]["content"][0]["is_error"], false);
  }
  EXPECT_TRUE(saw_result);
}

// Calls with broken or non-object arguments and calls of unknown tools are not sent; the model is
// told why and may go on; the trial is a miss with the reasons, not an agent error.
TEST(ToolbenchLlmAgent, ModelMistakesAreMissesWithReasons) {
  FakeLlm llm(authored_tasks());
  llm.queue({200, FakeLlm::recorded("openai_bad_arguments"), {}, false, {}});
  const json teleport = {{"choices", {{{"message", {{"role", "assistant"}, {"tool_calls", {{{"id", "t1"},
                          {"function", {{"name", "teleport"}, {"arguments", "{}"}}}}}}}}}}}};
  llm.queue({200, teleport.dump(), {}, false, {}});
  llm.queue({200, FakeLlm::recorded("openai_answer"), {}, false, {}});
  const CaseResult r = run_llm(llm, "openai", {{"limit", int64_t{1}}});
  ASSERT_EQ(r.failure, "");
  ASSERT_EQ(r.items.size(), 1u);
  const json& item = r.items[0].second;
  ASSERT_EQ(item["calls"].size(), 4u) << item.dump(2);
  EXPECT_EQ(item["calls"][0]["result"].get<std::string>().rfind("arguments are not JSON: ", 0), 0u);
  EXPECT_EQ(item["calls"][0]["arguments"], "{\"path\": \"notes/todo.txt\"");
  EXPECT_EQ(item["calls"][1]["result"], "arguments are not a JSON object (got array)");
  EXPECT_FALSE(item["calls"][2]["is_error"].get<bool>()) << item["calls"][2];  // list_allowed_directories ran
  EXPECT_EQ(item["calls"][3]["result"], "tool 'teleport' is offered by no server of the task");
  EXPECT_FALSE(item["pass"].get<bool>());
  EXPECT_FALSE(item["agent_error"].get<bool>());
  EXPECT_NE(item["reason"].get<std::string>().find("got 'teleport'"), std::string::npos) << item["reason"];
  EXPECT_EQ(item["answer"], "I cannot find a tool for that.");
  EXPECT_EQ(r.metric("agent_error_rate"), 0.0);
  // The second request fed the three results back, the broken ones as errors.
  const auto requests = llm.requests();
  ASSERT_EQ(requests.size(), 3u);
  const json& m = requests[1].body["messages"];
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[3]["tool_call_id"], "call_broken");
  EXPECT_EQ(m[3]["content"].get<std::string>().rfind("error: arguments are not JSON", 0), 0u) << m[3];
  EXPECT_EQ(m[4]["content"], "error: arguments are not a JSON object (got array)");

  // A reply that quotes the key (here the answer) is redacted before anything keeps it.
  FakeLlm echo(authored_tasks());
  echo.always({200, json{{"choices", {{{"message", {{"role", "assistant"}, {"content", std::string("key: ") + kKey}}}}}}}.dump(),
               {}, false, {}});
  const CaseResult echoed = run_llm(echo, "openai", {{"limit", int64_t{1}}});
  EXPECT_EQ(echoed.items.at(0).second["answer"], "key: [redacted]");

  FakeLlm silent(authored_tasks());
  silent.always({200, FakeLlm::recorded("openai_answer"), {}, false, {}});
  const CaseResult none = run_llm(silent, "openai", {{"limit", int64_t{1}}});
  EXPECT_EQ(none.items.at(0).second["reason"], "no tool call made");
  EXPECT_EQ(none.metric("agent_error_rate"), 0.0);
}

TEST(ToolbenchLlmAgent, RateLimitsAndRepliesCutShortAreRetried) {
  FakeLlm llm(authored_tasks());
  llm.queue({429, R"({"error": {"message": "Rate limit reached"}})", {{"Retry-After", "0"}}, false, {}});
  llm.queue({200, FakeLlm::recorded("openai_tool_calls"), {}, true, {}});  // drops mid-body
  llm.queue({502, "<html>bad gateway</html>", {}, false, {}});
  const CaseResult r = run_llm(llm, "openai", {{"limit", int64_t{1}}});
  ASSERT_EQ(r.failure, "");
  const json& item = r.items.at(0).second;
  EXPECT_TRUE(item["pass"].get<bool>()) << item["reason"];
  EXPECT_EQ(item["model_turns"][0]["attempts"], 4);
  EXPECT_EQ(item["model_turns"][1]["attempts"], 1);
}

TEST(ToolbenchLlmAgent, ExhaustedRetriesAreAgentErrorsNotWrongAnswers) {
  FakeLlm llm(authored_tasks());
  llm.always({503, R"({"error": {"message": "overloaded"}})", {}, false, {}});
  const CaseResult r = run_llm(llm, "openai", {{"limit", int64_t{3}}, {"max_retries", int64_t{2}}});
  // Every trial an agent error: the scores measure nothing, so the case fails (its items are kept).
  EXPECT_NE(r.failure.find("every task trial was an agent error (first: agent 'openai': openai API"),
            std::string::npos) << r.failure;
  EXPECT_EQ(r.metric("agent_error_rate"), 1.0);
  EXPECT_EQ(r.metric("pass_at_1"), 0.0);
  EXPECT_EQ(r.samples.count("model_latency_p50_ms"), 0u);
  for (const auto& [key, item] : r.items) {
    EXPECT_TRUE(item["agent_error"].get<bool>()) << key;
    const std::string reason = item["reason"];
    EXPECT_NE(reason.find("HTTP 503"), std::string::npos) << reason;
    EXPECT_NE(reason.find("(after 3 attempts)"), std::string::npos) << reason;
  }
  EXPECT_EQ(llm.requests().size(), 9u);
}

// A rejected key stops the run after one request; the key the API echoed is redacted.
TEST(ToolbenchLlmAgent, RejectedKeyStopsTheRunAndIsRedacted) {
  FakeLlm llm(authored_tasks());
  const CaseResult r = run_llm(llm, "openai", {{"limit", int64_t{4}}, {"base_url", llm.base_url("openai", "/deny")}});
  EXPECT_NE(r.failure.find("every task trial was an agent error"), std::string::npos) << r.failure;
  EXPECT_EQ(r.failure.find(kKey), std::string::npos);
  EXPECT_EQ(llm.requests().size(), 1u);
  EXPECT_EQ(r.metric("agent_error_rate"), 1.0);
  for (const auto& [key, item] : r.items) {
    const std::string text = item.dump();
    EXPECT_EQ(text.find(kKey), std::string::npos) << text;
    EXPECT_NE(text.find("HTTP 401"), std::string::npos) << text;
    EXPECT_NE(text.find("Incorrect API key provided: [redacted]"), std::string::npos) << text;
  }
  EXPECT_NE(r.items[1].second["reason"].get<std::string>().find("run stopped"), std::string::npos);
}

TEST(ToolbenchLlmAgent, BudgetAndDeadlineEndTrialsAsAgentErrors) {
  FakeLlm llm(authored_tasks());
  // Task 0 takes 2 requests (a call, then the answer); the third request is the last allowed.
  const CaseResult r = run_llm(llm, "openai", {{"limit", int64_t{3}}, {"budget_requests", int64_t{3}}});
  ASSERT_EQ(r.failure, "");
  EXPECT_TRUE(r.items[0].second["pass"].get<bool>()) << r.items[0].second["reason"];
  EXPECT_NEAR(r.metric("agent_error_rate"), 2.0 / 3.0, 1e-12);
  EXPECT_NE(r.items[2].second["reason"].get<std::string>().find("3 model requests used up (budget_requests)"),
            std::string::npos) << reasons(r);
  bool warned = false;
  for (const auto& w : r.warnings) warned = warned || w.rfind("2 task trials of 3 ended in an agent error", 0) == 0;
  EXPECT_TRUE(warned);
  EXPECT_EQ(llm.requests().size(), 3u);

  FakeLlm slow(authored_tasks());
  slow.always({200, FakeLlm::recorded("openai_answer"), {}, false, std::chrono::milliseconds(1500)});
  const CaseResult late = run_llm(slow, "openai", {{"limit", int64_t{1}}, {"task_deadline_s", int64_t{1}}});
  const json& item = late.items.at(0).second;
  EXPECT_TRUE(item["agent_error"].get<bool>());
  EXPECT_NE(item["reason"].get<std::string>().find("task deadline"), std::string::npos) << item["reason"];
}

TEST(ToolbenchLlmAgent, UnusableSettingsFailTheCaseNamingThem) {
  FakeLlm llm(authored_tasks());
  EXPECT_NE(run_llm(llm, "openai", {{"model", std::string("")}}).failure.find("needs a model: -p model=NAME"),
            std::string::npos);
  EXPECT_NE(run_llm(llm, "openai", {{"base_url", std::string("localhost:8000")}}).failure.find("is not an http"),
            std::string::npos);
  EXPECT_NE(run_llm(llm, "openai", {{"api_key_env", std::string("MLSB_SURELY_UNSET_VAR")}})
                .failure.find("api_key_env: environment variable MLSB_SURELY_UNSET_VAR is not set"),
            std::string::npos);
  EXPECT_TRUE(llm.requests().empty());
}

}  // namespace
}  // namespace mlsb
