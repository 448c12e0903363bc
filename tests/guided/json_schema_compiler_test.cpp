// JSON Schema -> grammar: each keyword, recursion, output form, fail-closed errors, cache.
#include <gtest/gtest.h>

#include <thread>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"

namespace afm::guided {
namespace {

std::shared_ptr<const Grammar> compile(std::string_view schema, JsonSchemaOptions opts = {}) {
  return compile_json_schema_text(schema, opts);
}
bool ok(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  return ByteMatcher::matches(g, text);
}

void expect_error(std::string_view schema, ErrorCode code, std::string_view keyword,
                  std::string_view pointer) {
  try {
    compile(schema);
    ADD_FAILURE() << "no error for " << schema;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), code) << msg;
    EXPECT_NE(msg.find("'" + std::string(keyword) + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(" at " + std::string(pointer)), std::string::npos) << msg;
  }
}

TEST(JsonSchemaCompiler, ObjectPropertiesInDeclarationOrder) {
  auto g = compile(R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},
                      "required":["a"],"additionalProperties":false})");
  EXPECT_TRUE(ok(g, R"({"b":1,"a":"x"})"));
  EXPECT_TRUE(ok(g, R"({"a":"x"})"));
  EXPECT_FALSE(ok(g, R"({"a":"x","b":1})"));  // declaration order only
  EXPECT_FALSE(ok(g, R"({"b":1})"));          // required missing
  EXPECT_FALSE(ok(g, R"({"a":"x","c":1})"));
  EXPECT_FALSE(ok(g, R"({})"));
}

TEST(JsonSchemaCompiler, AdditionalPropertiesNeverRepeatDeclaredKeys) {
  auto g = compile(R"({"properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"boolean"}})");
  EXPECT_TRUE(ok(g, R"({"a":1,"b":true,"ab":false})"));
  EXPECT_TRUE(ok(g, R"({"":true})"));
  EXPECT_FALSE(ok(g, R"({"a":1,"a":true})"));
  EXPECT_FALSE(ok(g, R"({"b":1})"));
  auto required_only = compile(R"({"required":["x"],"additionalProperties":{"type":"null"}})");
  EXPECT_TRUE(ok(required_only, R"({"x":null,"y":null})"));
  EXPECT_FALSE(ok(required_only, R"({"y":null})"));
}

TEST(JsonSchemaCompiler, Arrays) {
  auto g = compile(R"({"prefixItems":[{"type":"string"},{"type":"null"}],"items":{"type":"integer"},
                      "minItems":1,"maxItems":3})");
  EXPECT_FALSE(ok(g, "[]"));
  EXPECT_TRUE(ok(g, R"(["a"])"));
  EXPECT_TRUE(ok(g, R"(["a",null,7])"));
  EXPECT_FALSE(ok(g, R"(["a",null,7,8])"));
  EXPECT_FALSE(ok(g, R"([1])"));
  auto closed = compile(R"({"prefixItems":[{"type":"integer"}],"items":false})");
  EXPECT_TRUE(ok(closed, "[1]"));
  EXPECT_TRUE(ok(closed, "[]"));
  EXPECT_FALSE(ok(closed, "[1,2]"));
  auto counted = compile(R"({"type":"array","items":{"const":0},"minItems":2,"maxItems":2})");
  EXPECT_TRUE(ok(counted, "[0,0]"));
  EXPECT_FALSE(ok(counted, "[0]"));
}

// Drafts 4-7: array-form items is the tuple, additionalItems the elements after it.
TEST(JsonSchemaCompiler, LegacyTupleItems) {
  auto closed = compile(R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"array",
                            "items":[{"type":"integer"},{"type":"string"}],"additionalItems":false})");
  EXPECT_TRUE(ok(closed, R"([1,"a"])"));
  EXPECT_TRUE(ok(closed, "[1]"));
  EXPECT_TRUE(ok(closed, "[]"));
  EXPECT_FALSE(ok(closed, R"([1,"a",2])"));
  EXPECT_FALSE(ok(closed, R"(["a"])"));
  auto rest = compile(R"({"items":[{"type":"integer"}],"additionalItems":{"type":"boolean"},
                          "minItems":2})");
  EXPECT_TRUE(ok(rest, "[1,true,false]"));
  EXPECT_FALSE(ok(rest, "[1,2]"));
  EXPECT_FALSE(ok(rest, "[1]"));
  auto open = compile(R"({"type":"array","items":[{"type":"null"}]})");
  EXPECT_TRUE(ok(open, R"([null,{"x":[1]},"s"])"));
  // Without a tuple, additionalItems means nothing (in every draft).
  auto plain = compile(R"({"type":"array","items":{"type":"integer"},"additionalItems":false})");
  EXPECT_TRUE(ok(plain, "[1,2,3]"));
  expect_error(R"({"prefixItems":[{"type":"null"}],"items":[{"type":"null"}]})",
               ErrorCode::kUnsupported, "items", "#");
}

TEST(JsonSchemaCompiler, IntegerRangesAreExact) {
  auto g = compile(R"({"type":"integer","minimum":-12,"exclusiveMaximum":105})");
  for (int v = -40; v <= 140; ++v) {
    EXPECT_EQ(ok(g, std::to_string(v)), v >= -12 && v < 105) << v;
  }
  EXPECT_FALSE(ok(g, "007"));
  EXPECT_FALSE(ok(g, "-0"));
  auto frac = compile(R"({"type":"integer","minimum":1.5,"maximum":3.5})");
  EXPECT_FALSE(ok(frac, "1"));
  EXPECT_TRUE(ok(frac, "2"));
  EXPECT_TRUE(ok(frac, "3"));
  EXPECT_FALSE(ok(frac, "4"));
}

