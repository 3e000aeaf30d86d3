#include "mcp/sse_parser.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace mlsb::mcp {
namespace {

std::vector<SseEvent> parse_in_chunks(const std::string& stream, size_t chunk) {
  std::vector<SseEvent> events;
  SseParser parser([&](const SseEvent& e) { events.push_back(e); });
  for (size_t i = 0; i < stream.size(); i += chunk) parser.feed(std::string_view(stream).substr(i, chunk));
  return events;
}

const std::string kStream =
    ": a comment line\r\n"
    "event: endpoint\r\n"
    "data: /messages?sessionId=42\r\n"
    "\r\n"
    "id: 7\n"
    "data: {\"a\":\n"
    "data:1}\n"
    "\n"
    "retry: 100\r"
    "data\r"
    "\r"
    "event: empty\n"
    "\n"
    "data: tail without blank line";

TEST(McpSseParser, ParsesFieldsWhateverTheChunking) {
  for (size_t chunk = 1; chunk <= kStream.size(); ++chunk) {
    SCOPED_TRACE("chunk size " + std::to_string(chunk));
    const auto events = parse_in_chunks(kStream, chunk);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].event, "endpoint");
    EXPECT_EQ(events[0].data, "/messages?sessionId=42");
    EXPECT_EQ(events[0].id, "");
    EXPECT_EQ(events[1].event, "message");
    EXPECT_EQ(events[1].data, "{\"a\":\n1}");  // multi-line data joined by LF; no space after "data:" kept
    EXPECT_EQ(events[1].id, "7");
    EXPECT_EQ(events[2].data, "");   // a bare "data" field is an empty data line: still dispatched
    EXPECT_EQ(events[2].id, "7");    // the last event id persists
  }
}

// What a client needs to resume a stream (SEP-1699): the last id and the retry time, even when set by a
// priming event with empty data; a malformed retry is ignored.
TEST(McpSseParser, KeepsTheLastIdAndRetryForReconnection) {
  std::vector<SseEvent> events;
  SseParser parser([&](const SseEvent& e) { events.push_back(e); });
  EXPECT_EQ(parser.retry_ms(), std::nullopt);
  parser.feed("id: event-1\nretry: 500\ndata: \n\n");
  EXPECT_EQ(parser.last_event_id(), "event-1");
  EXPECT_EQ(parser.retry_ms(), 500);
  parser.feed("retry: 5s\nretry: -1\nretry: 99999999999\n\n");
  EXPECT_EQ(parser.retry_ms(), 500);
}

TEST(McpSseParser, CrLfSplitAcrossChunksIsOneLineEnd) {
  std::vector<SseEvent> events;
  SseParser parser([&](const SseEvent& e) { events.push_back(e); });
  parser.feed("data: x\r");
  parser.feed("\n\r");
  parser.feed("\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(McpSseParser, EventWithoutDataIsNotDispatched) {
  const auto events = parse_in_chunks("event: ping\n\n: keepalive\n\n", 4);
  EXPECT_TRUE(events.empty());
}

TEST(McpSseParser, OnlyOneLeadingSpaceIsStripped) {
  const auto events = parse_in_chunks("data:   padded\nevent:custom\n\n", 3);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "  padded");
  EXPECT_EQ(events[0].event, "custom");
}

TEST(McpSseParser, OverflowsPastMaxBytesOnALineOrAnEvent) {
  std::vector<SseEvent> events;
  SseParser line([&](const SseEvent& e) { events.push_back(e); }, 10);
  line.feed("data: 1234");
  EXPECT_FALSE(line.overflowed());
  line.feed("5678");
  EXPECT_TRUE(line.overflowed());
  line.feed("\n\n");
  EXPECT_TRUE(events.empty());

  SseParser event([&](const SseEvent& e) { events.push_back(e); }, 10);
  event.feed("data: 123456\ndata: 7890\n");
  EXPECT_TRUE(event.overflowed());
  event.feed("\n");
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace mlsb::mcp
