// The one JSON serializer: hostile strings always give valid JSON, numbers and times are exact.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "formats/json_writer.h"

namespace gpuscope {
namespace {

std::string escaped(std::string_view text) {
  std::string out;
  appendJsonEscaped(text, out);
  return out;
}

// Serialises text as a JSON string, parses it back with an independent parser, returns what it decoded.
std::string decode(std::string_view text) {
  JsonWriter json;
  json.value(text);
  return nlohmann::json::parse(json.text()).get<std::string>();
}

TEST(JsonEscape, QuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(escaped("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(escaped("\n\r\t\b\f"), "\\n\\r\\t\\b\\f");
  EXPECT_EQ(escaped(std::string("\x01\x1f\x00", 3)), "\\u0001\\u001f\\u0000");
  EXPECT_EQ(decode(std::string("nul\x00inside", 10)), std::string("nul\x00inside", 10));
}

TEST(JsonEscape, ValidUtf8PassesThrough) {
  EXPECT_EQ(escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
  EXPECT_EQ(decode("\xe4\xb8\xad\xe6\x96\x87"), "\xe4\xb8\xad\xe6\x96\x87");
}

TEST(JsonEscape, InvalidUtf8BecomesReplacementCharacters) {
  const std::string kReplacement = "\xef\xbf\xbd";
  EXPECT_EQ(decode("a\xff"
                   "b"),
            "a" + kReplacement + "b");                                            // never valid
  EXPECT_EQ(decode("\x80"), kReplacement);                                        // lone continuation byte
  EXPECT_EQ(decode("\xc0\xaf"), kReplacement + kReplacement);                     // overlong '/'
  EXPECT_EQ(decode("\xed\xa0\x80"), kReplacement + kReplacement + kReplacement);  // UTF-16 surrogate
  EXPECT_EQ(decode("\xf4\x90\x80\x80").size(), 4 * kReplacement.size());          // above U+10FFFF
  EXPECT_EQ(decode("end\xe2\x82"), "end" + kReplacement + kReplacement);          // truncated sequence
}

TEST(JsonEscape, LineSeparatorsAreEscapedForJavaScriptViewers) {
  EXPECT_EQ(escaped("a\xe2\x80\xa8z\xe2\x80\xa9"), "a\\u2028z\\u2029");
  EXPECT_EQ(decode("a\xe2\x80\xa8z"), "a\xe2\x80\xa8z");
}

TEST(JsonEscape, EveryByteValueGivesValidJson) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  JsonWriter json;
  json.beginObject().field(all, all).endObject();
  EXPECT_TRUE(nlohmann::json::accept(json.text()));
}

TEST(JsonWriter, CommasBetweenItemsOfNestedContainers) {
  JsonWriter json;
  json.beginObject().field("a", 1).key("b").beginArray().value(1).value("x").null().value(true).endArray();
  json.key("c").beginObject().endObject().endObject();
  EXPECT_EQ(json.text(), R"({"a":1,"b":[1,"x",null,true],"c":{}})");
}

TEST(JsonWriter, OneItemPerLineArraysStayValid) {
  JsonWriter json;
  json.beginArray(true).value(1).value(2).endArray();
  EXPECT_EQ(json.text(), "[\n1,\n2\n]");
  JsonWriter empty;
  empty.beginArray(true).endArray();
  EXPECT_EQ(empty.text(), "[]");
}

TEST(JsonWriter, MicrosecondsAreExactDecimals) {
  auto us = [](int64_t ns) {
    JsonWriter json;
    json.microseconds(ns);
    return json.text();
  };
  EXPECT_EQ(us(0), "0.000");
  EXPECT_EQ(us(1), "0.001");
  EXPECT_EQ(us(1'234'567), "1234.567");
  EXPECT_EQ(us(-500), "-0.500");
  EXPECT_EQ(us(-1'500), "-1.500");
  EXPECT_EQ(us(INT64_MIN), "-9223372036854775.808");
  EXPECT_EQ(us(INT64_MAX), "9223372036854775.807");
}

TEST(JsonWriter, NonFiniteNumbersBecomeNull) {
  JsonWriter json;
  json.beginArray().value(1.5).value(std::nan("")).value(HUGE_VAL).endArray();
  EXPECT_EQ(json.text(), "[1.5,null,null]");
}

TEST(JsonWriter, StreamsToAFile) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  JsonWriter json(f);
  json.beginArray();
  for (int i = 0; i < 300'000; ++i) json.value(i);  // several flushes of the 1 MiB buffer
  json.endArray();
  ASSERT_TRUE(json.flush());
  EXPECT_EQ(json.bytesWritten(), std::ftell(f));
  std::rewind(f);
  std::string text(static_cast<size_t>(json.bytesWritten()), '\0');
  ASSERT_EQ(std::fread(text.data(), 1, text.size(), f), text.size());
  std::fclose(f);
  const auto parsed = nlohmann::json::parse(text);
  ASSERT_EQ(parsed.size(), 300'000u);
  EXPECT_EQ(parsed.back(), 299'999);
}

}  // namespace
}  // namespace gpuscope