TEST(JsonSchemaCompiler, NumberBounds) {
  auto g = compile(R"({"type":"number","exclusiveMinimum":-1.25,"maximum":10})");
  EXPECT_TRUE(ok(g, "-1.2"));
  EXPECT_TRUE(ok(g, "-1.249"));
  EXPECT_FALSE(ok(g, "-1.25"));
  EXPECT_FALSE(ok(g, "-1.2500"));
  EXPECT_TRUE(ok(g, "0"));
  EXPECT_TRUE(ok(g, "9.999"));
  EXPECT_TRUE(ok(g, "10"));
  EXPECT_TRUE(ok(g, "10.000"));
  EXPECT_FALSE(ok(g, "10.001"));
  EXPECT_FALSE(ok(g, "-0.0"));
  auto free = compile(R"({"type":"number"})");
  EXPECT_TRUE(ok(free, "-1.5e+10"));
  EXPECT_FALSE(ok(free, "01"));
}

TEST(JsonSchemaCompiler, MultipleOf) {
  auto g = compile(R"({"type":"integer","multipleOf":7})");
  for (int v = -30; v <= 30; ++v) EXPECT_EQ(ok(g, std::to_string(v)), v % 7 == 0) << v;
  auto half = compile(R"({"multipleOf":0.5})");  // decimal divisors: number_multiples_test.cpp
  EXPECT_TRUE(ok(half, "-2.5"));
  EXPECT_FALSE(ok(half, "2.25"));
  expect_error(R"({"multipleOf":0.00012345})", ErrorCode::kUnsupported, "multipleOf", "#");
}

