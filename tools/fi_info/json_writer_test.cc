#include "tools/fi_info/json_writer.h"

#include <cstdint>
#include <sstream>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

TEST(JsonWriterTest, EmptyContainers) {
  std::ostringstream out;
  JsonWriter json(out);
  json.BeginArray();
  json.BeginObject();
  json.EndObject();
  json.BeginArray(JsonLayout::kOneLine);
  json.EndArray();
  json.EndArray();
  EXPECT_EQ(out.str(), "[\n  {},\n  []\n]\n");
}

TEST(JsonWriterTest, OneMemberALineIndentedByLevel) {
  std::ostringstream out;
  JsonWriter json(out);
  json.BeginArray();
  json.BeginObject();
  json.Key("name");
  json.String("tcp");
  json.Key("attr");
  json.BeginObject();
  json.Key("size");
  json.Number(256);
  json.Key("address");
  json.Null();
  json.EndObject();
  json.EndObject();
  json.EndArray();
  EXPECT_EQ(out.str(),
            "[\n"
            "  {\n"
            "    \"name\": \"tcp\",\n"
            "    \"attr\": {\n"
            "      \"size\": 256,\n"
            "      \"address\": null\n"
            "    }\n"
            "  }\n"
            "]\n");
}

TEST(JsonWriterTest, OneLineContainersHoldEverythingOnTheirLine) {
  std::ostringstream out;
  JsonWriter json(out);
  json.BeginObject();
  json.Key("caps");
  json.BeginArray(JsonLayout::kOneLine);
  json.String("FI_MSG");
  json.String("FI_RMA");
  json.BeginObject();
  json.Key("a");
  json.Number(1);
  json.Key("b");
  json.Number(2);
  json.EndObject();
  json.EndArray();
  json.Key("mode");
  json.BeginArray(JsonLayout::kOneLine);
  json.EndArray();
  json.EndObject();
  EXPECT_EQ(out.str(),
            "{\n"
            "  \"caps\": [\"FI_MSG\", \"FI_RMA\", {\"a\": 1, \"b\": 2}],\n"
            "  \"mode\": []\n"
            "}\n");
}

TEST(JsonWriterTest, NumbersUpToUint64Max) {
  std::ostringstream out;
  JsonWriter json(out);
  json.BeginArray(JsonLayout::kOneLine);
  json.Number(0);
  json.Number(UINT64_MAX);
  json.EndArray();
  EXPECT_EQ(out.str(), "[0, 18446744073709551615]\n");
}

TEST(JsonWriterTest, StringOrNull) {
  std::ostringstream out;
  JsonWriter json(out);
  json.BeginArray(JsonLayout::kOneLine);
  json.StringOrNull("lo");
  json.StringOrNull(nullptr);
  json.EndArray();
  EXPECT_EQ(out.str(), "[\"lo\", null]\n");
}

TEST(JsonWriterTest, KeysAreQuotedLikeStrings) {
  std::ostringstream out;
  JsonWriter json(out);
  json.BeginObject(JsonLayout::kOneLine);
  json.Key("a\"b");
  json.Number(1);
  json.EndObject();
  EXPECT_EQ(out.str(), "{\"a\\\"b\": 1}\n");
}

TEST(QuoteJsonStringTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(QuoteJsonString(""), "\"\"");
  EXPECT_EQ(QuoteJsonString("fi_sockaddr_in://127.0.0.1:0"),
            "\"fi_sockaddr_in://127.0.0.1:0\"");
  EXPECT_EQ(QuoteJsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(QuoteJsonString("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(QuoteJsonString(std::string_view("\x01\x1f\0", 3)),
            "\"\\u0001\\u001f\\u0000\"");
}

TEST(QuoteJsonStringTest, KeepsUtf8AndDelete) {
  EXPECT_EQ(QuoteJsonString("caf\xc3\xa9\x7f"), "\"caf\xc3\xa9\x7f\"");
}

}  // namespace
}  // namespace fi_info_tool
