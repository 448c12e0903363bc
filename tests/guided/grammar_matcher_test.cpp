// Grammar IR and the Earley byte matcher: construction, recursion, repetition, rollback.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/grammar.h"
#include "guided/json_schema_compiler.h"

namespace afm::guided {
namespace {

std::shared_ptr<const Grammar> balanced_parens() {
  GrammarBuilder b;
  RuleId s = b.declare("s");  // s ::= ( "(" s ")" )*
  b.define(s, b.star(b.seq({b.literal("("), b.ref(s), b.literal(")")})));
  return b.build(s);
}

TEST(GrammarMatcher, LiteralAndAlternatives) {
  GrammarBuilder b;
  auto g = b.build(b.rule("root", b.alt({b.literal("true"), b.literal("false"), b.literal("t")})));
  EXPECT_TRUE(ByteMatcher::matches(g, "true"));
  EXPECT_TRUE(ByteMatcher::matches(g, "false"));
  EXPECT_TRUE(ByteMatcher::matches(g, "t"));
  EXPECT_FALSE(ByteMatcher::matches(g, "tru"));
  EXPECT_FALSE(ByteMatcher::matches(g, "truex"));
  EXPECT_FALSE(ByteMatcher::matches(g, ""));
}

TEST(GrammarMatcher, RecursionThroughRules) {
  auto g = balanced_parens();
  EXPECT_TRUE(ByteMatcher::matches(g, ""));
  EXPECT_TRUE(ByteMatcher::matches(g, "(()())()"));
  EXPECT_FALSE(ByteMatcher::matches(g, "(()"));
  EXPECT_FALSE(ByteMatcher::matches(g, "())"));
}

TEST(GrammarMatcher, BoundedRepetitionCountsExactly) {
  GrammarBuilder b;
  auto g = b.build(b.rule("r", b.repeat(b.byte_range('a', 'b'), 2, 4)));
  EXPECT_FALSE(ByteMatcher::matches(g, "a"));
  EXPECT_TRUE(ByteMatcher::matches(g, "ab"));
  EXPECT_TRUE(ByteMatcher::matches(g, "abba"));
  EXPECT_FALSE(ByteMatcher::matches(g, "abbab"));
}

TEST(GrammarMatcher, LongRepetitionStaysLinear) {
  GrammarBuilder b;
  auto g = b.build(b.rule("r", b.repeat(b.byte_range('a', 'z'), 0, 100000)));
  ByteMatcher m(g);
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(m.accept_byte('q'));
  EXPECT_TRUE(m.is_complete());
}

TEST(GrammarMatcher, NullableRepetitionOfNullable) {
  GrammarBuilder b;
  Expr maybe_a = b.optional(b.literal("a"));
  auto g = b.build(b.rule("r", b.seq({b.repeat(maybe_a, 2, 3), b.literal("b")})));
  EXPECT_TRUE(ByteMatcher::matches(g, "b"));
  EXPECT_TRUE(ByteMatcher::matches(g, "aaab"));
  EXPECT_FALSE(ByteMatcher::matches(g, "aaaab"));
}

// Repetitions of x?, x* and x+ keep their language, and a deep nest of them (what `x****` in
// a grammar file gives) keeps the Earley set the size of one repetition's.
TEST(GrammarMatcher, NestedRepetitionsKeepTheirLanguageAndStaySmall) {
  auto language = [](auto make) {
    GrammarBuilder b;
    auto g = b.build(b.rule("r", b.seq({make(b, b.literal("a")), b.literal("b")})));
    std::string out;
    for (int n = 0; n <= 6; ++n) {
      out += ByteMatcher::matches(g, std::string(static_cast<size_t>(n), 'a') + "b") ? '1' : '0';
    }
    return out;
  };
  using B = GrammarBuilder;
  EXPECT_EQ(language([](B& b, Expr x) { return b.repeat(b.optional(x), 2, 3); }), "1111000");
  EXPECT_EQ(language([](B& b, Expr x) { return b.repeat(b.optional(x), 2, kUnbounded); }),
            "1111111");
  EXPECT_EQ(language([](B& b, Expr x) { return b.repeat(b.star(x), 2, 3); }), "1111111");
  EXPECT_EQ(language([](B& b, Expr x) { return b.repeat(b.plus(x), 2, 3); }), "0011111");
  EXPECT_EQ(language([](B& b, Expr x) { return b.star(b.plus(x)); }), "1111111");
  EXPECT_EQ(language([](B& b, Expr x) { return b.plus(b.plus(x)); }), "0111111");
  EXPECT_EQ(language([](B& b, Expr x) { return b.repeat(b.repeat(x, 2, 3), 1, 2); }), "0011111");
  GrammarBuilder fb, nb;
  ByteMatcher flat(fb.build(fb.rule("r", fb.star(fb.literal("a")))));
  Expr nested = nb.literal("a");
  for (int i = 0; i < 140; ++i) nested = i % 2 ? nb.star(nested) : nb.plus(nested);
  ByteMatcher deep(nb.build(nb.rule("r", nested)));
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(flat.accept_byte('a'));
    ASSERT_TRUE(deep.accept_byte('a'));
  }
  EXPECT_EQ(deep.current_set_size(), flat.current_set_size());
}

// Leo's rule: a right-recursive (right-linear) grammar, as the regular layer's automata lower
// to, keeps its Earley sets and its state keys the same size however much was read, even
// where every position may end the text (a nullable tail).
TEST(GrammarMatcher, RightRecursionCostsTheSameAtEveryLength) {
  GrammarBuilder b;
  RuleId even = b.declare("even"), odd = b.declare("odd");  // "a" pairs then "b" or the end
  b.define(even, b.alt({b.empty(), b.literal("b"), b.seq({b.literal("a"), b.ref(odd)})}));
  b.define(odd, b.seq({b.literal("a"), b.ref(even)}));
  RuleId root = b.rule("root", b.seq({b.literal("<"), b.ref(even), b.literal(">")}));
  auto g = b.build(root);
  ByteMatcher m(g);
  ASSERT_TRUE(m.accept_byte('<'));
  std::vector<uint32_t> key_at_10, key_at_1000, key;
  size_t size_at_10 = 0;
  for (int i = 1; i <= 1000; ++i) {
    ASSERT_TRUE(m.accept_byte('a'));
    if (i == 10) {
      size_at_10 = m.current_set_size();
      m.state_key(&key_at_10);
    }
  }
  EXPECT_EQ(m.current_set_size(), size_at_10);
  m.state_key(&key_at_1000);
  EXPECT_EQ(key_at_1000, key_at_10);
  ByteMatcher odd_step = m;
  ASSERT_TRUE(odd_step.accept_byte('a'));
  odd_step.state_key(&key);
  EXPECT_NE(key, key_at_10);  // an odd count cannot end: another state
  EXPECT_FALSE(odd_step.accept_byte('>'));
  ASSERT_TRUE(m.accept_bytes("b>"));
  EXPECT_TRUE(m.is_complete());
  EXPECT_TRUE(ByteMatcher::matches(g, "<aaaa>"));
  EXPECT_FALSE(ByteMatcher::matches(g, "<aaa>"));
  EXPECT_FALSE(ByteMatcher::matches(g, "<aaab>"));
  EXPECT_TRUE(ByteMatcher::matches(g, "<aab>"));
}

TEST(GrammarMatcher, RejectLeavesStateAndRollbackRestores) {
  auto g = balanced_parens();
  ByteMatcher m(g);
  ASSERT_TRUE(m.accept_bytes("(("));
  EXPECT_FALSE(m.accept_byte('x'));
  EXPECT_EQ(m.consumed(), 2u);
  ASSERT_TRUE(m.accept_bytes("))"));
  EXPECT_TRUE(m.is_complete());
  m.rollback(3);
  EXPECT_EQ(m.consumed(), 1u);
  EXPECT_FALSE(m.is_complete());
  EXPECT_TRUE(m.accept_byte(')'));
  EXPECT_TRUE(m.is_complete());
  EXPECT_FALSE(m.accept_bytes("()x"));
  EXPECT_EQ(m.consumed(), 2u);
}

TEST(GrammarMatcher, AllowedNextBytes) {
  GrammarBuilder b;
  auto g = b.build(b.rule("r", b.alt({b.literal("ab"), b.literal("ac"), b.literal("d")})));
  ByteMatcher m(g);
  ByteSet first = m.allowed_next_bytes();
  EXPECT_EQ(first.count(), 2);
  EXPECT_TRUE(first.test('a'));
  EXPECT_TRUE(first.test('d'));
  ASSERT_TRUE(m.accept_byte('a'));
  ByteSet second = m.allowed_next_bytes();
  EXPECT_EQ(second.count(), 2);
  EXPECT_TRUE(second.test('b') && second.test('c'));
  ASSERT_TRUE(m.accept_byte('c'));
  EXPECT_TRUE(m.allowed_next_bytes().empty());
  EXPECT_TRUE(m.is_complete());
}

TEST(GrammarMatcher, DeadBranchesArePrunedSoNoPrefixIsADeadEnd) {
  GrammarBuilder b;
  RuleId loop = b.declare("loop");  // loop ::= "x" loop   (derives no finite string)
  b.define(loop, b.seq({b.literal("x"), b.ref(loop)}));
  auto g = b.build(b.rule("r", b.alt({b.ref(loop), b.literal("y"), b.nothing()})));
  ByteMatcher m(g);
  ByteSet allowed = m.allowed_next_bytes();
  EXPECT_EQ(allowed.count(), 1);
  EXPECT_TRUE(allowed.test('y'));
}

TEST(GrammarMatcher, EmptyLanguage) {
  GrammarBuilder b;
  auto g = b.build(b.rule("r", b.nothing()));
  EXPECT_TRUE(g->empty_language());
  ByteMatcher m(g);
  EXPECT_TRUE(m.allowed_next_bytes().empty());
  EXPECT_FALSE(m.is_complete());
}

TEST(GrammarMatcher, CopiesAreIndependent) {
  auto g = balanced_parens();
  ByteMatcher a(g);
  ASSERT_TRUE(a.accept_byte('('));
  ByteMatcher b = a;
  ASSERT_TRUE(b.accept_byte(')'));
  EXPECT_TRUE(b.is_complete());
  EXPECT_FALSE(a.is_complete());
}

TEST(GrammarMatcher, BuilderLimitIsATypedError) {
  GrammarBuilder b(8);
  for (int i = 0; i < 8; ++i) b.literal("a");
  EXPECT_THROW(b.literal("b"), Error);
}

}  // namespace
}  // namespace afm::guided