TEST(JsonSchemaCompiler, StringsLengthPatternFormat) {
  auto g = compile(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_FALSE(ok(g, R"("a")"));
  EXPECT_TRUE(ok(g, "\"\xc3\xa9\\n\""));  // two code points: é and an escaped newline
  EXPECT_FALSE(ok(g, R"("abcd")"));
  auto p = compile(R"({"type":"string","pattern":"^[a-z]+\\d$"})");
  EXPECT_TRUE(ok(p, R"("abc1")"));
  EXPECT_FALSE(ok(p, R"("abc")"));
  auto unanchored = compile(R"({"type":"string","pattern":"x"})");
  EXPECT_TRUE(ok(unanchored, R"("axb")"));
  auto d = compile(R"({"type":"string","format":"date"})");
  EXPECT_TRUE(ok(d, R"("2024-02-29")"));
  EXPECT_FALSE(ok(d, R"("2023-02-29")"));
  EXPECT_FALSE(ok(d, R"("2023-04-31")"));
  auto u = compile(R"({"format":"uuid","type":"string"})");
  EXPECT_TRUE(ok(u, R"("123e4567-e89b-12d3-a456-426614174000")"));
  // A pattern with length bounds it does not imply: the intersection (regular layer).
  auto bounded = compile(R"({"type":"string","pattern":"a","maxLength":3})");
  EXPECT_TRUE(ok(bounded, R"("xa")"));
  EXPECT_TRUE(ok(bounded, R"("\na")"));  // one character, two bytes escaped
  EXPECT_FALSE(ok(bounded, R"("xxxa")"));
  EXPECT_FALSE(ok(bounded, R"("xxx")"));
  auto both = compile(R"({"type":"string","format":"ipv4","pattern":"^10\\.","minLength":9})");
  EXPECT_TRUE(ok(both, R"("10.0.0.10")"));
  EXPECT_FALSE(ok(both, R"("10.0.0.1")"));   // too short
  EXPECT_FALSE(ok(both, R"("11.0.0.10")"));  // pattern
  EXPECT_FALSE(ok(both, R"("10.0.0.300")"));  // format
  EXPECT_TRUE(ok(compile(R"({"type":"string","pattern":"^[a-z]+$","minLength":5,"maxLength":4})"),
                 R"("")") == false);
  // email is bounded (507 characters at most), so a maxLength above that is implied.
  auto mail = compile(R"({"type":"string","format":"email","maxLength":1024})");
  EXPECT_TRUE(ok(mail, R"("first.last@example.co.uk")"));
  EXPECT_FALSE(ok(mail, "\"" + std::string(65, 'a') + "@example.com\""));  // local atom > 64
  expect_error(R"({"type":"string","pattern":"(a|b)*a(a|b){40}","format":"date"})",
               ErrorCode::kUnsupported, "pattern", "#");  // the automaton's state budget
  // With one regex, its repetitions are bounded to fit the length instead
  // (compile_regex_within): every string kept is valid; (a|b)* keeps 39 of its 41 counts.
  auto elastic = compile(R"({"type":"string","pattern":"^(a|b)*a(a|b){40}$","maxLength":80})");
  EXPECT_TRUE(ok(elastic, "\"a" + std::string(40, 'b') + "\""));
  EXPECT_TRUE(ok(elastic, "\"" + std::string(39, 'b') + "a" + std::string(40, 'b') + "\""));
  EXPECT_FALSE(ok(elastic, "\"" + std::string(40, 'b') + "a" + std::string(40, 'b') + "\""));
  auto searched = compile(R"({"type":"string","pattern":"a(a|b){40}","maxLength":80})");
  EXPECT_TRUE(ok(searched, "\"xy" + std::string(5, 'a') + std::string(40, 'b') + "z\""));
  EXPECT_FALSE(ok(searched, "\"xy" + std::string(39, 'b') + "\""));
  // A counted repetition costs the same for any count: lengths past 100000 compile.
  auto huge = compile(R"({"type":"string","minLength":1,"maxLength":2147483647})");
  EXPECT_TRUE(ok(huge, "\"" + std::string(200000, 'x') + "\""));
  EXPECT_FALSE(ok(huge, R"("")"));
  auto long_arn = compile(R"({"type":"string","minLength":20,"maxLength":2048,)"
                          R"("pattern":"^arn:aws[a-z0-9-]*:acm:[a-z0-9-]+:\\d{12}:cert/[^\\s]+$"})");
  EXPECT_TRUE(ok(long_arn, R"("arn:aws:acm:us-east-1:123456789012:cert/abc")"));
  EXPECT_FALSE(ok(long_arn, R"("arn:aws:acm:us-east-1:12345678901:cert/abc")"));
  EXPECT_FALSE(ok(long_arn, "\"arn:aws:acm:x:123456789012:cert/" + std::string(2048, 'x') + "\""));
  EXPECT_NO_THROW(compile(R"({"type":"string","pattern":"^a{1,2}$","maxLength":3})"));
  expect_error(R"({"properties":{"s":{"pattern":"(a)\\1"}}})", ErrorCode::kUnsupported, "pattern",
               "#/properties/s");
  auto h = compile(R"({"format":"hostname","type":"string"})");
  EXPECT_TRUE(ok(h, R"("example")"));
  EXPECT_TRUE(ok(h, R"("www.Example-1.co.uk")"));
  EXPECT_FALSE(ok(h, R"("-bad.example")"));
  EXPECT_FALSE(ok(h, R"("bad-.example")"));
  EXPECT_FALSE(ok(h, R"("a..b")"));
  EXPECT_FALSE(ok(h, R"("a.b.c.d.e")"));  // valid, but beyond the 4-label subset
  EXPECT_FALSE(ok(h, "\"" + std::string(62, 'a') + "\""));  // labels stop at 61 here
  // A name no specification defines is an annotation by default (draft 2020-12), refused on
  // request; JSON Schema's own formats that afm does not build are refused either way.
  auto topic = compile(R"({"type":"string","format":"topic","maxLength":3})");
  EXPECT_TRUE(ok(topic, R"("a/b")"));
  EXPECT_FALSE(ok(topic, R"("a/bc")"));  // the other keywords still apply
  EXPECT_FALSE(ok(compile(R"({"not":{"type":"string","format":"semver"}})"), R"("1.0")"));
  JsonSchemaOptions strict;
  strict.refuse_unknown_formats = true;
  EXPECT_THROW(compile(R"({"format":"topic"})", strict), Error);
  EXPECT_NO_THROW(compile(R"({"format":"ipv4"})", strict));
  for (const char* name : {"regex", "uri-template", "idn-email", "idn-hostname"}) {
    expect_error(std::string(R"({"properties":{"s":{"format":")") + name + R"("}}})",
                 ErrorCode::kUnsupported, "format", "#/properties/s");
  }
  auto v6 = compile(R"({"format":"ipv6","type":"string"})");
  EXPECT_TRUE(ok(v6, R"("::ffff:10.0.0.1")"));
  EXPECT_TRUE(ok(v6, R"("2001:db8::1")"));
  EXPECT_FALSE(ok(v6, R"("2001:db8::1::2")"));
  EXPECT_FALSE(ok(v6, R"("12345::")"));
  auto ref = compile(R"({"format":"uri-reference","type":"string"})");
  EXPECT_TRUE(ok(ref, R"("../a/b?q#f")"));
  EXPECT_FALSE(ok(ref, R"("a:b c")"));
  auto duration = compile(R"({"format":"duration","type":"string"})");
  EXPECT_TRUE(ok(duration, R"("P1Y2M3DT4H5M6S")"));
  EXPECT_TRUE(ok(duration, R"("P2W")"));
  EXPECT_FALSE(ok(duration, R"("P1YT")"));
  EXPECT_FALSE(ok(duration, R"("PT1D")"));
  auto pointer = compile(R"({"format":"json-pointer","type":"string"})");
  EXPECT_TRUE(ok(pointer, R"("/a~1b/0")"));
  EXPECT_FALSE(ok(pointer, R"("/a~2")"));
}

// A pattern whose rules would be ambiguous, with a maxLength whose exact intersection is past
// the automaton budget: the capped automaton (a sub-language of the pattern within the
// lengths) keeps the Earley sets bounded, where the bounded repetitions grew them with the text.
TEST(JsonSchemaCompiler, AmbiguousPatternWithALargeMaxLengthStaysLinear) {
  auto g = compile(R"({"type":"string","pattern":"(.*a){20}","maxLength":30000})");
  const auto set_after = [&](size_t n) {
    ByteMatcher m(g);
    EXPECT_TRUE(m.accept_bytes("\"" + std::string(n, 'a')));
    return m.current_set_size();
  };
  EXPECT_EQ(set_after(800), set_after(200));
  EXPECT_TRUE(ok(g, "\"" + std::string(20, 'a') + "\""));
  EXPECT_TRUE(ok(g, "\"" + std::string(500, 'a') + "\""));
  EXPECT_FALSE(ok(g, "\"" + std::string(19, 'a') + "\""));
  // Never past the bound: the language is a subset of the schema's.
  auto small = compile(R"({"type":"string","pattern":"ab","minLength":3,"maxLength":30000})");
  EXPECT_TRUE(ok(small, R"("xab")"));
  EXPECT_FALSE(ok(small, R"("ab")"));
  EXPECT_FALSE(ok(small, R"("xa")"));
}

TEST(JsonSchemaCompiler, EnumConstAndTypeFilter) {
  auto g = compile(R"({"type":"string","enum":["a",1,"b",{"k":[1.0]}]})");
  EXPECT_TRUE(ok(g, R"("a")"));
  EXPECT_FALSE(ok(g, "1"));
  auto any = compile(R"({"enum":[{"k":[1.0]},null]})");
  EXPECT_TRUE(ok(any, R"({"k":[1]})"));
  EXPECT_TRUE(ok(any, "null"));
  auto c = compile(R"({"const":"x\"y"})");
  EXPECT_TRUE(ok(c, R"("x\"y")"));
}

TEST(JsonSchemaCompiler, Combinators) {
  auto any_of = compile(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})");
  EXPECT_TRUE(ok(any_of, "12"));
  EXPECT_TRUE(ok(any_of, R"("a")"));
  EXPECT_FALSE(ok(any_of, R"("ab")"));
  auto one_of = compile(R"({"oneOf":[{"type":"integer"},{"type":"string"}]})");
  EXPECT_TRUE(ok(one_of, "1"));
  expect_error(R"({"oneOf":[{"type":"integer"},{"minimum":2}]})", ErrorCode::kUnsupported, "oneOf",
               "#");
  auto all_of = compile(R"({"allOf":[{"properties":{"a":{"type":"integer"}}},{"required":["a"]},
                                     {"properties":{"a":{"minimum":3}}}]})");
  EXPECT_TRUE(ok(all_of, R"({"a":3})"));
  EXPECT_FALSE(ok(all_of, R"({"a":2})"));
  EXPECT_FALSE(ok(all_of, R"({})"));
  expect_error(R"({"allOf":[{"properties":{"a":true}},{"additionalProperties":false}]})",
               ErrorCode::kUnsupported, "allOf", "#");
}

// allOf branches with combinators of their own: the conjunction, exactly.
TEST(JsonSchemaCompiler, AllOfBranchesWithTheirOwnCombinators) {
  auto any_of = compile(R"({"allOf":[{"anyOf":[{"type":"string"},{"type":"integer"}]},
                                     {"anyOf":[{"type":"integer"},{"type":"boolean"}]}]})");
  EXPECT_TRUE(ok(any_of, "7"));
  EXPECT_FALSE(ok(any_of, R"("a")"));
  EXPECT_FALSE(ok(any_of, "true"));
  auto one_of = compile(R"({"allOf":[{"oneOf":[{"const":1},{"const":2}]},
                                     {"oneOf":[{"const":2},{"const":3}]}]})");
  EXPECT_TRUE(ok(one_of, "2"));
  EXPECT_FALSE(ok(one_of, "1"));
  EXPECT_FALSE(ok(one_of, "3"));
  auto conditions = compile(R"({"enum":[1,2,3,"x"],"allOf":[
      {"if":{"const":1},"then":false},{"if":{"const":2},"then":false,"else":{"type":"integer"}}]})");
  EXPECT_TRUE(ok(conditions, "3"));
  EXPECT_FALSE(ok(conditions, "1"));
  EXPECT_FALSE(ok(conditions, "2"));
  EXPECT_FALSE(ok(conditions, R"("x")"));  // the second else
  auto nots = compile(R"({"enum":[1,2,3],"allOf":[{"not":{"const":1}},{"not":{"const":2}}]})");
  EXPECT_TRUE(ok(nots, "3"));
  EXPECT_FALSE(ok(nots, "1"));
  EXPECT_FALSE(ok(nots, "2"));
  // Keywords no specification defines are annotations: two values do not conflict.
  auto notes = compile(R"({"allOf":[{"markdownDescription":"a"},
                                     {"markdownDescription":"b","type":"string"}]})");
  EXPECT_TRUE(ok(notes, R"("s")"));
  EXPECT_FALSE(ok(notes, "1"));
  // not over anyOf: neither branch.
  auto neither = compile(R"({"not":{"anyOf":[{"type":"string"},{"type":"boolean"}]}})");
  EXPECT_TRUE(ok(neither, "1.5"));
  EXPECT_TRUE(ok(neither, "null"));
  EXPECT_FALSE(ok(neither, R"("a")"));
  EXPECT_FALSE(ok(neither, "true"));
  auto outside = compile(R"({"type":"integer","not":{"anyOf":[{"minimum":5},{"maximum":1}]}})");
  EXPECT_TRUE(ok(outside, "3"));
  EXPECT_FALSE(ok(outside, "5"));
  EXPECT_FALSE(ok(outside, "1"));
}

