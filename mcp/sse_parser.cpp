#include "mcp/sse_parser.hpp"

namespace mlsb::mcp {

void SseParser::feed(std::string_view chunk) {
  size_t pos = 0;
  if (skip_lf_ && !chunk.empty()) {
    if (chunk[0] == '\n') pos = 1;
    skip_lf_ = false;
  }
  while (!overflow_ && pos < chunk.size()) {
    const size_t end = chunk.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      partial_.append(chunk.substr(pos));
      overflow_ = partial_.size() > max_bytes_;
      break;
    }
    if (partial_.empty()) {
      line(chunk.substr(pos, end - pos));
    } else {
      partial_.append(chunk.substr(pos, end - pos));
      line(partial_);
      partial_.clear();
    }
    pos = end + 1;
    if (chunk[end] == '\r') {
      if (pos == chunk.size()) skip_lf_ = true;
      else if (chunk[pos] == '\n') ++pos;
    }
  }
}

void SseParser::line(std::string_view text) {
  if (text.empty()) {  // blank line: dispatch
    if (has_data_) {
      SseEvent ev{event_.empty() ? "message" : event_, std::move(data_), last_id_};
      on_event_(ev);
    }
    data_.clear();
    event_.clear();
    has_data_ = false;
    return;
  }
  if (text[0] == ':') return;  // comment
  std::string_view field = text, value;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    field = text.substr(0, colon);
    value = text.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
    overflow_ = data_.size() > max_bytes_;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  } else if (field == "retry") {  // digits only, else ignored (WHATWG); capped to keep the arithmetic sane
    if (!value.empty() && value.size() <= 9 &&
        value.find_first_not_of("0123456789") == std::string_view::npos)
      retry_ms_ = std::stoll(std::string(value));
  }
}

}  // namespace mlsb::mcp
