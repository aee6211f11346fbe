// The one JSON serializer of gpuscope: every string that reaches a JSON file passes through escape(),
// so a quote, a control character or invalid UTF-8 in a kernel name can never corrupt the output.
// Streams to a FILE* in large chunks, or collects into a string.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "formats/status.h"

namespace gpuscope {

// Appends text to out as the contents of a JSON string (without quotes): '"', '\\' and control characters
// are escaped, invalid UTF-8 bytes become U+FFFD, U+2028/U+2029 are escaped for JavaScript-based viewers.
void appendJsonEscaped(std::string_view text, std::string& out);

class JsonWriter {
 public:
  JsonWriter() = default;                                // collects into text()
  explicit JsonWriter(std::FILE* file) : file_(file) {}  // streams to file; check flush() at the end

  JsonWriter& beginObject();
  JsonWriter& endObject();
  // one_item_per_line puts each element on its own line: still compact, but diffable and greppable.
  JsonWriter& beginArray(bool one_item_per_line = false);
  JsonWriter& endArray();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(int64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(double number);  // non-finite numbers become null (JSON has no NaN)
  JsonWriter& value(bool flag);
  JsonWriter& null();
  // A value already written as JSON, for the rare reader that wants one spelled exactly (HTA's pattern for
  // torch's "distributedInfo"). The caller makes it valid JSON; any string in it must be escaped.
  JsonWriter& rawValue(std::string_view json);
  // A duration or time given in integer nanoseconds, written as microseconds with three decimals
  // (exact: no floating point is involved), the unit Chrome trace events use.
  JsonWriter& microseconds(int64_t ns);

  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // Writes buffered output to the file; returns false if the file reported an error.
  bool flush();
  const std::string& text() const { return buffer_; }
  int64_t bytesWritten() const { return bytes_flushed_ + static_cast<int64_t>(buffer_.size()); }

 private:
  void beforeValue();
  void maybeFlush() {
    if (file_ && buffer_.size() >= kFlushBytes) flush();
  }

  static constexpr size_t kFlushBytes = 1 << 20;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  struct Level {
    bool has_items = false;  // a comma is needed before the next element
    bool one_per_line = false;
  };
  std::vector<Level> levels_;  // one per open object or array
  bool after_key_ = false;
  bool write_failed_ = false;
  int64_t bytes_flushed_ = 0;
};

}  // namespace gpuscope