// oneOf with overlapping branches: each branch narrowed until it excludes the others.
TEST(JsonSchemaCompiler, OneOfNarrowsOverlappingBranches) {
  // The common real-world shape: alternatives by required properties.
  auto g = compile(R"({"type":"object","properties":{"length":{"type":"number"},
                       "width":{"type":"number"},"radius":{"type":"number"}},
                       "oneOf":[{"required":["length","width"]},{"required":["radius"]}]})");
  EXPECT_TRUE(ok(g, R"({"length":1,"width":2})"));
  EXPECT_TRUE(ok(g, R"({"radius":3})"));
  EXPECT_FALSE(ok(g, R"({"length":1,"width":2,"radius":3})"));  // matches both
  EXPECT_FALSE(ok(g, R"({"length":1})"));                        // matches neither
  EXPECT_TRUE(ok(g, R"({"width":1,"radius":3,"extra":1})"));
  // Valid (branch 0 lacks width), but narrowing branch 1 forbade length: a subset, never more.
  EXPECT_FALSE(ok(g, R"({"length":1,"radius":3})"));
  // Without a type, non-objects satisfy both `required`s vacuously: they must be excluded.
  auto untyped = compile(R"({"oneOf":[{"required":["a"]},{"required":["b"]}]})");
  EXPECT_TRUE(ok(untyped, R"({"a":1})"));
  EXPECT_FALSE(ok(untyped, "1"));
  EXPECT_FALSE(ok(untyped, R"({"a":1,"b":2})"));
  // A required discriminator with different values: nothing to narrow.
  auto tagged = compile(R"({"oneOf":[
      {"type":"object","properties":{"k":{"const":"a"},"x":{"type":"integer"}},"required":["k"]},
      {"type":"object","properties":{"k":{"const":"b"},"x":{"type":"string"}},"required":["k"]}]})");
  EXPECT_TRUE(ok(tagged, R"({"k":"a","x":1})"));
  EXPECT_TRUE(ok(tagged, R"({"k":"b","x":"s"})"));
  EXPECT_FALSE(ok(tagged, R"({"k":"b","x":1})"));
  // Types only one branch has stay with it, the others go.
  auto mixed = compile(R"({"oneOf":[{"type":["string","object"],"required":["b"]},
                                    {"type":"object","required":["a"]},{"type":"null"}]})");
  EXPECT_TRUE(ok(mixed, R"("s")"));  // `required` ignores strings, and branch 1 has none
  EXPECT_TRUE(ok(mixed, "null"));
  EXPECT_TRUE(ok(mixed, R"({"b":1})"));
  EXPECT_TRUE(ok(mixed, R"({"a":1})"));
  EXPECT_FALSE(ok(mixed, R"({"a":1,"b":2})"));  // both branches would match
  EXPECT_FALSE(ok(mixed, R"({})"));             // neither would
  // No rule separates two branches that demand the same: exact negations do. Branch 1 is
  // within branch 0, so only branch 0's other instances remain (non-objects match both).
  auto nested = compile(R"({"oneOf":[{"required":["a"]},{"required":["a"],"properties":{"a":{"minimum":1}}}]})");
  EXPECT_TRUE(ok(nested, R"({"a":0})"));
  EXPECT_FALSE(ok(nested, R"({"a":"s"})"));  // both: minimum holds for strings
  EXPECT_FALSE(ok(nested, R"({"a":1})"));  // both
  EXPECT_FALSE(ok(nested, "3"));           // both (required holds for non-objects)
  EXPECT_FALSE(ok(nested, R"({})"));       // neither
  // A branch without an exact negation, where no rule applies: fail closed.
  expect_error(R"({"oneOf":[{"required":["a"]},{"required":["a"],"properties":{"a":{"multipleOf":2}}}]})",
               ErrorCode::kUnsupported, "oneOf", "#");
}

