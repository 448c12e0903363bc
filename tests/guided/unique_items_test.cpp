// uniqueItems (unique_items.h): for schemas with finite languages, the set of texts a token
// matcher can produce (every prefix explored, masks checked token by token against
// accept_token, no incomplete state without a token) equals the valid instances enumerated
// directly; rollback restores the guard; refusals name what they refuse.
#include "guided/unique_items.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <set>

#include "base/error.h"
#include "guided/json_schema_compiler.h"
#include "guided/token_matcher.h"

namespace afm::guided {
namespace {

constexpr int32_t kUniqueEos = 0;

// Printable ASCII one byte each, and tokens that end elements, open arrays and repeat texts.
std::shared_ptr<const TokenVocabulary> vocabulary() {
  std::vector<std::string> bytes = {"<eos>"};
  for (char c = 0x20; c < 0x7f; ++c) bytes.emplace_back(1, c);
  for (const char* t : {"\",\"", "\"]", "[\"", "\"a\"", "ab\"", "a\",\"a", "\"],", "[1,1", "1,",
                        ",1]", "true,", "[true]", "],[", "[[", "]]", "\", \"", ", ", "[{\"k\":",
                        "},{", "\"k\":1", "[1,2]", "[2,1]", ",[", "[]"}) {
    bytes.emplace_back(t);
  }
  std::vector<bool> special(bytes.size(), false);
  special[kUniqueEos] = true;
  return std::make_shared<TokenVocabulary>(bytes, special, kUniqueEos);
}

bool allowed_bit(const std::vector<uint32_t>& words, int32_t id) {
  return (words[id >> 5] >> (id & 31)) & 1;
}

// Every complete text reachable through masks, exploring each distinct prefix once.
std::set<std::string> produced(const std::shared_ptr<const Grammar>& grammar, size_t max_bytes) {
  const auto vocab = vocabulary();
  std::set<std::string> complete;
  std::map<std::string, bool> visited;
  std::deque<std::pair<std::string, TokenMatcher>> queue;
  queue.emplace_back("", TokenMatcher(grammar, vocab));
  while (!queue.empty()) {
    auto [text, m] = std::move(queue.front());
    queue.pop_front();
    const std::vector<uint32_t> mask = m.next_token_mask();
    if (m.is_complete()) complete.insert(text);
    bool any = false;
    for (int32_t id = 1; id < vocab->size(); ++id) {
      TokenMatcher next = m;
      const bool accepted = next.accept_token(id);
      EXPECT_EQ(allowed_bit(mask, id), accepted)
          << "after " << text << " token " << vocab->token_bytes(id);
      if (!accepted) continue;
      any = true;
      const std::string longer = text + vocab->token_bytes(id);
      if (longer.size() <= max_bytes && !visited[longer]) {
        visited[longer] = true;
        queue.emplace_back(longer, std::move(next));
      }
    }
    EXPECT_TRUE(any || m.is_complete()) << "dead end after " << text;
  }
  return complete;
}

// Arrays of distinct elements from `values`, with min..max elements.
std::set<std::string> arrangements(const std::vector<std::string>& values, size_t min, size_t max,
                                   const std::string& sep = ",") {
  std::set<std::string> out;
  std::vector<size_t> picked;
  std::vector<bool> used(values.size(), false);
  auto extend = [&](auto&& self) -> void {
    if (picked.size() >= min) {
      std::string text = "[";
      for (size_t i = 0; i < picked.size(); ++i) text += (i ? sep : "") + values[picked[i]];
      out.insert(text + "]");
    }
    if (picked.size() == max) return;
    for (size_t v = 0; v < values.size(); ++v) {
      if (used[v]) continue;
      used[v] = true;
      picked.push_back(v);
      self(self);
      picked.pop_back();
      used[v] = false;
    }
  };
  extend(extend);
  return out;
}

std::shared_ptr<const Grammar> compile_unique(const char* schema,
                                              Whitespace ws = Whitespace::kCompact) {
  JsonSchemaOptions options;
  options.whitespace = ws;
  return compile_json_schema_text(schema, options);
}

TEST(UniqueItems, EnumTextsThatArePrefixesOfEachOther) {
  auto g = compile_unique(
      R"({"type":"array","uniqueItems":true,"maxItems":3,"items":{"enum":["a","b","ab"]}})");
  EXPECT_EQ(produced(g, 40), arrangements({"\"a\"", "\"b\"", "\"ab\""}, 0, 3));
}

TEST(UniqueItems, SpacedSeparators) {
  auto g = compile_unique(R"({"type":"array","uniqueItems":true,"items":{"enum":["a","ab"]}})",
                          Whitespace::kSpaced);
  EXPECT_EQ(produced(g, 40), arrangements({"\"a\"", "\"ab\""}, 0, 2, ", "));
}

TEST(UniqueItems, IntegersRunOutWithoutDeadEnds) {
  auto g = compile_unique(
      R"({"type":"array","uniqueItems":true,"minItems":1,"items":{"type":"integer","minimum":0,"maximum":2}})");
  EXPECT_EQ(produced(g, 40), arrangements({"0", "1", "2"}, 1, 3));
}

TEST(UniqueItems, MinItemsOverAnEnum) {
  auto g = compile_unique(
      R"({"type":"array","uniqueItems":true,"minItems":2,"maxItems":2,"items":{"enum":["x","y","z"]}})");
  EXPECT_EQ(produced(g, 40), arrangements({"\"x\"", "\"y\"", "\"z\""}, 2, 2));
}

TEST(UniqueItems, ArraysAndObjectsAsElements) {
  auto arrays = compile_unique(
      R"({"type":"array","uniqueItems":true,"items":{"type":"array","maxItems":2,"items":{"const":true}}})");
  EXPECT_EQ(produced(arrays, 60), arrangements({"[]", "[true]", "[true,true]"}, 0, 3));
  auto objects = compile_unique(R"({"type":"array","uniqueItems":true,"items":{"type":"object",
      "properties":{"k":{"enum":[1,2]}},"additionalProperties":false}})");
  EXPECT_EQ(produced(objects, 60), arrangements({"{}", "{\"k\":1}", "{\"k\":2}"}, 0, 3));
}