namespace afm::guided {
namespace {

std::vector<uint32_t> key_after(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  ByteMatcher m(g);
  EXPECT_TRUE(m.accept_bytes(text)) << text;
  std::vector<uint32_t> key;
  m.state_key(&key);
  return key;
}

// State keys name items by what is left of them and skip nodes that only pass a completion on,
// so the middle of a UTF-8 character is one state whichever character it is part of (the mask
// layer's loops then have the same shape everywhere), while states with different futures keep
// different keys.
TEST(GrammarMatcher, ByteSetOperations) {
  ByteSet a, b;
  a.set_range('a', 'z');
  b.set_range('x', 0x90);
  EXPECT_EQ((a & b).count(), 3);  // x y z
  EXPECT_EQ((a - b).count(), 23);
  EXPECT_EQ((a & b).lowest(), 'x');
  EXPECT_EQ(ByteSet().lowest(), 256);
  std::vector<int> seen;
  b.for_each([&](uint8_t byte) { seen.push_back(byte); });
  ASSERT_EQ(seen.size(), static_cast<size_t>(b.count()));
  EXPECT_EQ(seen.front(), 'x');
  EXPECT_EQ(seen.back(), 0x90);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

// byte_classes() partitions the allowed bytes (by lowest byte), and every byte of a class leads
// to the same state: the mask cache computes one successor per class.
void expect_classes_partition(ByteMatcher& m) {
  const std::vector<ByteSet> classes = m.byte_classes();
  ByteSet all;
  int total = 0;
  for (size_t k = 0; k < classes.size(); ++k) {
    ASSERT_FALSE(classes[k].empty());
    if (k > 0) EXPECT_LT(classes[k - 1].lowest(), classes[k].lowest());
    all |= classes[k];
    total += classes[k].count();
    std::vector<uint32_t> first_key, key;
    classes[k].for_each([&](uint8_t byte) {
      ASSERT_TRUE(m.accept_byte(byte));
      m.state_key(first_key.empty() ? &first_key : &key);
      m.rollback(1);
      if (!key.empty()) EXPECT_EQ(key, first_key) << "byte " << int{byte};
    });
  }
  EXPECT_EQ(total, all.count());  // disjoint
  EXPECT_EQ(all, m.allowed_next_bytes());
}

TEST(GrammarMatcher, ByteClassesPartitionTheAllowedBytes) {
  ByteMatcher json(compile_json_schema_text(
      R"({"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}}})"));
  expect_classes_partition(json);  // before the object
  ASSERT_TRUE(json.accept_bytes("{\"n"));
  expect_classes_partition(json);  // a declared name's prefix or any other key
  ASSERT_TRUE(json.accept_bytes("a\":\"x\xc3"));
  expect_classes_partition(json);  // inside a character of a string
  // More distinct terminals than fit one 64-bit signature (the old limit).
  GrammarBuilder b;
  std::vector<Expr> options;
  for (int c = 1; c <= 120; ++c) {
    options.push_back(b.seq({b.literal(std::string(1, static_cast<char>(c))),
                             b.literal(std::string(static_cast<size_t>(c % 3 + 1), 'z'))}));
  }
  ByteMatcher wide(b.build(b.rule("root", b.alt(std::move(options)))));
  EXPECT_EQ(wide.byte_classes().size(), 120u);
  expect_classes_partition(wide);
}

TEST(GrammarMatcher, StateKeysIdentifyEquivalentStates) {
  const auto g = compile_json_schema_text(R"({"type":"string"})");
  EXPECT_EQ(key_after(g, "\"\xc3"), key_after(g, "\"\xe0\xa0"));          // one byte left
  EXPECT_EQ(key_after(g, "\"\xe1"), key_after(g, "\"\xf0\x90"));          // two left
  EXPECT_EQ(key_after(g, "\"\xc3\xa9"), key_after(g, "\"ab"));             // back to content
  EXPECT_EQ(key_after(g, "\"a\\n"), key_after(g, "\"a"));                 // after an escape
  EXPECT_NE(key_after(g, "\"\xc3"), key_after(g, "\"\xe1"));
  EXPECT_NE(key_after(g, "\"\xe0"), key_after(g, "\"\xe1"));   // E0 needs A0-BF next
  EXPECT_NE(key_after(g, "\"a"), key_after(g, "\"a\\"));
  EXPECT_NE(key_after(g, "\"a\\u00"), key_after(g, "\"a\\u001"));
  // One repetition entered at many positions is one state (a bounded key).
  const auto list = compile_json_schema_text(R"({"type":"array","items":{"type":"array"}})");
  EXPECT_EQ(key_after(list, "[[],[],[],["), key_after(list, "[[],["));
  // Two repetitions with equal counts left but different bodies: after the escape completes,
  // the first is at its inner bound (then '-' or '&'), the second has characters to go.
  const auto nested =
      compile_json_schema_text(R"({"type":"string","pattern":"^[a-z]{2,9}(-[a-z0-y]{1,5}){0,3}&"})");
  EXPECT_NE(key_after(nested, "\"byk-0000\\"), key_after(nested, "\"byk-0GANS-aPJLR-0i\\"));
}

// Nesting thousands deep must not exhaust the stack while keying the state; such a state is
// given a key of its own (correct, just never shared).
TEST(GrammarMatcher, DeepNestingGetsAUniqueKey) {
  GrammarBuilder b;
  RuleId s = b.declare("s");  // s ::= "[" s? "]"
  b.define(s, b.seq({b.literal("["), b.optional(b.ref(s)), b.literal("]")}));
  ByteMatcher m(b.build(s));
  ASSERT_TRUE(m.accept_bytes(std::string(20000, '[')));
  std::vector<uint32_t> first, second;
  m.state_key(&first);
  m.state_key(&second);
  EXPECT_NE(first, second);
  ASSERT_TRUE(m.accept_bytes(std::string(20000, ']')));
  EXPECT_TRUE(m.is_complete());
}

}  // namespace
}  // namespace afm::guided
