// Regex subset -> grammar: features, search vs full match, UTF-8, JSON encoding, errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/code_point_dfa.h"
#include "guided/regex_compiler.h"
#include "guided/regex_parser.h"

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

TEST(RegexCompiler, UnicodePropertyEscapes) {
  EXPECT_TRUE(full("\\p{L}+", "\xc3\xa9" "A" "\xe4\xb8\xad"));  // é A 中
  EXPECT_FALSE(full("\\p{L}", "1"));
  EXPECT_TRUE(full("\\p{Lu}\\p{Ll}", "Ab"));
  EXPECT_FALSE(full("\\p{Lu}", "a"));
  EXPECT_TRUE(full("\\p{N}", "\xd9\xa3"));  // ARABIC-INDIC DIGIT THREE
  EXPECT_TRUE(full("\\p{Letter}\\p{gc=Nd}\\p{General_Category=Space_Separator}", "x5 "));
  EXPECT_TRUE(full("[\\p{L}\\p{N}_-]+", "a_1-\xc3\x9f"));
  EXPECT_TRUE(full("\\p{ASCII}", "\x7f"));
  EXPECT_FALSE(full("\\p{ASCII}", "\xc3\xa9"));
  EXPECT_TRUE(full("\\P{L}", "1"));
  EXPECT_FALSE(full("\\P{L}", "a"));
  EXPECT_TRUE(full("[^\\p{L}]", "1"));
  EXPECT_FALSE(full("[^\\p{L}]", "a"));
  // U+0378 is unassigned in every version so far, and a later one may make it a letter: no
  // negated property promises it.
  EXPECT_FALSE(full("\\P{L}", "\xcd\xb8"));
  EXPECT_FALSE(full("[^\\p{L}]", "\xcd\xb8"));
  EXPECT_FALSE(full("\\p{C}", "\xcd\xb8"));
  EXPECT_TRUE(full("[^a]", "\xcd\xb8"));  // without a property, [^..] is as before
  EXPECT_TRUE(full("[\\p{L}-z]+", "a-z"));  // a property ends no range: the dash is literal
}

TEST(RegexCompiler, OpeningLookaheadsIntersectTheBranch) {
  EXPECT_TRUE(search("^(?!aws:)[a-z:]+$", "awsx:"));
  EXPECT_FALSE(search("^(?!aws:)[a-z:]+$", "aws:x"));
  EXPECT_TRUE(search("^(?=.*[a-z])(?=.*[0-9])[a-z0-9]{4,8}$", "ab12"));
  EXPECT_FALSE(search("^(?=.*[a-z])(?=.*[0-9])[a-z0-9]{4,8}$", "abcd"));
  EXPECT_FALSE(search("^(?=^[a-z]+$).{2,4}$", "a1"));
  EXPECT_TRUE(search("^(?=^[a-z]+$).{2,4}$", "ab"));
  EXPECT_TRUE(full("(?!ab)[a-c]{2}", "ac"));  // a full match is anchored anyway
  EXPECT_FALSE(full("(?!ab)[a-c]{2}", "ab"));
  EXPECT_TRUE(search("^(?!a(?!b))\\w+", "abc"));  // nested, after a fixed part of its own
  EXPECT_FALSE(search("^(?!a(?!b))\\w+", "ac"));
  EXPECT_FALSE(search("^(?!a(?!b))\\w+", "a"));
  EXPECT_TRUE(search("^a(?=^a)|b", "b"));  // ^ inside a lookahead past the start: never
  EXPECT_FALSE(search("^a(?=^a)|b", "aa"));
  EXPECT_TRUE(search("^(?!(?=a)..)\\w+", "b"));  // a nested lookahead, opening its branch
  EXPECT_FALSE(search("^(?!(?=a)..)\\w+", "ab"));
  EXPECT_TRUE(search("^(?!(?=a)..)\\w+", "a"));
  EXPECT_TRUE(search("^(?!x)a|b$", "xb"));  // only its own branch is constrained
  // After parts of fixed length, a lookahead looks from there.
  EXPECT_TRUE(search("^[a-z](?!.*--)[a-z0-9-]*$", "a-b-c"));
  EXPECT_FALSE(search("^[a-z](?!.*--)[a-z0-9-]*$", "ab--c"));
  EXPECT_FALSE(search("^[a-z](?!.*--)[a-z0-9-]*$", "--"));
  EXPECT_TRUE(search("^(ab|cd)(?=x)..$", "abxy"));
  EXPECT_FALSE(search("^(ab|cd)(?=x)..$", "abyx"));
  // (?![\s\S]) closing a branch is $; (?!.) is not (. leaves out line terminators).
  EXPECT_TRUE(search("^a*(?![\\s\\S])", "aa"));
  EXPECT_FALSE(search("^a*(?![\\s\\S])", "aab"));
  EXPECT_TRUE(search("^a*(?![^])", "a"));
  // Into JSON string content too (the schema compiler's encoding).
  GrammarBuilder b;
  RegexExpr r = compile_regex(b, "^(?!a)[a\"]{2}$", CharEncoding::kJsonString, true);
  EXPECT_EQ(r.min_chars, 2u);
  EXPECT_EQ(r.max_chars, 2u);
  auto g = b.build(b.rule("s", r.expr));
  EXPECT_TRUE(ByteMatcher::matches(g, "\\\"a"));
  EXPECT_FALSE(ByteMatcher::matches(g, "a\\\""));
}

