// GBNF grammar files: syntax features, matching, whole example grammars, and error messages
// with line:column. (tests/guided/gbnf_oracle_test.py checks the same grammars against
// llama.cpp's own parser.)
#include <gtest/gtest.h>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/gbnf_parser.h"

namespace afm::guided {
namespace {

bool match(std::string_view grammar, std::string_view text, std::string_view root = "root") {
  return ByteMatcher::matches(compile_gbnf(grammar, root), text);
}

// The error a grammar fails with ("" when it compiles), and its code.
std::string error_of(std::string_view grammar, ErrorCode* code = nullptr) {
  try {
    (void)compile_gbnf(grammar);
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

TEST(GuidedGbnf, LiteralsSequencesAlternatives) {
  const char* g = R"(root ::= "Answer: " ("yes" | "no") "!"?)";
  EXPECT_TRUE(match(g, "Answer: yes"));
  EXPECT_TRUE(match(g, "Answer: no!"));
  EXPECT_FALSE(match(g, "Answer: maybe"));
  EXPECT_FALSE(match(g, "Answer: yes!!"));
  EXPECT_TRUE(match(R"(root ::= | "a")", ""));  // empty alternative
  EXPECT_TRUE(match(R"(root ::= "")", ""));
  EXPECT_TRUE(match("root ::= \"a\"\n", "a"));
  EXPECT_TRUE(match("root::=\"a\"\"b\"", "ab"));  // no spaces needed
}

TEST(GuidedGbnf, ClassesAndEscapes) {
  EXPECT_TRUE(match("root ::= [a-c0-9_]+", "ab_09c"));
  EXPECT_FALSE(match("root ::= [a-c]+", "abd"));
  EXPECT_TRUE(match("root ::= [^\\n\"]+", "no newline"));
  EXPECT_FALSE(match("root ::= [^\\n]+", "a\nb"));
  EXPECT_TRUE(match("root ::= [-a]+ [a-]", "-a-a-"));  // '-' first or last is literal
  EXPECT_TRUE(match("root ::= [\\]\\[]+", "[]]["));
  EXPECT_TRUE(match("root ::= [a\\-z]+", "a-z"));  // an escaped - is literal
  EXPECT_TRUE(match(R"(root ::= "\x41\u00e9\U0001F600\t\r\n\\\"\[\]")",
                    "A\xc3\xa9\xf0\x9f\x98\x80\t\r\n\\\"[]"));
  EXPECT_TRUE(match(R"(root ::= "\xff")", "\xc3\xbf"));  // escapes name code points
  EXPECT_TRUE(match("root ::= [\xe3\x81\x81-\xe3\x82\x9f]+", "\xe3\x81\x82\xe3\x82\x93"));
  EXPECT_TRUE(match("root ::= \"h\xc3\xa9\" [\xc3\xa0-\xc3\xbf]", "h\xc3\xa9\xc3\xa8"));
  EXPECT_TRUE(match("root ::= [^a]", "\xf0\x9f\x98\x80"));  // negation: any other code point
  EXPECT_FALSE(match("root ::= [^a]", "\xed\xa0\x80"));     // never a surrogate
  EXPECT_TRUE(match("root ::= . . .", "a\xc3\xa9\n"));      // '.' is any code point
  EXPECT_FALSE(match("root ::= .", "\xc3"));
}

TEST(GuidedGbnf, Repetition) {
  EXPECT_TRUE(match("root ::= \"a\"*", ""));
  EXPECT_TRUE(match("root ::= \"ab\"+", "ababab"));
  EXPECT_FALSE(match("root ::= \"ab\"+", ""));
  EXPECT_TRUE(match("root ::= [0-9]{3}", "123"));
  EXPECT_FALSE(match("root ::= [0-9]{3}", "12"));
  EXPECT_TRUE(match("root ::= [0-9]{2,}", "12345"));
  EXPECT_FALSE(match("root ::= [0-9]{2,}", "1"));
  EXPECT_TRUE(match("root ::= [0-9]{1,3}", "999"));
  EXPECT_FALSE(match("root ::= [0-9]{1,3}", "9999"));
  EXPECT_TRUE(match("root ::= [0-9]{0,2}", ""));
  EXPECT_TRUE(match("root ::= [0-9]{ 1 , 2 }", "12"));  // spaces inside braces
  EXPECT_TRUE(match("root ::= (\"a\" \"b\"?){2}", "aba"));
  EXPECT_TRUE(match("root ::= \"a\"?*", "aaa"));  // postfix operators stack
  EXPECT_TRUE(match("root ::= \"x\"{100000}", std::string(100000, 'x')));
}

TEST(GuidedGbnf, RulesCommentsAndLayout) {
  const char* g = R"(# a list of items
root ::= item ("," ws item)*   # forward references are fine
item ::= [a-z]+ |
         [0-9]+                # '|' at a line end continues the rule
ws   ::= [ \t]*
unused ::= unused "never finishes, but nothing uses it"
)";
  EXPECT_TRUE(match(g, "ab, 12,c"));
  EXPECT_FALSE(match(g, "ab,,"));
  const char* continued = "root ::= \"a\"\n     | \"b\"\n\n# comment\n     | \"c\"\nx ::= \"x\"";
  EXPECT_TRUE(match(continued, "c"));
  const char* grouped = "root ::= (\n  \"a\"  # inside a group, lines continue\n  \"b\"\n)";
  EXPECT_TRUE(match(grouped, "ab"));
  EXPECT_TRUE(match("root ::= \"a\"\r\nother ::= \"b\"\r\n", "a"));
  EXPECT_TRUE(match("Root-2 ::= \"r\"\nstart ::= Root-2 Root-2", "rr", "start"));
}

TEST(GuidedGbnf, Recursion) {
  const char* parens = "root ::= \"(\" root \")\" root | \"\"";
  EXPECT_TRUE(match(parens, "(()())()"));
  EXPECT_FALSE(match(parens, "(()"));
  // Left recursion is fine for an Earley matcher (llama.cpp rejects it).
  const char* expr = R"g(root ::= expr
expr ::= expr ("+" | "-") term | term
term ::= term "*" factor | factor
factor ::= [0-9]+ | "(" expr ")")g";
  EXPECT_TRUE(match(expr, "1+2*(3-4)*5"));
  EXPECT_FALSE(match(expr, "1+*2"));
}

TEST(GuidedGbnf, JsonGrammar) {
  const char* json = R"g(
root   ::= value
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ws ":" ws value ws ("," ws string ws ":" ws value ws)* )? "}"
array  ::= "[" ws ( value ws ("," ws value ws)* )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\""
number ::= "-"? ([0-9] | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
ws     ::= [ \t\n\r]*
)g";
  auto grammar = compile_gbnf(json);
  for (const char* ok : {R"({"a": [1, -2.5e3, true, null], "b\"\u00e9": {}})", "[]", "0",
                         "\"\xc3\xa9\"", "{ \"k\" : \"v\" }"}) {
    EXPECT_TRUE(ByteMatcher::matches(grammar, ok)) << ok;
  }
  for (const char* bad : {"{", "[1,]", "01", "{\"a\" 1}", "\"\x01\"", "tru"}) {
    EXPECT_FALSE(ByteMatcher::matches(grammar, bad)) << bad;
  }
}