TEST(JsonSchemaCompiler, PropertyDependencies) {
  auto g = compile(R"({"type":"object","properties":{"card":{"type":"integer"},
                       "address":{"type":"string"}},"additionalProperties":false,
                       "dependentRequired":{"card":["address"]}})");
  EXPECT_TRUE(ok(g, R"({})"));
  EXPECT_TRUE(ok(g, R"({"address":"x"})"));
  EXPECT_TRUE(ok(g, R"({"card":1,"address":"x"})"));
  EXPECT_FALSE(ok(g, R"({"card":1})"));
  // draft-07 `dependencies`, schema form: the schema applies when the trigger is present.
  auto s = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
                       "dependencies":{"a":{"properties":{"b":{"minimum":5}},"required":["b"]}}})");
  EXPECT_TRUE(ok(s, R"({"b":1})"));
  EXPECT_TRUE(ok(s, R"({"a":0,"b":5})"));
  EXPECT_FALSE(ok(s, R"({"a":0,"b":4})"));
  EXPECT_FALSE(ok(s, R"({"a":0})"));
  expect_error(R"({"dependentRequired":{"a":"b"}})", ErrorCode::kInvalidArgument,
               "dependentRequired", "#");
  expect_error(R"({"dependentRequired":{"a":["x"],"b":["x"],"c":["x"],"d":["x"],"e":["x"],
                   "f":["x"],"g":["x"]}})",
               ErrorCode::kUnsupported, "dependentRequired", "#");
}

TEST(JsonSchemaCompiler, PatternProperties) {
  auto g = compile(R"({"type":"object","properties":{"id":{"type":"integer"}},
                       "patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false})");
  EXPECT_TRUE(ok(g, R"({"id":1,"x-a":"s","x-":"t"})"));
  EXPECT_FALSE(ok(g, R"({"x-a":1})"));   // pattern keys take the pattern's schema
  EXPECT_FALSE(ok(g, R"({"other":1})"));  // matches no pattern: additionalProperties false
  auto same = compile(R"({"patternProperties":{"a":{"type":"integer"},"b":{"type":"integer"}},
                          "additionalProperties":false})");
  EXPECT_TRUE(ok(same, R"({"ab":4,"b":3})"));
  EXPECT_FALSE(ok(same, R"({"c":2})"));
  // Keys matching no pattern take additionalProperties (the patterns' complement); a key
  // matching several patterns takes all their schemas (their intersection).
  auto open = compile(R"({"patternProperties":{"^x-":{"type":"string"}},
                          "additionalProperties":{"type":"integer"}})");
  EXPECT_TRUE(ok(open, R"({"x-a":"s","y":2})"));
  EXPECT_FALSE(ok(open, R"({"x-a":2})"));
  EXPECT_FALSE(ok(open, R"({"y":"s"})"));
  auto overlap = compile(R"({"patternProperties":{"a":{"type":"integer"},"b":{"minimum":3}},
                             "additionalProperties":false})");
  EXPECT_TRUE(ok(overlap, R"({"a":1,"b":3.5,"ab":4})"));
  EXPECT_FALSE(ok(overlap, R"({"b":2.5})"));
  EXPECT_FALSE(ok(overlap, R"({"ab":2})"));   // both patterns: an integer >= 3
  EXPECT_FALSE(ok(overlap, R"({"ab":3.5})"));
  EXPECT_FALSE(ok(overlap, R"({"c":1})"));
  // A declared name matching a pattern takes both schemas, and is never written twice.
  auto declared = compile(R"({"properties":{"x-id":{"maxLength":2}},"required":["x-id"],
                              "patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false})");
  EXPECT_TRUE(ok(declared, R"({"x-id":"ab","x-b":"c"})"));
  EXPECT_FALSE(ok(declared, R"({"x-id":3})"));
  EXPECT_FALSE(ok(declared, R"({"x-id":"abc"})"));
  EXPECT_FALSE(ok(declared, R"({"x-id":"a","x-id":"b"})"));
  expect_error(R"({"allOf":[{"additionalProperties":false},{"patternProperties":{"a":{}}}]})",
               ErrorCode::kUnsupported, "allOf", "#");
}

