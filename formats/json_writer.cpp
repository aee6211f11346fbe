#include "formats/json_writer.h"

#include <charconv>
#include <cmath>

namespace gpuscope {

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (Unicode 15, table 3-7), or 0 if it is not one.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  const size_t left = s.size() - i;
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < left && byte(i + k) >= lo && byte(i + k) <= hi;
  };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no UTF-16 surrogates
  if (b0 == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

void appendHexEscape(unsigned code, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xF];
}

}  // namespace

void appendJsonEscaped(std::string_view text, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default: break;
    }
    if (c < 0x20) {
      appendHexEscape(c, out);
      ++i;
      continue;
    }
    const size_t n = utf8SequenceLength(text, i);
    if (n == 0) {
      appendHexEscape(0xFFFD, out);  // one replacement character per invalid byte
      ++i;
    } else if (n == 3 && text.compare(i, 3, "\xE2\x80\xA8") == 0) {
      appendHexEscape(0x2028, out);
      i += 3;
    } else if (n == 3 && text.compare(i, 3, "\xE2\x80\xA9") == 0) {
      appendHexEscape(0x2029, out);
      i += 3;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
}

void JsonWriter::beforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.has_items) buffer_ += ',';
  if (level.one_per_line) buffer_ += '\n';
  level.has_items = true;
}

JsonWriter& JsonWriter::beginObject() {
  beforeValue();
  buffer_ += '{';
  levels_.push_back({});
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  buffer_ += '}';
  levels_.pop_back();
  maybeFlush();
  return *this;
}

JsonWriter& JsonWriter::beginArray(bool one_item_per_line) {
  beforeValue();
  buffer_ += '[';
  levels_.push_back({false, one_item_per_line});
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  if (!levels_.empty() && levels_.back().one_per_line && levels_.back().has_items) buffer_ += '\n';
  buffer_ += ']';
  levels_.pop_back();
  maybeFlush();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  beforeValue();
  buffer_ += '"';
  appendJsonEscaped(name, buffer_);
  buffer_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  beforeValue();
  buffer_ += '"';
  appendJsonEscaped(text, buffer_);
  buffer_ += '"';
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  beforeValue();
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, number);
  buffer_.append(digits, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  beforeValue();
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof digits, number);
  buffer_.append(digits, result.ptr);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  beforeValue();
  buffer_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  beforeValue();
  buffer_ += "null";
  return *this;
}

JsonWriter& JsonWriter::rawValue(std::string_view json) {
  beforeValue();
  buffer_ += json;
  return *this;
}

JsonWriter& JsonWriter::microseconds(int64_t ns) {
  beforeValue();
  if (ns < 0) buffer_ += '-';
  // Negate in unsigned arithmetic so INT64_MIN is handled too.
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const uint64_t frac = magnitude % 1000;
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof digits, magnitude / 1000);
  buffer_.append(digits, result.ptr);
  buffer_ += '.';
  buffer_ += static_cast<char>('0' + frac / 100);
  buffer_ += static_cast<char>('0' + frac / 10 % 10);
  buffer_ += static_cast<char>('0' + frac % 10);
  return *this;
}

bool JsonWriter::flush() {
  if (!file_) return true;
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    write_failed_ = true;
  }
  bytes_flushed_ += static_cast<int64_t>(buffer_.size());
  buffer_.clear();
  return !write_failed_;
}

}  // namespace gpuscope
