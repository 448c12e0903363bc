// Partial JSON: every prefix of a JSON text shows a prefix-consistent view of the final value,
// the whole text equals nlohmann's parse, incremental appends equal the one-shot parse, and
// invalid texts are reported with their byte offset.
//
// "Prefix-consistent view" (checked by consistent() below): a partial value p of a final
// value f when
//  - p is null and nothing is shown yet (top level only), or p == f for null/true/false;
//  - p is a string that is a byte prefix of f (a string);
//  - p is a number and f a number; when neither has a fraction or exponent, p's digits are a
//    prefix of f's (a number shows its longest prefix that is itself a number);
//  - p is an array with no more elements than f, all but the last equal to f's, the last a
//    prefix-consistent view of f's element at that index;
//  - p is an object whose keys are the first keys of f in the same order, values as for
//    arrays.
#include "guided/partial_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace afm::guided {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

bool consistent(const Json& p, const Json& f, bool top, std::string* why) {
  auto no = [&](const std::string& m) {
    *why = m + ": partial " + p.dump() + " vs final " + f.dump();
    return false;
  };
  if (p.is_null()) return top || f.is_null() ? true : no("null shown for a non-null value");
  if (p.is_boolean()) return p == f ? true : no("literal differs");
  if (p.is_string()) {
    if (!f.is_string()) return no("type");
    const auto& ps = p.get_ref<const std::string&>();
    return f.get_ref<const std::string&>().starts_with(ps) ? true : no("string not a prefix");
  }
  if (p.is_number()) {
    if (!f.is_number()) return no("type");
    if (p.is_number_float() || f.is_number_float()) return true;
    return f.dump().starts_with(p.dump()) ? true : no("digits not a prefix");
  }
  if (p.is_array() != f.is_array() || p.is_object() != f.is_object()) return no("type");
  if (p.size() > f.size()) return no("more elements than the final value");
  size_t i = 0;
  auto fi = f.begin();
  for (auto pi = p.begin(); pi != p.end(); ++pi, ++fi, ++i) {
    if (p.is_object() && pi.key() != fi.key()) return no("key order");
    if (i + 1 < p.size() && *pi != *fi) return no("a finished element differs");
    if (i + 1 == p.size() && !consistent(*pi, *fi, false, why)) return false;
  }
  return true;
}

// Feeds `text` byte by byte, checking every prefix (or every `stride`-th) against the final.
void check_all_prefixes(const std::string& text, size_t stride = 1) {
  SCOPED_TRACE(text.size() < 300 ? text : text.substr(0, 300) + "...");
  const Json final_value = Json::parse(text);
  PartialJsonParser parser;
  for (size_t i = 0; i < text.size(); ++i) {
    parser.append(std::string_view(text).substr(i, 1));
    const PartialJson& s = parser.snapshot();
    ASSERT_TRUE(s.valid) << "prefix " << i + 1 << ": " << s.error;
    if (s.complete) {
      ASSERT_EQ(s.value, Json::parse(text.substr(0, i + 1)));
    }
    if ((i + 1) % stride != 0 && i + 1 != text.size()) continue;
    std::string why;
    ASSERT_TRUE(consistent(s.value, final_value, true, &why)) << "prefix " << i + 1 << ": " << why;
  }
  const PartialJson& s = parser.snapshot();
  ASSERT_TRUE(s.complete);
  ASSERT_EQ(s.value, final_value);
  ASSERT_EQ(s.value.dump(), final_value.dump());  // same number types, same key order
  const PartialJson one = parse_partial_json(text);
  ASSERT_TRUE(one.complete);
  ASSERT_EQ(one.value, final_value);
}

// Random chunkings: the snapshot after each chunk equals the one-shot parse of that prefix.
void check_random_splits(const std::string& text, std::mt19937& rng, int rounds = 3) {
  for (int r = 0; r < rounds; ++r) {
    PartialJsonParser parser;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t max_chunk = std::max<size_t>(1, text.size() / 6);
      const size_t len = std::min(text.size() - pos, 1 + rng() % max_chunk);
      parser.append(std::string_view(text).substr(pos, len));
      pos += len;
      const PartialJson& inc = parser.snapshot();
      const PartialJson one = parse_partial_json(std::string_view(text).substr(0, pos));
      ASSERT_EQ(inc.value, one.value) << "prefix " << pos;
      ASSERT_EQ(inc.complete, one.complete) << "prefix " << pos;
      ASSERT_EQ(inc.valid, one.valid) << "prefix " << pos;
      ASSERT_EQ(inc.error, one.error) << "prefix " << pos;
    }
  }
}

