#include "gateway/protocol/json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

namespace qim {
namespace {

std::string roundtrip_string(std::string_view in) {
  std::string json;
  append_json_string(json, in);
  simdjson::dom::parser parser;
  std::string_view out;
  auto err = parser.parse(json).get_string().get(out);
  EXPECT_EQ(err, simdjson::SUCCESS) << json;
  return std::string(out);
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(roundtrip_string("a\"b\\c"), "a\"b\\c");
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls.push_back(static_cast<char>(c));
  EXPECT_EQ(roundtrip_string(controls), controls);
  EXPECT_EQ(roundtrip_string("héllo 你好 🎉"), "héllo 你好 🎉");
}

// The plain runs are copied whole: the escapes between them, at either end and next to each other must
// come out exactly where the bytes were.
TEST(JsonWriter, EscapesBetweenPlainRunsExactly) {
  auto encoded = [](std::string_view in) {
    std::string out = "prefix:";
    append_json_string(out, in);
    return out;
  };
  EXPECT_EQ(encoded(""), R"(prefix:"")");
  EXPECT_EQ(encoded("plain text only"), R"(prefix:"plain text only")");
  EXPECT_EQ(encoded("\"lead"), R"(prefix:"\"lead")");
  EXPECT_EQ(encoded("tail\\"), R"(prefix:"tail\\")");
  // (Hex escapes end where the literal does: "\x01" "c" is two bytes.)
  EXPECT_EQ(encoded("a\n\tb\x7F\x01"
                    "c\xC3\xA9"
                    "d\xFF"
                    "e"),
            R"(prefix:"a\n\tb\u007f\u0001c)"
            "\xC3\xA9"
            R"(d\ufffde")");
  const std::string body(1000, 'x');
  EXPECT_EQ(encoded(body + "\"" + body), "prefix:\"" + body + "\\\"" + body + "\"");
}

TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(roundtrip_string("a\xff"
                             "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(roundtrip_string("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(roundtrip_string("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(roundtrip_string("\xE4\xBD"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // truncated
}

TEST(JsonWriter, BuildsNestedObjectsWithCommas) {
  JsonWriter w;
  w.begin_object().field("type", "X").key("list").begin_array();
  w.begin_object().key("id").uint64_as_string(18446744073709551615ull).end_object();
  w.begin_object().key("n").int64(-5).end_object();
  w.end_array().key("ok").boolean(true).key("none").null().end_object();
  EXPECT_EQ(w.take(),
            R"({"type":"X","list":[{"id":"18446744073709551615"},{"n":-5}],"ok":true,"none":null})");
}

}  // namespace
}  // namespace qim
