#pragma once
// Incremental parser for Server-Sent Events (text/event-stream, WHATWG HTML "server-sent events").
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mlsb::mcp {

/// One dispatched event. `event` is "message" when the stream gave no `event:` field.
struct SseEvent {
  std::string event;
  std::string data;  ///< `data:` lines joined with '\n'
  std::string id;    ///< the last event id seen on the stream so far
};

/// Feed it byte chunks split anywhere (mid-line, mid-CRLF); it calls `on_event` for each complete event.
/// Handles LF, CRLF and CR line ends, multi-line data, comments (":..."), `event:`, `id:`, `retry:` (kept
/// for the caller's reconnection); ignores unknown fields. An event with no data is not dispatched (as the
/// spec says), but its id and retry still count.
class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  /// `max_bytes` bounds an unfinished line and an event's data.
  explicit SseParser(Handler on_event, size_t max_bytes = SIZE_MAX)
      : on_event_(std::move(on_event)), max_bytes_(max_bytes) {}

  /// Ignored once overflowed().
  void feed(std::string_view chunk);
  /// Whether a line or an event's data grew past `max_bytes` (the stream is unusable then).
  bool overflowed() const { return overflow_; }
  /// The last event id the stream set ("" = none): what a reconnection sends as Last-Event-ID.
  const std::string& last_event_id() const { return last_id_; }
  /// The reconnection time the stream set with `retry:` (ms), if any.
  std::optional<int64_t> retry_ms() const { return retry_ms_; }

 private:
  void line(std::string_view text);

  Handler on_event_;
  size_t max_bytes_;
  bool overflow_ = false;
  std::string partial_;        ///< bytes of an unfinished line
  bool skip_lf_ = false;       ///< the previous chunk ended with CR: a leading LF belongs to it
  std::string data_, event_, last_id_;
  bool has_data_ = false;
  std::optional<int64_t> retry_ms_;
};

}  // namespace mlsb::mcp