TEST(JsonSchemaCompiler, PropertyNames) {
  auto g = compile(R"({"type":"object","properties":{"id":{"type":"integer"},"Bad":{}},
                       "propertyNames":{"pattern":"^[a-z]+$","maxLength":3},
                       "additionalProperties":{"type":"boolean"}})");
  EXPECT_TRUE(ok(g, R"({"id":1,"abc":true})"));
  EXPECT_FALSE(ok(g, R"({"Bad":1})"));      // a declared name the key schema rules out
  EXPECT_FALSE(ok(g, R"({"abcd":true})"));  // too long
  EXPECT_FALSE(ok(g, R"({"a1":true})"));
  auto listed = compile(R"({"propertyNames":{"enum":["a","b",3]},"additionalProperties":{"type":"null"}})");
  EXPECT_TRUE(ok(listed, R"({"a":null,"b":null})"));
  EXPECT_FALSE(ok(listed, R"({"c":null})"));
  auto impossible = compile(R"({"type":"object","required":["x"],"propertyNames":{"const":"y"}})");
  EXPECT_FALSE(ok(impossible, R"({"x":1})"));
  EXPECT_FALSE(ok(impossible, R"({})"));
  auto none = compile(R"({"type":"object","propertyNames":false})");
  EXPECT_TRUE(ok(none, "{}"));
  EXPECT_FALSE(ok(none, R"({"a":1})"));
}

TEST(JsonSchemaCompiler, PropertyCounts) {
  auto g = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
                       "minProperties":2,"maxProperties":3})");
  EXPECT_FALSE(ok(g, R"({})"));
  EXPECT_FALSE(ok(g, R"({"a":1})"));
  EXPECT_TRUE(ok(g, R"({"a":1,"b":2})"));
  EXPECT_TRUE(ok(g, R"({"a":1,"x":2})"));          // additional members count too
  EXPECT_TRUE(ok(g, R"({"x":1,"y":2,"z":3})"));
  EXPECT_FALSE(ok(g, R"({"a":1,"b":2,"x":3,"y":4})"));
  auto one = compile(R"({"type":"object","additionalProperties":{"type":"null"},"minProperties":1})");
  EXPECT_FALSE(ok(one, R"({})"));
  EXPECT_TRUE(ok(one, R"({"k":null})"));
  auto none = compile(R"({"properties":{"a":{}},"required":["a"],"maxProperties":0})");
  EXPECT_FALSE(ok(none, R"({"a":1})"));
  EXPECT_FALSE(ok(none, R"({})"));
  EXPECT_TRUE(ok(none, "1"));  // counts apply to objects only
  expect_error(R"({"maxProperties":-1})", ErrorCode::kInvalidArgument, "maxProperties", "#");
}

// A name that another branch's patternProperties admits is not forbidden there by its
// additionalProperties: {"a": "x"} matches both branches below. Rule 2 used to read branch 1's
// additionalProperties for "a", call the branches separate and write {"a": "x"}; now no rule
// separates them and branch 1 has no exact negation, so the schema is refused.
TEST(JsonSchemaCompiler, OneOfSeesPatternPropertiesBeforeAdditionalProperties) {
  expect_error(R"({"oneOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},
                   {"type":"object","patternProperties":{"^a$":{"type":"string"}},
                    "additionalProperties":false}]})",
               ErrorCode::kUnsupported, "oneOf", "#");
  auto g = compile(R"({"oneOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},
                       {"type":"object","patternProperties":{"^a$":{"type":"integer"}},
                        "additionalProperties":false}]})");  // "a" an integer: rule 2 holds
  EXPECT_TRUE(ok(g, R"({"a":"x"})"));
  EXPECT_FALSE(ok(g, R"({"a":1})"));
}

// Branches negated without their siblings: `type: integer` has no exact complement, the
// branches' `required` lists do; and a branch's own `not` (and `not` of `not`) join the product.
TEST(JsonSchemaCompiler, OneOfNegatesBranchesWithoutTheirSiblings) {
  auto g = compile(R"({"type":"object","properties":{"r":{"type":"integer"},"l":{"type":"integer"},
                       "h":{"type":"integer"}},"additionalProperties":false,
                       "oneOf":[{"required":["l"]},{"required":["r"]},{"required":["r","h"]}]})");
  EXPECT_TRUE(ok(g, R"({"r":1})"));
  EXPECT_TRUE(ok(g, R"({"l":1,"h":2})"));
  EXPECT_FALSE(ok(g, R"({"r":1,"h":2})"));  // branches 1 and 2
  EXPECT_FALSE(ok(g, R"({"l":1,"r":2})"));  // branches 0 and 1
  EXPECT_FALSE(ok(g, R"({"h":2})"));        // none
  EXPECT_FALSE(ok(g, R"({"r":1.5})"));
  // No narrowing rule separates these branches (both require a), so each takes `not` of the
  // other, exactly: branch 1's negation is "no a, or c" (the `not` of branch 0's `not`).
  auto own_not = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"c":{"type":"integer"}},
                             "additionalProperties":false,
                             "oneOf":[{"required":["a"],"not":{"required":["c"]}},
                                      {"required":["a"],"properties":{"a":{"minimum":5}}}]})");
  EXPECT_TRUE(ok(own_not, R"({"a":1})"));         // branch 0 only
  EXPECT_TRUE(ok(own_not, R"({"a":7,"c":3})"));   // branch 1 only
  EXPECT_FALSE(ok(own_not, R"({"a":7})"));        // both
  EXPECT_FALSE(ok(own_not, R"({"a":1,"c":3})"));  // none
  auto twice = compile(R"({"not":{"not":{"type":"string","maxLength":2}}})");
  EXPECT_TRUE(ok(twice, R"("ab")"));
  EXPECT_FALSE(ok(twice, R"("abc")"));
  EXPECT_FALSE(ok(twice, "1"));
}