// Verdicts of an ECMA-262 engine (tests/oracle/make_regex_ecma_cases.py) on patterns with
// property escapes and lookaheads: the grammar and the automaton must agree with every one.
TEST(RegexCompiler, PropertiesAndLookaheadsEqualAnEcmaEngine) {
  const char* root = std::getenv("AFM_SOURCE_DIR");
  std::ifstream in(std::filesystem::path(root ? root : ".") / "tests/data/guided/regex_ecma_cases.json");
  ASSERT_TRUE(in) << "set AFM_SOURCE_DIR to the repository";
  const auto doc = nlohmann::json::parse(in);
  size_t checked = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string pattern = c.at("pattern");
    auto grammar = compile_regex_grammar(pattern, /*search=*/true);
    const CodePointDfa dfa = CodePointDfa::from_regex(pattern, /*search=*/true);
    for (const auto& [key, want] : {std::pair{"matches", true}, std::pair{"rejects", false}}) {
      for (const std::string s : c.at(key)) {
        EXPECT_EQ(ByteMatcher::matches(grammar, s), want) << pattern << " on '" << s << "'";
        EXPECT_EQ(dfa.matches(s), want) << pattern << " (automaton) on '" << s << "'";
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 6000u);
}

TEST(RegexCompiler, AnchorsInsideEdgeGroups) {
  // Every alternative of the opening group anchored: the branch is.
  EXPECT_TRUE(search("(^arn:\\w+$)|(^alias/\\S+$)$", "alias/x"));
  EXPECT_FALSE(search("(^arn:\\w+$)|(^alias/\\S+$)$", "my alias/x"));
  EXPECT_FALSE(search("(^arn:\\w+$)|(^alias/\\S+$)$", "arn:x y"));
  // An anchored branch's edge holds them anyway.
  EXPECT_TRUE(search("^(^a|b)c", "bc"));
  EXPECT_FALSE(search("^(^a|b)c", "xbc"));
  EXPECT_TRUE(search("^((^a)|b)c", "ac"));
  EXPECT_TRUE(full("(^a|b$)", "b"));
  // Mixed alternatives in a searched branch stay unsupported.
  EXPECT_THROW(compile_regex_grammar("(^a|b)c", true), Error);
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

// Repeated alternatives are one alternative (A|A is A), and a searched branch that matches the
// empty string makes the pattern match every string: neither may cost Earley items per copy.
// Found by guided_mask_fuzz, where a hundred empty alternatives made each byte step ~1,800 items.
TEST(RegexCompiler, RepeatedAndEverythingAlternativesKeepTheSetsSmall) {
  const std::string empties(100, '|');
  const auto set_size = [](std::string_view pattern, bool searched, std::string_view text) {
    ByteMatcher m(compile_regex_grammar(pattern, searched));
    EXPECT_TRUE(m.accept_bytes(text)) << pattern;
    return m.current_set_size();
  };
  EXPECT_EQ(set_size("^" + empties + "G+|[a-z]{4,9}", true, "GGxab"), set_size("", true, "GGxab"));
  EXPECT_EQ(set_size("^(a|a|a|a|b|a|b)+$", false, "abba"), set_size("^(a|b)+$", false, "abba"));
  std::string many = "^(?:";
  for (int i = 0; i < 100; ++i) many += i == 0 ? "x[0-9]" : "|x[0-9]";
  EXPECT_EQ(set_size(many + ")*$", false, "x1x2"), set_size("^(?:x[0-9])*$", false, "x1x2"));
  EXPECT_EQ(regex::parse("a|a|(b|b)|a").kids.size(), 2u);
  // The languages are unchanged.
  EXPECT_TRUE(search("^" + empties + "G", "anything"));
  EXPECT_TRUE(search("|x", ""));
  EXPECT_TRUE(full("a|a|b", "a"));
  EXPECT_TRUE(full("a|a|b", "b"));
  EXPECT_FALSE(full("a|a|b", "c"));
  EXPECT_TRUE(full("(?:ab|ab|a)c", "ac"));
  EXPECT_FALSE(search("^(?:q|q)$", "qq"));
}

// Patterns whose rules would be ambiguous (a searched branch, a loop inside a repetition, two
// unbounded parts side by side) go
// through their automaton (regex_ambiguity.h): the Earley set after 4,000 bytes is the set after
// 400, where the rules grew it with the text (`(.*a){20}` took 33 s over 800 bytes). Bounded
// repetitions without a loop inside keep their rules. The languages are unchanged.
TEST(RegexCompiler, AmbiguousPatternsKeepTheSetsBounded) {
  const auto set_after = [](std::string_view pattern, bool searched, size_t n) {
    ByteMatcher m(compile_regex_grammar(pattern, searched));
    std::string text;
    for (size_t i = 0; i < n; ++i) text += i % 3 == 2 ? ',' : (i % 2 ? 'b' : 'a');
    EXPECT_TRUE(m.accept_bytes(text)) << pattern;
    return m.current_set_size();
  };
  for (const char* p : {"ab", "a.*b", "(.*a){20}", "(a.*b){3}", "^(a|ab|b|,)*(b|ba|,)*$",
                        "^(.*,)*(a|b)*$", "[a-z]+", "^.*.*.*$", "^[a-c,]*[a-z,]*$"}) {
    EXPECT_EQ(set_after(p, true, 4000), set_after(p, true, 400)) << p;
  }
  EXPECT_TRUE(search("ab", "xxabyy"));
  EXPECT_FALSE(search("ab", "xxa b"));
  EXPECT_TRUE(search("(.*a){3}", "xaxaxa"));
  EXPECT_FALSE(search("(.*a){3}", "xaxax"));
  EXPECT_TRUE(full("(a|ab)*(b|ba)*", "abba"));
  EXPECT_TRUE(full("(a|ab)*(b|ba)*", "aabbab"));  // a ab, then ba b
  EXPECT_FALSE(full("(a|ab)*(b|ba)*", "baa"));
  EXPECT_TRUE(full("(.*,)*x", "a,b,,x"));
  EXPECT_FALSE(full("(.*,)*x", "a,b,,"));
  EXPECT_TRUE(search("^(?:q|r)+$", "qrq"));
  EXPECT_TRUE(full("[a-c]*[a-z]*x", "abzx"));
  EXPECT_FALSE(full("[a-c]*[a-z]*x", "abz"));
}

TEST(RegexCompiler, LengthBounds) {
  GrammarBuilder b;
  RegexExpr r = compile_regex(b, "^[a-z]{2,5}(x|yy)?$", CharEncoding::kUtf8, true);
  EXPECT_EQ(r.min_chars, 2u);
  EXPECT_EQ(r.max_chars, 7u);
  RegexExpr s = compile_regex(b, "ab", CharEncoding::kUtf8, true);
  EXPECT_EQ(s.max_chars, kUnbounded);
}

// compile_regex_within: repetitions bounded so that every string fits the lengths.
bool within(std::string_view pattern, uint32_t lo, uint32_t hi, std::string_view text) {
  GrammarBuilder b;
  std::optional<RegexExpr> r = compile_regex_within(b, pattern, CharEncoding::kUtf8, true, lo, hi);
  if (!r) ADD_FAILURE() << pattern << " gave no language";
  return r && ByteMatcher::matches(b.build(b.rule("r", r->expr)), text);
}

TEST(RegexCompiler, WithinBoundsKeepsASubLanguageOfTheRightLengths) {
  // "arn:" [a-z]{0,k} ":" [0-9]{1,1+k} with 5 + 2k + 1 <= 20: k = 7.
  EXPECT_TRUE(within("^arn:[a-z]*:[0-9]+$", 0, 20, "arn:abcdefg:12345678"));
  EXPECT_TRUE(within("^arn:[a-z]*:[0-9]+$", 0, 20, "arn::1"));
  EXPECT_FALSE(within("^arn:[a-z]*:[0-9]+$", 0, 20, "arn:abcdefgh:1"));  // valid, but lost
  EXPECT_FALSE(within("^arn:[a-z]*:[0-9]+$", 0, 20, "arn:abc:x"));
  // Minimums rise as little as they must: [a-z]{3,5} exactly.
  EXPECT_FALSE(within("^[a-z]+$", 3, 5, "ab"));
  EXPECT_TRUE(within("^[a-z]+$", 3, 5, "abc"));
  EXPECT_TRUE(within("^[a-z]+$", 3, 5, "abcde"));
  EXPECT_FALSE(within("^[a-z]+$", 3, 5, "abcdef"));
  EXPECT_TRUE(within("^(ab)+c$", 4, 9, "ababc"));
  EXPECT_FALSE(within("^(ab)+c$", 4, 9, "abc"));
  EXPECT_FALSE(within("^(ab)+c$", 4, 9, "abababababc"));
  // Unanchored ends are searched: padding that counts. [0-9]+ searched is (not digit)* digit
  // any*, each repetition at most 4 long within 9 characters.
  EXPECT_TRUE(within("[0-9]+", 0, 9, "abcd1efgh"));
  EXPECT_FALSE(within("[0-9]+", 0, 9, "abcde1fgh"));  // valid, but lost
  EXPECT_FALSE(within("[0-9]+", 0, 9, "abcdefgh"));
  EXPECT_FALSE(within("[0-9]+", 0, 9, "1234567890"));
  EXPECT_TRUE(within("^ab|cd$", 0, 4, "abxy"));
  EXPECT_TRUE(within("^ab|cd$", 0, 4, "xycd"));
  EXPECT_FALSE(within("^ab|cd$", 0, 4, "abxyz"));
  EXPECT_TRUE(within("x*", 2, 3, "abc"));  // found in every string
  EXPECT_FALSE(within("x*", 2, 3, "a"));
  // Branches with lookaheads are left out; nothing left is no language.
  GrammarBuilder b;
  EXPECT_FALSE(compile_regex_within(b, "^(?!a)b+$", CharEncoding::kUtf8, true, 0, 9));
  EXPECT_FALSE(compile_regex_within(b, "^abc$", CharEncoding::kUtf8, true, 0, 2));
  EXPECT_FALSE(compile_regex_within(b, "^a{2}$", CharEncoding::kUtf8, true, 3, 9));
  const auto r = compile_regex_within(b, "^x[a-z]*$", CharEncoding::kUtf8, true, 2, 4000000000u);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->min_chars, 2u);
  EXPECT_EQ(r->max_chars, 4000000000u);
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

void expect_regex_error(std::string_view pattern, ErrorCode code, std::string_view needle) {
  try {
    compile_regex_grammar(pattern, true);
    ADD_FAILURE() << "no error for " << pattern;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RegexCompiler, UnsupportedConstructsAreTypedErrors) {
  expect_regex_error("(a)\\1", ErrorCode::kUnsupported, "backreference at offset 3");
  // A lookahead is supported only where it opens an anchored top-level branch.
  expect_regex_error("a(?=b)", ErrorCode::kUnsupported,
                     "lookahead that is not at a fixed position");
  expect_regex_error("(?=b)a", ErrorCode::kUnsupported,
                     "lookahead that is not at a fixed position");
  expect_regex_error("^a(?:(?!b)c)", ErrorCode::kUnsupported,
                     "lookahead that is not at a fixed position");
  expect_regex_error("^(?!a+(?!b))\\w+", ErrorCode::kUnsupported,
                     "lookahead that is not at a fixed position");
  expect_regex_error("^a+(?!b)", ErrorCode::kUnsupported,
                     "lookahead that is not at a fixed position");
  expect_regex_error("^a*(?!.)", ErrorCode::kUnsupported,
                     "lookahead that is not at a fixed position");
  expect_regex_error("(?<!a)b", ErrorCode::kUnsupported, "lookbehind");
  expect_regex_error("\\bword", ErrorCode::kUnsupported, "word boundary");
  expect_regex_error("\\p{Script=Greek}", ErrorCode::kUnsupported,
                     "Unicode property \\p{Script=Greek}");
  expect_regex_error("\\p{Greek}", ErrorCode::kUnsupported, "Unicode property");
  // Unassigned code points depend on the Unicode version (unicode_properties.h).
  expect_regex_error("\\p{Cn}", ErrorCode::kUnsupported, "Unicode property \\p{Cn}");
  expect_regex_error("a(^b)", ErrorCode::kUnsupported, "anchor ^");
  expect_regex_error("a{1,200000}", ErrorCode::kUnsupported, "repetition count");
}

TEST(RegexCompiler, SyntaxErrorsAreTypedErrors) {
  expect_regex_error("(ab", ErrorCode::kInvalidArgument, "unterminated group at offset 0");
  expect_regex_error("ab)", ErrorCode::kInvalidArgument, "unmatched ')'");
  expect_regex_error("*a", ErrorCode::kInvalidArgument, "nothing to repeat");
  expect_regex_error("[b-a]", ErrorCode::kInvalidArgument, "out of order");
  expect_regex_error("[ab", ErrorCode::kInvalidArgument, "unterminated character class");
  expect_regex_error("a**", ErrorCode::kInvalidArgument, "nothing to repeat");
  expect_regex_error("\\", ErrorCode::kInvalidArgument, "trailing backslash");
  expect_regex_error("\\pL", ErrorCode::kInvalidArgument, "\\p without {name}");
  expect_regex_error("\\p{L", ErrorCode::kInvalidArgument, "unterminated \\p{...}");
  expect_regex_error("^(?!a)*b", ErrorCode::kInvalidArgument, "quantifier on an assertion");
  expect_regex_error(std::string(300, '('), ErrorCode::kUnsupported, "nesting");
}

}  // namespace
}  // namespace afm::guided