// The same value with whitespace everywhere JSON allows it.
std::string spaced(const Json& v) {
  if (v.is_array() || v.is_object()) {
    std::string out = v.is_array() ? "[ \n" : "{\t";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += " ,\r\n ";
      first = false;
      if (v.is_object()) out += Json(it.key()).dump() + " : ";
      out += spaced(*it);
    }
    return out + (v.is_array() ? " ]" : "\n}");
  }
  return v.dump();
}

const std::vector<std::string>& hand_written() {
  static const std::vector<std::string> docs = {
      R"({"name":"Ada","age":36,"tags":["math","engines"],"alive":false,"spouse":null})",
      R"([1,-2,3.25,-0.5e-3,1E+10,0,-0,12345678901234567890,1.5e300,123456789012345678901234])",
      R"({"a":{"b":{"c":[[],[{}],{"d":[true,false,null]}]}},"e":""})",
      R"("esc: \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u20ac \ud83d\ude00 \u0000 end")",
      "\"raw UTF-8: \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd\"",
      R"(  {"spaced" : [ 1 , 2 ] , "k" : "v" }  )",
      R"({"dup":1,"x":2,"dup":"two"})",
      "0",
      "-12.5e-7",
      "true",
      "null",
      R"("")",
      "[]",
      "{}",
      R"([[[[[[[[[[1]]]]]]]]]])",
      R"({"":"empty key","\u00e9":"escaped key"})",
  };
  return docs;
}

TEST(GuidedPartialJson, HandWrittenDocuments) {
  std::mt19937 rng(7);
  for (const std::string& doc : hand_written()) {
    if (doc.find("\"dup\"") == std::string::npos) check_all_prefixes(doc);
    check_random_splits(doc, rng);
    const Json v = Json::parse(doc);
    if (doc.find("\"dup\"") == std::string::npos) {
      check_all_prefixes(v.dump(2));
      check_all_prefixes(spaced(v));
    }
  }
}

PartialJson at(std::string_view prefix) { return parse_partial_json(prefix); }

