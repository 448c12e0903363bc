// multipleOf with decimal divisors and bounds (number_multiples.cpp), against exact integer
// arithmetic on every canonical numeral of a range: the grammar must accept a numeral exactly
// when its value is a multiple within the bounds and it has no more fraction digits than the
// divisor (none for integers).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"

namespace afm::guided {
namespace {

constexpr int64_t kScale = 1000;  // values are checked as integers times 10^-3

struct Case {
  const char* schema;
  int64_t multiple;  // scaled
  int frac_max;      // fraction digits the grammar may write
  std::optional<int64_t> lo, hi;
  bool lo_inclusive = true, hi_inclusive = true;
};

// Every canonical numeral with integer part 0 .. max_int (and a few longer ones) and up to
// two fraction digits, both signs: text and scaled value.
std::vector<std::pair<std::string, int64_t>> numerals(int64_t max_int) {
  std::vector<int64_t> ints;
  for (int64_t i = 0; i <= max_int; ++i) ints.push_back(i);
  for (int64_t i : {996, 1000, 1001, 1200, 9996, 10000, 12345}) ints.push_back(i);
  std::vector<std::pair<std::string, int64_t>> out;
  for (int64_t i : ints) {
    std::vector<std::pair<std::string, int64_t>> fracs{{"", 0}};
    for (int d = 1; d <= 9; ++d) fracs.push_back({"." + std::to_string(d), d * 100});
    for (int d = 1; d <= 99; ++d) {
      if (d % 10 == 0) continue;  // trailing zero: not canonical
      fracs.push_back({std::string(".") + char('0' + d / 10) + char('0' + d % 10), d * 10});
    }
    for (const auto& [f, fv] : fracs) {
      const int64_t v = i * kScale + fv;
      out.push_back({std::to_string(i) + f, v});
      if (v != 0) out.push_back({"-" + std::to_string(i) + f, -v});
    }
  }
  return out;
}

int frac_digits(const std::string& text) {
  const size_t dot = text.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
}

bool expected(const Case& c, const std::string& text, int64_t v) {
  if (frac_digits(text) > c.frac_max) return false;
  if (v % c.multiple != 0) return false;
  if (c.lo && (c.lo_inclusive ? v < *c.lo : v <= *c.lo)) return false;
  if (c.hi && (c.hi_inclusive ? v > *c.hi : v >= *c.hi)) return false;
  return true;
}

TEST(NumberMultiples, EveryNumeralAgreesWithExactArithmetic) {
  const std::vector<Case> cases{
      {R"({"type":"number","multipleOf":0.01,"minimum":0})", 10, 2, 0},
      {R"({"type":"number","multipleOf":0.01})", 10, 2},
      {R"({"type":"number","multipleOf":0.25,"exclusiveMinimum":-3.5,"maximum":120})", 250, 2, -3500, 120000, false},
      {R"({"type":"integer","multipleOf":4,"minimum":16,"maximum":100})", 4000, 0, 16000, 100000},
      {R"({"type":"integer","minimum":0,"multipleOf":12})", 12000, 0, 0},
      {R"({"type":"number","multipleOf":1,"minimum":1})", 1000, 0, 1000},
      {R"({"type":"integer","multipleOf":0.5,"exclusiveMaximum":-7})", 500, 0, std::nullopt, -7000, true, false},
      {R"({"type":"number","multipleOf":0.3,"minimum":-2.7,"exclusiveMaximum":2.7})", 300, 1, -2700, 2700, true, false},
      {R"({"type":"number","multipleOf":7,"minimum":10.5})", 7000, 0, 10500},
      {R"({"type":"number","multipleOf":0.05,"maximum":0,"exclusiveMinimum":-1})", 50, 2, -1000, 0, false, true},
      {R"({"type":"number","multipleOf":2,"minimum":5,"maximum":5.5})", 2000, 0, 5000, 5500},
  };
  const auto texts = numerals(260);
  for (const Case& c : cases) {
    const auto g = compile_json_schema_text(c.schema);
    int accepted = 0;
    for (const auto& [text, v] : texts) {
      const bool want = expected(c, text, v);
      ASSERT_EQ(ByteMatcher::matches(g, text), want) << c.schema << " " << text;
      accepted += want;
    }
    if (std::string(c.schema).find("\"maximum\":5.5") == std::string::npos) {
      EXPECT_GT(accepted, 0) << c.schema;
    } else {
      EXPECT_EQ(accepted, 0) << c.schema;  // no even number in [5, 5.5]
    }
  }
}

TEST(NumberMultiples, NonCanonicalTextAndLimits) {
  const auto g = compile_json_schema_text(R"({"type":"number","multipleOf":0.5,"minimum":0})");
  for (const char* text : {"01", "-0", "1.50", "1.", ".5", "1e1", "0.0"}) {
    EXPECT_FALSE(ByteMatcher::matches(g, text)) << text;
  }
  EXPECT_TRUE(ByteMatcher::matches(g, "100000000000000000000.5"));  // unbounded above
  // A divisor past 10000 and an automaton past its state budget are refused by name.
  for (const char* schema : {R"({"multipleOf":0.00012345})",
                             R"({"multipleOf":9973,"minimum":-12345678901,"maximum":12345678901})"}) {
    try {
      compile_json_schema_text(schema);
      ADD_FAILURE() << "compiled " << schema;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find("multipleOf"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace afm::guided