// if / then / else: (if and then) or (not if and else); a missing then / else is true and
// without `if` neither applies.
TEST(JsonSchemaCompiler, ConditionalAsTwoCases) {
  auto g = compile(R"({"type":"object","properties":{"kind":{"enum":["a","b"]},"x":{"type":"integer"}},
                       "required":["kind"],"additionalProperties":false,
                       "if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},
                       "else":{"not":{"required":["x"]}}})");
  EXPECT_TRUE(ok(g, R"({"kind":"a","x":1})"));
  EXPECT_FALSE(ok(g, R"({"kind":"a"})"));
  EXPECT_TRUE(ok(g, R"({"kind":"b"})"));
  EXPECT_FALSE(ok(g, R"({"kind":"b","x":1})"));
  auto no_else = compile(R"({"type":"integer","if":{"minimum":10},"then":{"multipleOf":5}})");
  EXPECT_TRUE(ok(no_else, "15"));
  EXPECT_FALSE(ok(no_else, "12"));
  EXPECT_TRUE(ok(no_else, "7"));
  auto no_if = compile(R"({"type":"integer","then":{"minimum":10},"else":false})");
  EXPECT_TRUE(ok(no_if, "3"));
  expect_error(R"({"if":{"items":{"type":"string"}},"then":false})", ErrorCode::kUnsupported, "if", "#");
}

// `not` of listed numbers is the open intervals between them (exact), so an `if` on a number
// value leaves the other numbers to `else`.
TEST(JsonSchemaCompiler, NotOfNumbersIsTheGapsBetweenThem) {
  auto g = compile(R"({"not":{"enum":[2.5,1,"a",1.0]}})");
  for (const char* yes : {"3", "2", "-7", "1.5", "2.75", "\"b\"", "null"}) EXPECT_TRUE(ok(g, yes)) << yes;
  for (const char* no : {"1", "2.5", "\"a\""}) EXPECT_FALSE(ok(g, no)) << no;
  auto cond = compile(R"({"type":"integer","if":{"const":0},"then":false})");
  EXPECT_TRUE(ok(cond, "2"));
  EXPECT_TRUE(ok(cond, "-1"));
  EXPECT_FALSE(ok(cond, "0"));
}

TEST(JsonSchemaCompiler, NotAsAUnionOfComplements) {
  auto g = compile(R"({"type":"object","properties":{"a":{"not":{}},"b":{"not":false}}})");
  EXPECT_TRUE(ok(g, R"({"b":1})"));
  EXPECT_FALSE(ok(g, R"({"a":1})"));
  auto not_string = compile(R"({"not":{"type":"string"}})");
  EXPECT_TRUE(ok(not_string, "1"));
  EXPECT_TRUE(ok(not_string, "null"));
  EXPECT_FALSE(ok(not_string, R"("s")"));
  // The shape real schemas use: not both of two members.
  auto not_both = compile(R"({"type":"object","properties":{"a":{},"b":{}},"additionalProperties":false,
                              "not":{"required":["a","b"]}})");
  EXPECT_TRUE(ok(not_both, R"({"a":1})"));
  EXPECT_TRUE(ok(not_both, R"({})"));
  EXPECT_FALSE(ok(not_both, R"({"a":1,"b":2})"));
  EXPECT_FALSE(ok(not_both, R"({"c":1})"));
  // Strings: the regular layer's complement.
  auto not_pattern = compile(R"({"type":"string","maxLength":3,"not":{"pattern":"[0-9]"}})");
  EXPECT_TRUE(ok(not_pattern, R"("abc")"));
  EXPECT_FALSE(ok(not_pattern, R"("ab1")"));
  EXPECT_FALSE(ok(not_pattern, R"("abcd")"));
  auto not_listed = compile(R"({"type":["string","boolean"],"not":{"enum":["x",true]}})");
  EXPECT_TRUE(ok(not_listed, R"("y")"));
  EXPECT_TRUE(ok(not_listed, "false"));
  EXPECT_FALSE(ok(not_listed, R"("x")"));
  EXPECT_FALSE(ok(not_listed, "true"));
  auto not_range = compile(R"({"type":"integer","not":{"minimum":3}})");
  EXPECT_TRUE(ok(not_range, "2"));
  EXPECT_FALSE(ok(not_range, "3"));
  auto nested = compile(R"({"type":"object","required":["k"],"not":{"properties":{"k":{"const":"x"}}}})");
  EXPECT_TRUE(ok(nested, R"({"k":"y"})"));
  EXPECT_TRUE(ok(nested, R"({"k":null})"));
  EXPECT_FALSE(ok(nested, R"({"k":"x"})"));
  // Numbers other than a listed one are left out (a subset), never the listed one.
  EXPECT_FALSE(ok(compile(R"({"not":{"const":1}})"), "1"));
  // not: {type: integer} leaves out non-integral numbers (a subset) but never an integer.
  auto not_integer = compile(R"({"not":{"type":"integer"}})");
  EXPECT_FALSE(ok(not_integer, "3"));
  EXPECT_TRUE(ok(not_integer, "[]"));
  expect_error(R"({"not":{"items":{"type":"string"}}})", ErrorCode::kUnsupported, "not", "#/not");
}

