// The regular layer (code_point_dfa.h) against an independent oracle: the regex compiler's
// Earley grammar (regex_compiler.h) decides membership of every probe string; the automaton,
// its minimised form and its lowered grammar must agree. Set operations are checked string by
// string against their definitions.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/code_point_dfa.h"
#include "guided/regex_compiler.h"

namespace afm::guided {
namespace {

// Probe strings over a small alphabet that the patterns below care about, including a
// two-byte and a four-byte character and a newline ('.' excludes it).
std::vector<std::string> probes(uint32_t seed, int count) {
  static const std::vector<std::string> kAlphabet = {"a", "b", "c", "0", "7", "-", ".", "@",
                                                     "_", "\n", "é", "😀", "A", "z", " "};
  std::mt19937 rng(seed);
  std::vector<std::string> out = {""};
  for (const std::string& c : kAlphabet) out.push_back(c);
  for (int i = 0; i < count; ++i) {
    std::string s;
    const int len = static_cast<int>(rng() % 9);
    for (int k = 0; k < len; ++k) s += kAlphabet[rng() % (k % 3 == 0 ? kAlphabet.size() : 6)];
    out.push_back(s);
  }
  return out;
}

const std::vector<std::string> kPatterns = {
    "^[a-c]+$",        "a",           "^a*b?$",         "^(ab|c)*$",      "[0-9]{2,3}",
    "^\\d+-\\d+$",     "^$",          ".",              "^.{2}$",         "^[^a]*$",
    "^(a|b)+c?$",      "x|^a.*7$",    "^\\w+@\\w+$",    "^é|😀$",         "^[a-z][a-z0-9_-]{0,3}$",
    "^(a{2}){1,2}$",   "b.c",         "^(?:[ac]|0)+$",  "^\\S*$",         "^[.]+$",
};

TEST(CodePointDfa, RegexLanguageEqualsTheEarleyOracle) {
  for (bool search : {true, false}) {
    for (const std::string& pattern : kPatterns) {
      const CodePointDfa dfa = CodePointDfa::from_regex(pattern, search);
      const CodePointDfa min = dfa.minimized();
      EXPECT_LE(min.num_states(), dfa.num_states()) << pattern;
      auto oracle = compile_regex_grammar(pattern, search);
      GrammarBuilder b;
      auto lowered = b.build(b.rule("r", dfa.lower(b, CharEncoding::kUtf8)));
      for (const std::string& s : probes(7, 400)) {
        const bool want = ByteMatcher::matches(oracle, s);
        EXPECT_EQ(dfa.matches(s), want) << pattern << " search=" << search << " on '" << s << "'";
        EXPECT_EQ(min.matches(s), want) << pattern << " minimised, on '" << s << "'";
        EXPECT_EQ(ByteMatcher::matches(lowered, s), want) << pattern << " lowered, on '" << s << "'";
      }
    }
  }
}

// compile_regex_within with exact_only: where it answers, its language is the intersection of
// the pattern with the lengths, string for string (the automaton decides).
TEST(CodePointDfa, ExactBoundedRepetitionEqualsTheIntersection) {
  const std::vector<std::string> patterns = {"^[a-c]*$", "^a[0-9]+b$", "^(ab)*$", "^x?$",
                                             "7", "^[^a]{2,}$", "^(a|b)c*$", "^é*-$",
                                             "^[a-z]*[0-9]+$"};  // the last: two, refused
  size_t answered = 0;
  for (const std::string& pattern : patterns) {
    for (auto [lo, hi] : {std::pair{0u, 3u}, std::pair{2u, 5u}, std::pair{4u, 4u}, std::pair{1u, 9u}}) {
      GrammarBuilder b;
      const auto r = compile_regex_within(b, pattern, CharEncoding::kUtf8, true, lo, hi, true);
      if (!r) continue;
      ++answered;
      auto grammar = b.build(b.rule("r", r->expr));
      const CodePointDfa want = CodePointDfa::intersect(CodePointDfa::from_regex(pattern, true),
                                                        CodePointDfa::length_between(lo, hi));
      for (const std::string& s : probes(11, 300)) {
        EXPECT_EQ(ByteMatcher::matches(grammar, s), want.matches(s))
            << pattern << " within " << lo << ".." << hi << " on '" << s << "'";
      }
    }
  }
  EXPECT_GE(answered, 20u);
  GrammarBuilder b;
  EXPECT_FALSE(compile_regex_within(b, "^[a-z]*[0-9]+$", CharEncoding::kUtf8, true, 0, 9, true));
  EXPECT_FALSE(compile_regex_within(b, "^(a|bb)+$", CharEncoding::kUtf8, true, 0, 9, true));
  EXPECT_FALSE(compile_regex_within(b, "[0-9]", CharEncoding::kUtf8, true, 0, 9, true));
}

TEST(CodePointDfa, SetOperationsFollowTheirDefinitions) {
  for (size_t i = 0; i < kPatterns.size(); ++i) {
    const std::string& p = kPatterns[i];
    const std::string& q = kPatterns[(i * 7 + 3) % kPatterns.size()];
    const CodePointDfa a = CodePointDfa::from_regex(p, true);
    const CodePointDfa b = CodePointDfa::from_regex(q, false);
    const CodePointDfa not_a = a.complement();
    const CodePointDfa both = CodePointDfa::intersect(a, b);
    const CodePointDfa either = CodePointDfa::unite(a, b);
    const CodePointDfa a_minus_b = CodePointDfa::intersect(a, b.complement()).minimized();
    for (const std::string& s : probes(11, 300)) {
      const bool in_a = a.matches(s), in_b = b.matches(s);
      EXPECT_EQ(not_a.matches(s), !in_a) << p << " on '" << s << "'";
      EXPECT_EQ(both.matches(s), in_a && in_b) << p << " & " << q << " on '" << s << "'";
      EXPECT_EQ(either.matches(s), in_a || in_b) << p << " | " << q << " on '" << s << "'";
      EXPECT_EQ(a_minus_b.matches(s), in_a && !in_b) << p << " - " << q << " on '" << s << "'";
    }
  }
}

TEST(CodePointDfa, ComplementNeverAdmitsSurrogatesOrInvalidText) {
  const CodePointDfa none = CodePointDfa::nothing().complement();
  EXPECT_TRUE(none.matches(""));
  EXPECT_TRUE(none.matches("any text \xF4\x8F\xBF\xBF"));      // U+10FFFF
  EXPECT_FALSE(none.matches("\xED\xA0\x80"));                   // an encoded surrogate
  EXPECT_FALSE(none.matches("\xC3"));                           // truncated UTF-8
  GrammarBuilder b;
  auto g = b.build(b.rule("r", none.lower(b, CharEncoding::kUtf8)));
  EXPECT_FALSE(ByteMatcher::matches(g, "\xED\xA0\x80"));
  EXPECT_TRUE(ByteMatcher::matches(g, "\xEE\x80\x80"));         // U+E000
}

TEST(CodePointDfa, FiniteSetsLengthsAndEmptiness) {
  const CodePointDfa names = CodePointDfa::from_strings({"id", "idé", "name", ""});
  EXPECT_TRUE(names.matches("idé"));
  EXPECT_TRUE(names.matches(""));
  EXPECT_FALSE(names.matches("i"));
  EXPECT_EQ(names.length_range(), (std::pair<uint32_t, uint32_t>{0, 4}));
  const CodePointDfa others = names.complement();
  EXPECT_TRUE(others.matches("i"));
  EXPECT_FALSE(others.matches("name"));
  const CodePointDfa short_words = CodePointDfa::length_between(2, 3);
  EXPECT_TRUE(short_words.matches("😀é"));
  EXPECT_FALSE(short_words.matches("abcd"));
  EXPECT_EQ(short_words.length_range(), (std::pair<uint32_t, uint32_t>{2, 3}));
  EXPECT_EQ(CodePointDfa::everything().length_range(), (std::pair<uint32_t, uint32_t>{0, kUnbounded}));
  EXPECT_TRUE(CodePointDfa::intersect(CodePointDfa::from_regex("^[a-z]+$", false),
                                      CodePointDfa::from_regex("[0-9]", true))
                  .empty());
  EXPECT_FALSE(CodePointDfa::from_regex("^a+$", false).empty());
  EXPECT_TRUE(CodePointDfa::nothing().empty());
  const CodePointDfa bounded = CodePointDfa::intersect(CodePointDfa::from_regex("^[a-z]+\\d*$", false),
                                                       CodePointDfa::length_between(3, 5));
  EXPECT_EQ(bounded.length_range(), (std::pair<uint32_t, uint32_t>{3, 5}));
  EXPECT_TRUE(bounded.matches("ab12"));
  EXPECT_FALSE(bounded.matches("ab123x"));
  EXPECT_FALSE(bounded.matches("ab"));
}

TEST(CodePointDfa, MinimisationFindsTheSmallestAutomaton) {
  // (a|b)*a(a|b): the textbook case, 4 states once minimised (+ none dead, as they are trimmed).
  EXPECT_EQ(CodePointDfa::from_regex("^(a|b)*a(a|b)$", false).minimized().num_states(), 4u);
  // Equal languages written differently minimise to equal sizes.
  EXPECT_EQ(CodePointDfa::from_regex("^a+$", false).minimized().num_states(),
            CodePointDfa::from_regex("^aa*$", false).minimized().num_states());
  EXPECT_EQ(CodePointDfa::from_regex("^[a-z]*$", false).minimized().num_atoms(), 5u);
}

TEST(CodePointDfa, BudgetsAreTypedErrors) {
  try {
    CodePointDfa::from_regex("^(a|b)*a(a|b){30}$", false, 1000);  // 2^31 subsets
    FAIL() << "expected the state budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("budget: automaton states"), std::string::npos);
  }
  EXPECT_THROW(CodePointDfa::length_between(0, 100000, 1000), Error);
  EXPECT_THROW(CodePointDfa::from_regex("(?=a)", true), Error);  // lookahead: unsupported
  EXPECT_THROW(CodePointDfa::from_regex("a^b", true), Error);    // anchor inside
}

}  // namespace
}  // namespace afm::guided