TEST(UniqueItems, InsideOtherValues) {
  // Two unique arrays one after the other, and a unique array as an object member.
  auto g = compile_unique(R"({"type":"array","prefixItems":[
      {"type":"array","uniqueItems":true,"items":{"enum":[1,2]}},
      {"type":"object","properties":{"k":{"type":"array","uniqueItems":true,"items":{"const":1}}},
       "required":["k"],"additionalProperties":false}],"minItems":2,"maxItems":2})");
  std::set<std::string> expected;
  for (const std::string& a : arrangements({"1", "2"}, 0, 2)) {
    for (const std::string& b : arrangements({"1"}, 0, 1)) expected.insert("[" + a + ",{\"k\":" + b + "}]");
  }
  EXPECT_EQ(produced(g, 60), expected);
}

TEST(UniqueItems, UniqueArraysOfUniqueArrays) {
  auto g = compile_unique(R"({"type":"array","uniqueItems":true,"maxItems":2,"items":{
      "type":"array","uniqueItems":true,"items":{"enum":[1,2]}}})");
  const auto inner = arrangements({"1", "2"}, 0, 2);
  EXPECT_EQ(produced(g, 60), arrangements({inner.begin(), inner.end()}, 0, 2));
  // Objects with a unique array inside, in a unique array: repeats of whole objects only.
  auto objects = compile_unique(R"({"type":"array","uniqueItems":true,"items":{"type":"object",
      "properties":{"k":{"type":"array","uniqueItems":true,"maxItems":1,"items":{"enum":[1,2]}}},
      "required":["k"],"additionalProperties":false}})");
  EXPECT_EQ(produced(objects, 60),
            arrangements({"{\"k\":[]}", "{\"k\":[1]}", "{\"k\":[2]}"}, 0, 3));
}

TEST(UniqueItems, NumbersHaveOneTextEach) {
  // Bounded numbers are multiples of 10^-9 in fixed notation without trailing zeros, so 1 and
  // 1.0 (one value) cannot both be written; unbounded ones are canonical likewise.
  auto g = compile_unique(
      R"({"type":"array","uniqueItems":true,"items":{"type":"number","minimum":0,"maximum":2}})");
  EXPECT_TRUE(ByteMatcher::matches(g, "[1,1.5,0.25]"));
  EXPECT_FALSE(ByteMatcher::matches(g, "[1,1.0]"));
  EXPECT_FALSE(ByteMatcher::matches(g, "[1.50]"));
  EXPECT_FALSE(ByteMatcher::matches(g, "[1.5,1.5]"));
  auto free = compile_unique(R"({"type":"array","uniqueItems":true,"items":{"type":"number"}})");
  EXPECT_TRUE(ByteMatcher::matches(free, "[0,-0.5,12,3.25]"));
  for (const char* repeat : {"[1e0]", "[-0]", "[2.0]", "[1,1]", "[0.5,0.50]"}) {
    EXPECT_FALSE(ByteMatcher::matches(free, repeat)) << repeat;
  }
  // The same definition outside unique items keeps every JSON number text.
  auto both = compile_unique(R"({"$defs":{"n":{"type":"number"}},"type":"array","prefixItems":[
      {"$ref":"#/$defs/n"},{"type":"array","uniqueItems":true,"items":{"$ref":"#/$defs/n"}}]})");
  EXPECT_TRUE(ByteMatcher::matches(both, "[1e0,[1,2.5]]"));
  EXPECT_FALSE(ByteMatcher::matches(both, "[1e0,[1e0]]"));
  // A finite range runs out without dead ends (0, 0.5 and 1 at 10^-1 steps are not finite, so
  // the exhaustive check uses integers-as-numbers through multipleOf).
  auto halves = compile_unique(
      R"({"type":"array","uniqueItems":true,"items":{"type":"number","multipleOf":0.5,"minimum":0,"maximum":1}})");
  EXPECT_EQ(produced(halves, 40), arrangements({"0", "0.5", "1"}, 0, 3));
}

