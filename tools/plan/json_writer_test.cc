#include "tools/plan/json_writer.h"

#include <string>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

std::string Quoted(absl::string_view value) {
  std::string out;
  AppendJsonString(value, &out);
  return out;
}

TEST(AppendJsonStringTest, Escapes) {
  EXPECT_EQ(Quoted(""), "\"\"");
  EXPECT_EQ(Quoted("a\"b\\c/"), "\"a\\\"b\\\\c/\"");
  EXPECT_EQ(Quoted("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
  EXPECT_EQ(Quoted(std::string("\x00\x1f\x7f", 3)), "\"\\u0000\\u001f\x7f\"");
}

TEST(AppendJsonStringTest, KeepsUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Quoted("日本 \xf0\x9f\x98\x80"), "\"日本 \xf0\x9f\x98\x80\"");
  EXPECT_EQ(Quoted("\xff"), "\"\xef\xbf\xbd\"");
  EXPECT_EQ(Quoted("a\xc3"), "\"a\xef\xbf\xbd\"");        // truncated
  EXPECT_EQ(Quoted("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");  // overlong
  EXPECT_EQ(Quoted("\xed\xa0\x80"),  // a UTF-16 surrogate
            "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST(JsonWriterTest, LayoutLikeDumpTwo) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Member("a", 1);
  w.Key("b");
  w.BeginArray();
  w.EndArray();
  w.Key("c");
  w.BeginObject();
  w.EndObject();
  w.Key("d");
  w.BeginArray();
  w.String("x");
  w.BeginObject();
  w.Member("y", "z");
  w.EndObject();
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(out,
            "{\n"
            "  \"a\": 1,\n"
            "  \"b\": [],\n"
            "  \"c\": {},\n"
            "  \"d\": [\n"
            "    \"x\",\n"
            "    {\n"
            "      \"y\": \"z\"\n"
            "    }\n"
            "  ]\n"
            "}");
}

}  // namespace
}  // namespace fleetplan
