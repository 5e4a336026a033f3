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