TEST(UniqueItems, MatchesRejectsRepeats) {
  auto g = compile_unique(R"({"type":"array","uniqueItems":true,"items":{"type":"string"}})");
  EXPECT_TRUE(ByteMatcher::matches(g, R"(["a","ab","b"])"));
  EXPECT_FALSE(ByteMatcher::matches(g, R"(["a","ab","a"])"));
  EXPECT_FALSE(ByteMatcher::matches(g, R"(["",""])"));
  EXPECT_TRUE(ByteMatcher::matches(g, R"([])"));
}

TEST(UniqueItems, RollbackRestoresTheGuard) {
  auto g = compile_unique(R"({"type":"array","uniqueItems":true,"items":{"enum":["a","b","ab"]}})");
  const auto vocab = vocabulary();
  auto id = [&](const std::string& t) {
    for (int32_t i = 1; i < vocab->size(); ++i) {
      if (vocab->token_bytes(i) == t) return i;
    }
    ADD_FAILURE() << t;
    return 0;
  };
  TokenMatcher m(g, vocab);
  for (const char* t : {"[\"", "ab\"", ",", "\"a\"", ",", "\""}) ASSERT_TRUE(m.accept_token(id(t))) << t;
  const auto before = m.next_token_mask();
  EXPECT_FALSE(allowed_bit(before, id("a")));  // "a and "ab are both taken: only "b" is left
  EXPECT_TRUE(allowed_bit(before, id("b")));
  m.rollback(4);  // back to ["ab"
  TokenMatcher fresh(g, vocab);
  for (const char* t : {"[\"", "ab\""}) ASSERT_TRUE(fresh.accept_token(id(t)));
  EXPECT_EQ(m.next_token_mask(), fresh.next_token_mask());
  for (const char* t : {",", "\"a\"", ",", "\""}) ASSERT_TRUE(m.accept_token(id(t)));
  EXPECT_EQ(m.next_token_mask(), before);
  EXPECT_FALSE(m.accept_token(id("a")));
}

TEST(UniqueItems, RefusalsNameTheReason) {
  auto refusal = [](const char* items) {
    try {
      compile_unique(
          (std::string(R"({"type":"array","uniqueItems":true,"items":)") + items + "}").c_str());
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  EXPECT_NE(refusal(R"({"type":"object"})").find("undeclared keys"), std::string::npos);
  EXPECT_NE(refusal("{}").find("any value"), std::string::npos);
  EXPECT_NE(refusal(R"({"enum":[0.5]})").find("0.5"), std::string::npos);
  EXPECT_NE(refusal(R"({"enum":[{"a":1,"b":2}]})").find("multi-key"), std::string::npos);
  EXPECT_NE(refusal(R"({"type":"array"})").find("arrays of any values"), std::string::npos);
  EXPECT_NE(refusal(R"({"type":"object","additionalProperties":false,"patternProperties":{"^x":{}}})")
                .find("undeclared keys"),
            std::string::npos);
  EXPECT_EQ(refusal(R"({"type":"integer"})"), "compiled");
  // Branches inherit what they are merged with: the parent's type, closed objects, items.
  EXPECT_EQ(refusal(R"({"type":"string","anyOf":[{"maxLength":3},{"x-annotation":1}]})"), "compiled");
  EXPECT_EQ(refusal(R"({"type":"object","additionalProperties":false,
      "properties":{"a":{"type":"string"},"b":{"type":"null"}},"oneOf":[{"required":["a"]},{"required":["b"]}]})"),
            "compiled");
  EXPECT_EQ(refusal(R"({"additionalProperties":false,"items":{"type":"integer"}})"), "compiled");
  EXPECT_EQ(refusal(R"({"enum":[1.0, {"a":[1]}]})"), "compiled");
  try {
    compile_unique(
        R"({"type":"array","uniqueItems":true,"minItems":3,"items":{"enum":["a","b"]}})");
    ADD_FAILURE() << "minItems 3 over two values compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("minItems 3"), std::string::npos) << e.what();
  }
  auto min_items = [](const char* items) {
    try {
      compile_unique(
          (std::string(R"({"type":"array","uniqueItems":true,"minItems":2,"items":)") + items + "}")
              .c_str());
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  EXPECT_TRUE(min_items(R"({"type":"string","minLength":1,"maxLength":255})"));
  EXPECT_FALSE(min_items(R"({"type":"string","maxLength":0})"));
  EXPECT_TRUE(min_items(R"({"type":"integer","minimum":1,"maximum":2})"));
  EXPECT_FALSE(min_items(R"({"type":"integer","minimum":1,"maximum":1.5})"));
  EXPECT_FALSE(min_items(R"({"type":"string","enum":["a",1]})"));
  EXPECT_TRUE(min_items(R"({"type":"number","enum":[1,2]})"));
  // allOf branches merge uniqueItems (true wins).
  auto merged =
      compile_unique(R"({"allOf":[{"type":"array","uniqueItems":false,"items":{"type":"string"}},
                                      {"uniqueItems":true}]})");
  EXPECT_FALSE(ByteMatcher::matches(merged, R"(["a","a"])"));
}

}  // namespace
}  // namespace afm::guided