struct ErrorCase {
  const char* grammar;
  ErrorCode code;
  const char* message;  // a substring of the error
};

TEST(GuidedGbnf, ErrorsNameLineAndColumn) {
  const ErrorCase cases[] = {
      {"root ::= foo", ErrorCode::kInvalidArgument, "gbnf:1:10: undefined rule 'foo'"},
      {"root ::= \"a\"\nroot ::= \"b\"", ErrorCode::kInvalidArgument,
       "gbnf:2:1: rule 'root' is defined twice (first at line 1)"},
      {"other ::= \"a\"", ErrorCode::kInvalidArgument, "no rule named 'root'"},
      {"root = \"a\"", ErrorCode::kInvalidArgument, "gbnf:1:6: expected '::='"},
      {"root ::= \"abc", ErrorCode::kInvalidArgument, "gbnf:1:10: unterminated string"},
      {"root ::= [abc", ErrorCode::kInvalidArgument, "gbnf:1:10: unterminated character class"},
      {"root ::= (\"a\"\n  \"b\"", ErrorCode::kInvalidArgument, "gbnf:2:6: expected ')'"},
      {"root ::= \"a\")", ErrorCode::kInvalidArgument,
       "gbnf:1:13: expected a symbol, '|' or the end of the rule, got ')'"},
      {"root ::= my_rule", ErrorCode::kInvalidArgument, "gbnf:1:12: '_' is not allowed"},
      {"root ::= \"\\q\"", ErrorCode::kInvalidArgument, "gbnf:1:11: unknown escape '\\q'"},
      {"root ::= \"\\x4\"", ErrorCode::kInvalidArgument, "expected 2 hex digits after '\\x'"},
      {"root ::= \"\\uD800\"", ErrorCode::kInvalidArgument, "names no Unicode character"},
      {"root ::= [z-a]", ErrorCode::kInvalidArgument, "gbnf:1:11: character range out of order"},
      {"root ::= \"a\"{3,2}", ErrorCode::kInvalidArgument, "n smaller than m"},
      {"root ::= \"a\"{,2}", ErrorCode::kInvalidArgument, "gbnf:1:14: expected a number"},
      {"root ::= \"a\"{2", ErrorCode::kInvalidArgument, "expected '}'"},
      {"root ::= * \"a\"", ErrorCode::kInvalidArgument, "gbnf:1:10: '*' must follow a symbol"},
      {"root ::= \"a\" b ::= \"b\"", ErrorCode::kInvalidArgument,
       "gbnf:1:14: a rule definition ('b ::=') must start on a new line"},
      {"root ::= a\na ::= \"x\" a", ErrorCode::kInvalidArgument,
       "gbnf:2:1: rule 'a' can never finish"},
      {"root ::= \"x\" root", ErrorCode::kInvalidArgument, "rule 'root' can never finish"},
      {"root ::= \"\xff\"", ErrorCode::kInvalidArgument, "gbnf:1:11: invalid UTF-8"},
      {"root ::= <think>", ErrorCode::kUnsupported, "gbnf:1:10: token references"},
      {"root ::= \"a\"{100001}", ErrorCode::kUnsupported, "repetition count above 100000"},
      {"\n\n  ::= \"a\"", ErrorCode::kInvalidArgument, "gbnf:3:3: expected a rule name"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.grammar);
    ErrorCode code = ErrorCode::kInternal;
    const std::string message = error_of(c.grammar, &code);
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_EQ(code, c.code) << message;
  }
}

