// Regex subset -> grammar: features, search vs full match, UTF-8, JSON encoding, errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/regex_compiler.h"

namespace afm::guided {
namespace {

bool full(std::string_view pattern, std::string_view text) {
  return ByteMatcher::matches(compile_regex_grammar(pattern, /*search=*/false), text);
}
bool search(std::string_view pattern, std::string_view text) {
  return ByteMatcher::matches(compile_regex_grammar(pattern, /*search=*/true), text);
}

TEST(RegexCompiler, LiteralsConcatAlternation) {
  EXPECT_TRUE(full("abc", "abc"));
  EXPECT_FALSE(full("abc", "ab"));
  EXPECT_TRUE(full("ab|cd", "cd"));
  EXPECT_TRUE(full("a(b|c)d", "acd"));
  EXPECT_TRUE(full("a(?:b|)d", "ad"));
  EXPECT_TRUE(full("(?<x>ab)+", "abab"));
}

TEST(RegexCompiler, Quantifiers) {
  EXPECT_TRUE(full("a*", ""));
  EXPECT_TRUE(full("a+b?", "aaab"));
  EXPECT_FALSE(full("a+", ""));
  EXPECT_TRUE(full("a{3}", "aaa"));
  EXPECT_FALSE(full("a{3}", "aa"));
  EXPECT_TRUE(full("a{2,}", "aaaaa"));
  EXPECT_TRUE(full("a{1,2}?", "aa"));
  EXPECT_FALSE(full("a{1,2}", "aaa"));
  EXPECT_TRUE(full("a{,2}", "a{,2}"));  // not a quantifier: literal braces
}

TEST(RegexCompiler, ClassesAndEscapes) {
  EXPECT_TRUE(full("[a-c]+", "abcba"));
  EXPECT_FALSE(full("[a-c]", "d"));
  EXPECT_TRUE(full("[^a-c]", "d"));
  EXPECT_FALSE(full("[^a-c]", "b"));
  EXPECT_TRUE(full("\\d\\w\\s", "1_ "));
  EXPECT_FALSE(full("\\D", "5"));
  EXPECT_TRUE(full("[\\d-]+", "1-2"));
  EXPECT_TRUE(full("\\x41\\u0042\\u{43}", "ABC"));
  EXPECT_TRUE(full("\\.\\*", ".*"));
  EXPECT_TRUE(full("[\\]]", "]"));
  EXPECT_TRUE(full("\\cJ", "\n"));
  // Where ECMA-262 and Python's re disagree on whitespace, neither \s nor \S generates it.
  EXPECT_TRUE(full("\\s", "\u3000"));
  EXPECT_FALSE(full("\\s", "\uFEFF"));
  EXPECT_FALSE(full("\\S", "\uFEFF"));
  EXPECT_FALSE(full("\\S", "\x1c"));
  EXPECT_FALSE(full("\\S", "\u0085"));
  EXPECT_TRUE(full("\\S", "x"));
}

TEST(RegexCompiler, DotAndUnicode) {
  EXPECT_TRUE(full(".", "\xc3\xa9"));           // é is one code point
  EXPECT_TRUE(full(".", "\xf0\x9f\x99\x82"));   // 4-byte UTF-8
  EXPECT_FALSE(full(".", "\n"));
  EXPECT_FALSE(full(".", "\xed\xa0\x80"));      // a surrogate is not a character
  EXPECT_TRUE(full("[é-ë]", "\xc3\xaa"));
  EXPECT_TRUE(full("\\W", "\xe2\x82\xac"));
  EXPECT_TRUE(full("^.{2}$", "\xc3\xa9x"));
}

TEST(RegexCompiler, SearchSemanticsAndAnchors) {
  EXPECT_TRUE(search("b", "abc"));
  EXPECT_FALSE(search("^b", "abc"));
  EXPECT_TRUE(search("^a", "abc"));
  EXPECT_FALSE(search("a$", "abc"));
  EXPECT_TRUE(search("^abc$", "abc"));
  EXPECT_TRUE(search("^x|c$", "abc"));
  EXPECT_TRUE(search("", "anything"));
  // A branch matching the empty string is found anywhere; matching stays linear (no growing
  // Earley sets) on a long text.
  EXPECT_TRUE(search(".*", std::string(20000, 'x')));
  EXPECT_TRUE(search("^a*", "bbb"));
  EXPECT_TRUE(search("x?$", "abc"));
  EXPECT_FALSE(search("^a*$", "abc"));
}

// Unanchored ends lose their nullable pieces and keep the minimum of their last repetition
// (`[a-z]+` is searched as `[a-z]`): the same strings must match as before.
TEST(RegexCompiler, SearchTrimsUnanchoredEndsWithoutChangingTheLanguage) {
  EXPECT_TRUE(search("[a-z]+", "12a34"));
  EXPECT_FALSE(search("[a-z]+", "1234"));
  EXPECT_TRUE(search("x{2,5}", "axxb"));
  EXPECT_FALSE(search("x{2,5}", "axbx"));
  EXPECT_TRUE(search("a+b*", "ca"));
  EXPECT_FALSE(search("a+b*", "cb"));
  EXPECT_TRUE(search("b*a(cd)?", "a"));
  EXPECT_TRUE(search("^a+b?", "aaz"));     // anchored start: only the end is trimmed
  EXPECT_FALSE(search("^a+b?", "zaa"));
  EXPECT_TRUE(search("b?a+$", "zzaa"));     // anchored end: only the start is trimmed
  EXPECT_FALSE(search("b?a+$", "aaz"));
  EXPECT_TRUE(search("(ab)+", "xaby"));
  EXPECT_FALSE(search("(ab)+", "xay"));
  EXPECT_TRUE(search("a*|b", "zzz"));      // one branch matches the empty string
  GrammarBuilder b;
  EXPECT_EQ(compile_regex(b, "[a-z]{3,}", CharEncoding::kUtf8, true).min_chars, 3u);
}

// Searching `[a-zA-Z]+` once kept one Earley item per possible match start, and every position
// was a new parse state; trimmed, the state after any letter is one state.
TEST(RegexCompiler, SearchStatesRepeat) {
  ByteMatcher m(compile_regex_grammar("[a-zA-Z]+", /*search=*/true));
  ASSERT_TRUE(m.accept_bytes("1ab"));
  std::vector<uint32_t> after_two, after_many;
  m.state_key(&after_two);
  ASSERT_TRUE(m.accept_bytes("cdefghijkl mno"));
  m.state_key(&after_many);
  EXPECT_EQ(after_two, after_many);
}

// Searching for one character class pads the start with its complement (the first match is the
// match), so further matching characters add no Earley items: the set after a thousand letters
// is the set after two. The language is unchanged.
TEST(RegexCompiler, SearchForOneClassKeepsTheEarleySetBounded) {
  ByteMatcher m(compile_regex_grammar("[a-zA-Z]+", /*search=*/true));
  ASSERT_TRUE(m.accept_bytes("1ab"));
  const size_t after_two = m.current_set_size();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(m.accept_bytes(i % 7 == 0 ? " " : "x"));
  EXPECT_EQ(m.current_set_size(), after_two);
  EXPECT_TRUE(search("[a-z]", "12a34"));
  EXPECT_TRUE(search("[a-z]", "a"));
  EXPECT_TRUE(search("[a-z]+", "\xc3\xa9\xc3\xa9z\xc3\xa9"));
  EXPECT_FALSE(search("[a-z]", "1234"));
  EXPECT_FALSE(search("[a-z]", ""));
  EXPECT_FALSE(search("[a-z]", "\xc3\xa9"));
  EXPECT_TRUE(search("[^a-z]", "abc1"));
  EXPECT_FALSE(search("[^a-z]", "abc"));
  EXPECT_TRUE(search("[\\s\\S]", "x"));
  EXPECT_FALSE(search("[\\s\\S]", ""));
}

TEST(RegexCompiler, LengthBounds) {
  GrammarBuilder b;
  RegexExpr r = compile_regex(b, "^[a-z]{2,5}(x|yy)?$", CharEncoding::kUtf8, true);
  EXPECT_EQ(r.min_chars, 2u);
  EXPECT_EQ(r.max_chars, 7u);
  RegexExpr s = compile_regex(b, "ab", CharEncoding::kUtf8, true);
  EXPECT_EQ(s.max_chars, kUnbounded);
}

TEST(RegexCompiler, JsonStringEncoding) {
  GrammarBuilder b;
  RegexExpr r = compile_regex(b, "^a.\"\\\\$", CharEncoding::kJsonString, true);
  auto g = b.build(b.rule("s", r.expr));
  EXPECT_TRUE(ByteMatcher::matches(g, "a\\t\\\"\\\\"));   // a<TAB>"\  escaped
  EXPECT_TRUE(ByteMatcher::matches(g, "a\\u0001\\\"\\\\"));
  EXPECT_FALSE(ByteMatcher::matches(g, "a\t\\\"\\\\"));   // raw control char is not JSON
  EXPECT_FALSE(ByteMatcher::matches(g, "a\\u0009\\\"\\\\"));  // tab has the short form
}

void expect_error(std::string_view pattern, ErrorCode code, std::string_view needle) {
  try {
    compile_regex_grammar(pattern, true);
    ADD_FAILURE() << "no error for " << pattern;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RegexCompiler, UnsupportedConstructsAreTypedErrors) {
  expect_error("(a)\\1", ErrorCode::kUnsupported, "backreference at offset 3");
  expect_error("a(?=b)", ErrorCode::kUnsupported, "lookaround assertion at offset 1");
  expect_error("(?<!a)b", ErrorCode::kUnsupported, "lookaround");
  expect_error("\\bword", ErrorCode::kUnsupported, "word boundary");
  expect_error("\\p{L}", ErrorCode::kUnsupported, "Unicode property");
  expect_error("a(^b)", ErrorCode::kUnsupported, "anchor ^");
  expect_error("a{1,200000}", ErrorCode::kUnsupported, "repetition count");
}

TEST(RegexCompiler, SyntaxErrorsAreTypedErrors) {
  expect_error("(ab", ErrorCode::kInvalidArgument, "unterminated group at offset 0");
  expect_error("ab)", ErrorCode::kInvalidArgument, "unmatched ')'");
  expect_error("*a", ErrorCode::kInvalidArgument, "nothing to repeat");
  expect_error("[b-a]", ErrorCode::kInvalidArgument, "out of order");
  expect_error("[ab", ErrorCode::kInvalidArgument, "unterminated character class");
  expect_error("a**", ErrorCode::kInvalidArgument, "nothing to repeat");
  expect_error("\\", ErrorCode::kInvalidArgument, "trailing backslash");
  expect_error(std::string(300, '('), ErrorCode::kUnsupported, "nesting");
}

}  // namespace
}  // namespace afm::guided
