// parse_ordered_json against nlohmann's own parser (the oracle): same values, same member
// order, same duplicate-key rule; depth limits and syntax errors as statuses.
#include <gtest/gtest.h>

#include <string>

#include "base/json_parse.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

void expect_same_as_nlohmann(const std::string& text) {
  const ParsedJson mine = parse_ordered_json(text);
  ASSERT_TRUE(mine.ok()) << text << ": " << mine.message;
  const Json theirs = Json::parse(text);
  EXPECT_EQ(mine.value, theirs) << text;
  EXPECT_EQ(mine.value.dump(), theirs.dump()) << text;  // member order too
}

TEST(JsonParse, SameValuesAsNlohmann) {
  for (const char* text :
       {"null", "true", "0", "-12", "18446744073709551615", "-9223372036854775808", "1.5e300",
        "-0.0", R"("a\u00e9\ud83d\ude00\n")", "[]", "{}", R"({"b":1,"a":[1,{"c":null}],"z":{}})",
        R"([[[]],[{}],{"x":[1,2,3]}])", R"( {"k" : "v" , "n":[ true ,false ] } )",
        R"({"a":1,"b":2,"a":3})", R"({"a":{"x":1},"b":0,"a":[2]})"}) {
    expect_same_as_nlohmann(text);
  }
}

TEST(JsonParse, ManyKeysKeepTheirOrder) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(199999 - i) + "\":" + std::to_string(i);
  text += ",\"k5\":\"again\"}";
  const ParsedJson parsed = parse_ordered_json(text);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed.value.size(), 200000u);
  EXPECT_EQ(parsed.value.begin().key(), "k199999");
  EXPECT_EQ(parsed.value["k5"], "again");  // a repeated key takes the last value
  auto it = parsed.value.begin();
  std::advance(it, 199994);
  EXPECT_EQ(it.key(), "k5");                // ... in its first position
}

TEST(JsonParse, DepthLimitStopsAndKeepsWhatWasBuilt) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const ParsedJson parsed = parse_ordered_json(deep, 10);
  EXPECT_EQ(parsed.status, JsonParseStatus::kTooDeep);
  EXPECT_NE(parsed.message.find("deeper than 10"), std::string::npos);
  Json at = parsed.value;
  int depth = 0;
  while (at.is_array() && !at.empty()) {
    at = Json(at[0]);
    ++depth;
  }
  EXPECT_EQ(depth, 9);  // ten nested arrays were built, the eleventh refused
  EXPECT_TRUE(parse_ordered_json("[[[[[[[[[[1]]]]]]]]]]", 10).ok());
  EXPECT_FALSE(parse_ordered_json("[[[[[[[[[[[1]]]]]]]]]]]", 10).ok());
}

TEST(JsonParse, SyntaxErrorsAreStatuses) {
  for (const char* text : {"", "{", "[1,]", "{\"a\" 1}", "nul", "1 2", "\"\\x\"", "{\"a\":1}x"}) {
    const ParsedJson parsed = parse_ordered_json(text);
    EXPECT_EQ(parsed.status, JsonParseStatus::kSyntax) << text;
    EXPECT_FALSE(parsed.message.empty()) << text;
    EXPECT_TRUE(parsed.value.is_null()) << text;
  }
}

}  // namespace
}  // namespace afm
