#pragma once
// Incremental parser for Server-Sent Events (text/event-stream, WHATWG HTML "server-sent events").
#include <functional>
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
/// Handles LF, CRLF and CR line ends, multi-line data, comments (":..."), `event:`, `id:`; ignores `retry:`
/// and unknown fields. An event with no data is not dispatched (as the spec says).
class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler on_event) : on_event_(std::move(on_event)) {}

  void feed(std::string_view chunk);

 private:
  void line(std::string_view text);

  Handler on_event_;
  std::string partial_;        ///< bytes of an unfinished line
  bool skip_lf_ = false;       ///< the previous chunk ended with CR: a leading LF belongs to it
  std::string data_, event_, last_id_;
  bool has_data_ = false;
};

}  // namespace mlsb::mcp