TEST(JsonSchemaCompiler, RecursiveRefs) {
  auto g = compile(R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
                       "next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},
                       "required":["v","next"],"additionalProperties":false}},
                      "$ref":"#/$defs/node"})");
  EXPECT_TRUE(ok(g, R"({"v":1,"next":{"v":2,"next":null}})"));
  EXPECT_FALSE(ok(g, R"({"v":1,"next":{"v":2}})"));
  expect_error(R"({"$ref":"#/$defs/missing"})", ErrorCode::kInvalidArgument, "$ref", "#");
  expect_error(R"({"$ref":"http://example.com/s.json"})", ErrorCode::kUnsupported, "$ref", "#");
}

TEST(JsonSchemaCompiler, UnsupportedKeywordsFailClosedWithPointer) {
  expect_error(R"({"properties":{"a":{"items":{"uniqueItems":true}}}})", ErrorCode::kUnsupported,
               "uniqueItems", "#/properties/a/items");
  expect_error(R"({"anyOf":[{"not":{"multipleOf":2}}]})", ErrorCode::kUnsupported, "not",
               "#/anyOf/0/not");
  expect_error(R"({"propertyNames":{"minProperties":1}})", ErrorCode::kUnsupported,
               "propertyNames", "#/propertyNames");
  expect_error(R"({"type":"strin"})", ErrorCode::kInvalidArgument, "type", "#");
  expect_error(R"({"minLength":-1})", ErrorCode::kInvalidArgument, "minLength", "#");
  EXPECT_NO_THROW(compile(R"({"title":"t","description":"d","examples":[1],"default":2,
                              "$comment":"c","deprecated":true,"readOnly":false})"));
}

TEST(JsonSchemaCompiler, OlderDraftsCompileWhereTheirKeywordsMeanTheSame) {
  auto g = compile(R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"object",
                       "properties":{"n":{"type":"integer","minimum":1,"maximum":3}},
                       "required":["n"]})");
  EXPECT_TRUE(ok(g, R"({"n":2})"));
  EXPECT_FALSE(ok(g, R"({"n":4})"));
  // draft-04's boolean exclusiveMaximum modifies maximum: fail closed rather than misread it.
  expect_error(R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"integer",
                   "maximum":3,"exclusiveMaximum":true})",
               ErrorCode::kInvalidArgument, "exclusiveMaximum", "#");
  // drafts 4-7 tuple form of items: read as prefixItems (LegacyTupleItems has the details).
  auto tuple = compile(R"({"$schema":"http://json-schema.org/draft-07/schema#",
                           "type":"array","items":[{"type":"integer"}]})");
  EXPECT_TRUE(ok(tuple, R"([1,"x"])"));
  EXPECT_FALSE(ok(tuple, R"(["x"])"));
  expect_error(R"({"$schema":"http://json-schema.org/draft-03/schema#"})",
               ErrorCode::kUnsupported, "$schema", "#");
}

TEST(JsonSchemaCompiler, MalformedInputNeverCrashes) {
  for (const char* text : {"", "{", "[]", "1", "null", R"({"type":5})", R"({"properties":[]})",
                           R"({"items":3})", R"({"enum":{}})", R"({"allOf":[]})",
                           R"({"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"})",
                           R"({"$ref":"#"})", R"({"required":[1]})", R"({"maxItems":1e300})"}) {
    try {
      auto g = compile(text);
      ByteMatcher m(g);
      (void)m.allowed_next_bytes();
    } catch (const Error&) {
    }
  }
}

TEST(JsonSchemaCompiler, SpacedWhitespacePolicy) {
  JsonSchemaOptions spaced;
  spaced.whitespace = Whitespace::kSpaced;
  auto g = compile(R"({"properties":{"a":{"type":"array"}},"required":["a"],"additionalProperties":false})",
                   spaced);
  EXPECT_TRUE(ok(g, R"({"a": [1, {"x": 2}]})"));
  EXPECT_FALSE(ok(g, R"({"a":[1]})"));
}

TEST(JsonSchemaCompiler, CanonicalJson) {
  auto v = nlohmann::ordered_json::parse(R"({"b":1.0,"a":[-0.0,2.5,"\u0001"]})");
  EXPECT_EQ(canonical_json(v), R"({"b":1,"a":[0,2.5,"\u0001"]})");
  EXPECT_EQ(canonical_json(v, Whitespace::kSpaced), R"({"b": 1, "a": [0, 2.5, "\u0001"]})");
}

TEST(JsonSchemaCompiler, CacheSharesGrammarsAcrossThreads) {
  CompiledGrammarCache cache(2);
  const std::string schema = R"({"type":"integer"})";
  std::vector<std::shared_ptr<const Grammar>> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { got[i] = cache.get_or_compile(schema); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.get_or_compile(schema), cache.get_or_compile(schema));
  for (auto& g : got) EXPECT_TRUE(ok(g, "42"));
  cache.get_or_compile(R"({"type":"string"})");
  cache.get_or_compile(R"({"type":"null"})");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_THROW(cache.get_or_compile(R"({"not":{"multipleOf":3}})"), Error);
}

}  // namespace
}  // namespace afm::guided