TEST(GuidedGbnf, UntrustedInputIsBounded) {
  ErrorCode code = ErrorCode::kInternal;
  EXPECT_NE(error_of("root ::= " + std::string(100000, '(') + "\"a\"", &code), "");
  EXPECT_EQ(code, ErrorCode::kUnsupported);
  EXPECT_NE(error_of("root ::= \"a\"" + std::string(100000, '*'), &code), "");
  EXPECT_EQ(code, ErrorCode::kUnsupported);
  EXPECT_TRUE(match("root ::= " + std::string(150, '(') + "\"a\"" + std::string(150, ')'), "a"));
  // A long chain of rules, each using the next one.
  std::string chain = "root ::= r0\n";
  for (int i = 0; i < 2000; ++i) {
    chain += "r" + std::to_string(i) + " ::= \"x\" r" + std::to_string(i + 1) + "\n";
  }
  chain += "r2000 ::= \"end\"\n";
  EXPECT_TRUE(match(chain, std::string(2000, 'x') + "end"));
}

TEST(GuidedGbnf, FragmentsInsideALargerGrammar) {
  GrammarBuilder b;
  const RuleId inner = add_gbnf_rules(b, "answer ::= (\"yes\" | \"no\")", "answer");
  const RuleId outer = b.rule("outer", b.seq({b.literal("<"), b.ref(inner), b.literal(">")}));
  auto grammar = b.build(outer);
  EXPECT_TRUE(ByteMatcher::matches(grammar, "<yes>"));
  EXPECT_FALSE(ByteMatcher::matches(grammar, "<maybe>"));
}

}  // namespace
}  // namespace afm::guided