TEST(GuidedPartialJson, WhatAPrefixShows) {
  EXPECT_TRUE(at("").value.is_null());
  EXPECT_FALSE(at("").complete);
  EXPECT_TRUE(at("   ").valid);
  EXPECT_EQ(at(R"({"a":"hel)").value, Json::parse(R"({"a":"hel"})"));
  EXPECT_EQ(at(R"({"a)").value, Json::object());   // key unfinished
  EXPECT_EQ(at(R"({"a")").value, Json::object());  // key finished, no value yet
  EXPECT_EQ(at(R"({"a": )").value, Json::object());
  EXPECT_EQ(at(R"({"a":-)").value, Json::object());  // '-' alone is held back
  EXPECT_EQ(at(R"({"a":-1)").value, Json::parse(R"({"a":-1})"));
  EXPECT_EQ(at(R"({"a":tr)").value, Json::object());
  EXPECT_EQ(at(R"({"a":true)").value, Json::parse(R"({"a":true})"));
  EXPECT_EQ(at("[1.").value, Json::parse("[1]"));
  EXPECT_EQ(at("[1.5e").value, Json::parse("[1.5]"));
  EXPECT_EQ(at("[1.5e-").value, Json::parse("[1.5]"));
  EXPECT_EQ(at("[1.5e-2").value, Json::parse("[0.015]"));
  EXPECT_EQ(at("[12").value, Json::parse("[12]"));
  EXPECT_EQ(at(R"(["a\u00)").value, Json::parse(R"(["a"])"));
  EXPECT_EQ(at(R"(["\u00e)").value, Json::parse(R"([""])"));
  EXPECT_EQ(at(R"(["a\)").value, Json::parse(R"(["a"])"));
  EXPECT_EQ(at(R"("\ud83d)").value, "");  // high surrogate waits for its low half
  EXPECT_EQ(at(R"("\ud83d\ude0)").value, "");
  EXPECT_EQ(at(R"("\ud83d\ude00)").value, "\xf0\x9f\x98\x80");
  EXPECT_EQ(at("\"x\xe2\x82").value, "x");  // partial UTF-8 held back
  EXPECT_EQ(at("\"x\xe2\x82\xac").value, "x\xe2\x82\xac");
  EXPECT_EQ(at(R"({"a":[{"b":)").value, Json::parse(R"({"a":[{}]})"));
  EXPECT_EQ(at(R"({"a":[{"b":{)").value, Json::parse(R"({"a":[{"b":{}}]})"));
  // A top-level number is complete as it stands, but may still grow.
  EXPECT_TRUE(at("12").complete);
  EXPECT_FALSE(at("12.").complete);
  EXPECT_EQ(at("12.").value, 12);
  EXPECT_FALSE(at("tru").complete);
  EXPECT_TRUE(at("tru").value.is_null());
  EXPECT_TRUE(at("[1] \n").complete);
  // Duplicate keys: the later value replaces the earlier in place, once representable.
  EXPECT_EQ(at(R"({"a":1,"b":2,"a":t)").value, Json::parse(R"({"a":1,"b":2})"));
  EXPECT_EQ(at(R"({"a":1,"b":2,"a":"x)").value, Json::parse(R"({"a":"x","b":2})"));
  // Numbers beyond a double show as null and are invalid once they end.
  EXPECT_TRUE(at("[1e400").valid);
  EXPECT_TRUE(at("[1e400").value[0].is_null());
  EXPECT_FALSE(at("[1e400]").valid);
  EXPECT_EQ(at("[1e400").value.size(), 1u);
  EXPECT_EQ(at("1e-400").value, 0.0);
}

TEST(GuidedPartialJson, InvalidInputsNameTheOffset) {
  const std::vector<std::pair<std::string, size_t>> cases = {
      {R"({"a" 1})", 5},
      {"[1,]", 3},
      {"01", 1},
      {"tx", 1},
      {R"({"a":1}})", 7},
      {R"("\x")", 2},
      {R"("\ud800x")", 7},
      {R"("\ud800\u0041")", 12},
      {R"("\udc00")", 6},
      {"1.e5", 2},
      {"-a", 1},
      {"\"a\x01\"", 2},
      {"\"\xff\"", 1},
      {"\"\xc0\xaf\"", 1},
      {"\"\xed\xa0\x80\"", 2},
      {"\"\xe2\x28\"", 2},
      {"{,}", 1},
      {"[1 2]", 3},
      {R"({"a":1,})", 7},
      {"{1:2}", 1},
      {"nul1", 3},
      {"[1e+]", 4},
      {"]", 0},
      {"\xef\xbb\xbf{}", 0},
      {"[-]", 2},
      {"1 2", 2},
      {R"({"a":})", 5},
  };
  for (const auto& [text, offset] : cases) {
    SCOPED_TRACE(text);
    const PartialJson r = parse_partial_json(text);
    EXPECT_FALSE(r.valid);
    EXPECT_FALSE(r.complete);
    EXPECT_NE(r.error.find("at byte " + std::to_string(offset) + ":"), std::string::npos)
        << r.error;
    if (!text.starts_with("\xef\xbb\xbf")) {  // nlohmann skips a byte order mark; we do not
      EXPECT_FALSE(Json::accept(text));
    }
    // More bytes never make it valid again, and split appends agree.
    PartialJsonParser p;
    for (char c : text) p.append(std::string_view(&c, 1));
    p.append("}]\"");
    EXPECT_EQ(p.snapshot().error, r.error);
  }
}

TEST(GuidedPartialJson, DeepNestingIsAnErrorNotACrash) {
  const size_t ok_depth = kPartialJsonMaxDepth;
  const std::string ok = std::string(ok_depth, '[') + std::string(ok_depth, ']');
  const PartialJson a = parse_partial_json(ok);
  EXPECT_TRUE(a.complete);
  EXPECT_EQ(a.value, Json::parse(ok));
  const PartialJson b = parse_partial_json(std::string(100000, '['));
  EXPECT_FALSE(b.valid);
  EXPECT_NE(b.error.find("at byte " + std::to_string(ok_depth)), std::string::npos) << b.error;
  EXPECT_NE(b.error.find("nesting"), std::string::npos);
}

TEST(GuidedPartialJson, MoveAndReset) {
  PartialJsonParser a;
  a.append(R"({"k":[1,{"s":"ab)");
  PartialJsonParser b = std::move(a);
  b.append(R"(c"}],"t":"x)");
  EXPECT_EQ(b.snapshot().value, Json::parse(R"({"k":[1,{"s":"abc"}],"t":"x"})"));
  PartialJsonParser c;
  c.append(R"({"q)");
  c = std::move(b);
  c.append(R"(y"})");
  EXPECT_TRUE(c.snapshot().complete);
  EXPECT_EQ(c.snapshot().value, Json::parse(R"({"k":[1,{"s":"abc"}],"t":"xy"})"));
  PartialJsonParser top;
  top.append(R"("ab)");
  PartialJsonParser moved(std::move(top));
  moved.append(R"(c")");
  EXPECT_EQ(moved.snapshot().value, "abc");
  moved.reset();
  EXPECT_TRUE(moved.snapshot().value.is_null());
  moved.append("[true]");
  EXPECT_EQ(moved.snapshot().value, Json::parse("[true]"));
  EXPECT_EQ(moved.offset(), 6u);
}

// Random byte edits of valid documents: complete exactly when nlohmann accepts the text.
TEST(GuidedPartialJson, AgreesWithNlohmannOnMutations) {
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]\",:\\ 0123456789-+.eEtrufalsn\x01\xc3\xa9\xff/u";
  for (const std::string& doc : hand_written()) {
    for (int m = 0; m < 300; ++m) {
      std::string text = doc;
      for (int edits = 1 + rng() % 3; edits > 0; --edits) {
        const size_t pos = text.empty() ? 0 : rng() % (text.size() + 1);
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0:
            text.insert(text.begin() + pos, c);
            break;
          case 1:
            if (pos < text.size()) text.erase(pos, 1);
            break;
          default:
            if (pos < text.size()) text[pos] = c;
            break;
        }
      }
      SCOPED_TRACE(text);
      const PartialJson r = parse_partial_json(text);
      const bool accepted = Json::accept(text);
      ASSERT_EQ(r.complete, accepted) << r.error;
      if (accepted) {
        ASSERT_EQ(r.value, Json::parse(text));
      }
      if (!r.valid) {
        ASSERT_FALSE(accepted);
      }
      check_random_splits(text, rng, 1);
    }
  }
}

fs::path suite_dir() {
  const char* root = std::getenv("AFM_SOURCE_DIR");
  return fs::path(root ? root : ".") / ".." / "shared" / "data" / "json-schema-test-suite" /
         "tests" / "draft2020-12";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every schema and instance of the official test suite, compact, indented and spaced.
TEST(GuidedPartialJson, JsonSchemaTestSuiteDocuments) {
  const fs::path dir = suite_dir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "JSON Schema Test Suite not found at " << dir;
  std::mt19937 rng(3);
  size_t documents = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string file_text = read_file(entry.path());
    // The file itself, as the model would write a large document: every byte, sampled checks.
    check_all_prefixes(file_text, std::max<size_t>(1, file_text.size() / 64));
    const Json file = Json::parse(file_text);
    for (const Json& group : file) {
      std::vector<Json> values = {group["schema"]};
      for (const Json& test : group["tests"]) values.push_back(test["data"]);
      for (const Json& v : values) {
        check_all_prefixes(v.dump());
        check_all_prefixes(v.dump(1));
        check_all_prefixes(spaced(v));
        check_random_splits(v.dump(), rng, 1);
        ++documents;
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(documents, 1000u);
}

}  // namespace
}  // namespace afm::guided
