// Generable types: the schema a struct or enum declares (order, descriptions, guides), impossible
// guides as errors, decoding complete and partial values; and concurrent tool calls.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "afm/generable.h"
#include "framework/session_support.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"

namespace gen_test {

enum class Color { red, green, blue };

struct Point {
  int x = 0;
  int y = 0;
};

struct Shape {
  std::string label;
  Color color = Color::red;
  std::vector<Point> points;
  std::optional<double> weight;
  bool filled = false;
  int64_t id = 0;
};

struct EmptyRange {
  int n = 0;
};

struct WrongGuide {
  std::string s;
};

struct BadPattern {
  std::string s;
};

}  // namespace gen_test

AFM_GENERABLE_ENUM(gen_test::Color, "a color", red, green, blue);
AFM_GENERABLE(gen_test::Point, "a point", AFM_FIELD(x, "x", afm::guide::range(-10, 10)),
              AFM_FIELD(y, "y", afm::guide::minimum(0)));
AFM_GENERABLE(gen_test::Shape, "a shape",
              AFM_FIELD(label, "name", afm::guide::pattern("^[a-z]+$")),
              AFM_FIELD(color, "fill color"),
              AFM_FIELD(points, "corners", afm::guide::min_count(1), afm::guide::max_count(4)),
              AFM_FIELD(weight, "grams"),
              AFM_FIELD(filled, ""),
              AFM_FIELD(id, "id"));
AFM_GENERABLE(gen_test::EmptyRange, "", AFM_FIELD(n, "", afm::guide::range(5, 1)));
AFM_GENERABLE(gen_test::WrongGuide, "", AFM_FIELD(s, "", afm::guide::range(0, 1)));
AFM_GENERABLE(gen_test::BadPattern, "", AFM_FIELD(s, "", afm::guide::pattern("(?=a)b")));

namespace afm {
namespace {

using Json = nlohmann::ordered_json;
using gen_test::Shape;

TEST(Generable, SchemaListsFieldsInDeclarationOrderWithGuides) {
  const GenerationSchema schema = generation_schema<Shape>();
  const Json& s = schema.json_schema();
  EXPECT_EQ(schema.name(), "gen_test::Shape");
  EXPECT_EQ(s["type"], "object");
  std::vector<std::string> keys;
  for (const auto& [k, v] : s["properties"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"label", "color", "points", "weight", "filled", "id"}));
  EXPECT_EQ(s["required"], Json::parse(R"(["label","color","points","filled","id"])"));
  EXPECT_EQ(s["properties"]["color"]["enum"], Json::parse(R"(["red","green","blue"])"));
  EXPECT_EQ(s["properties"]["points"]["minItems"], 1);
  EXPECT_EQ(s["properties"]["points"]["maxItems"], 4);
  const Json& point = s["properties"]["points"]["items"];
  EXPECT_EQ(point["properties"]["x"]["minimum"], -10);
  EXPECT_EQ(point["properties"]["x"]["maximum"], 10);
  EXPECT_EQ(point["properties"]["y"]["minimum"], 0);
  EXPECT_EQ(point["properties"]["y"]["maximum"], 2147483647);  // int's own range
  EXPECT_EQ(s["properties"]["label"]["pattern"], "^[a-z]+$");
  EXPECT_EQ(s["properties"]["weight"]["description"], "grams");
  EXPECT_EQ(s["additionalProperties"], false);
}

TEST(Generable, SchemaCompilesAndAcceptsOnlyValidInstances) {
  const auto grammar = guided::compile_json_schema(generation_schema<Shape>().json_schema());
  EXPECT_TRUE(guided::ByteMatcher::matches(
      grammar, R"({"label":"sq","color":"green","points":[{"x":1,"y":2}],"filled":true,"id":7})"));
  EXPECT_FALSE(guided::ByteMatcher::matches(
      grammar, R"({"label":"sq","color":"pink","points":[{"x":1,"y":2}],"filled":true,"id":7})"));
  EXPECT_FALSE(guided::ByteMatcher::matches(  // x out of its range guide
      grammar, R"({"label":"sq","color":"red","points":[{"x":11,"y":2}],"filled":true,"id":7})"));
  EXPECT_FALSE(guided::ByteMatcher::matches(  // no points: min_count 1
      grammar, R"({"label":"sq","color":"red","points":[],"filled":true,"id":7})"));
}

TEST(Generable, DecodesCompleteValues) {
  const Shape s = from_generated_content<Shape>(GeneratedContent(Json::parse(
      R"({"label":"tri","color":"blue","points":[{"x":1,"y":2},{"x":-3,"y":4}],"weight":2.5,"filled":true,"id":9000000000})")));
  EXPECT_EQ(s.label, "tri");
  EXPECT_EQ(s.color, gen_test::Color::blue);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[1].x, -3);
  ASSERT_TRUE(s.weight.has_value());
  EXPECT_DOUBLE_EQ(*s.weight, 2.5);
  EXPECT_TRUE(s.filled);
  EXPECT_EQ(s.id, 9000000000);
}

TEST(Generable, DecodingAValueThatDoesNotFitIsADecodingFailure) {
  try {
    from_generated_content<gen_test::Point>(GeneratedContent(Json::parse(R"({"x":"one","y":2})")));
    FAIL() << "expected a decoding failure";
  } catch (const GenerationError& e) {
    EXPECT_EQ(e.kind(), GenerationErrorKind::kDecodingFailure);
    EXPECT_NE(std::string(e.what()).find("gen_test::Point.x"), std::string::npos) << e.what();
  }
  EXPECT_THROW(from_generated_content<gen_test::Point>(
                   GeneratedContent(Json::parse(R"({"x":99999999999,"y":2})"))),
               GenerationError);
}

TEST(Generable, PartialValuesFillWhatIsPresent) {
  const PartiallyGenerated<Shape> p =
      partially_generated<Shape>(GeneratedContent(Json::parse(R"({"label":"tr","points":[{"x":1}]})"), false));
  EXPECT_FALSE(p.is_complete());
  EXPECT_TRUE(p.has("label"));
  EXPECT_FALSE(p.has("color"));
  EXPECT_EQ(p.value.label, "tr");
  ASSERT_EQ(p.value.points.size(), 1u);
  EXPECT_EQ(p.value.points[0].x, 1);
  EXPECT_EQ(p.value.points[0].y, 0);
}

TEST(Generable, ImpossibleGuidesAreErrorsNamingTheField) {
  auto kind_of = [](auto make) {
    try {
      make();
    } catch (const GenerationError& e) {
      return std::make_pair(e.kind(), std::string(e.what()));
    }
    return std::make_pair(GenerationErrorKind::kRefusal, std::string("no error"));
  };
  auto [k1, m1] = kind_of([] { generation_schema<gen_test::EmptyRange>(); });
  EXPECT_EQ(k1, GenerationErrorKind::kUnsupportedGuide);
  EXPECT_NE(m1.find("gen_test::EmptyRange.n"), std::string::npos) << m1;
  EXPECT_NE(m1.find("empty"), std::string::npos) << m1;
  auto [k2, m2] = kind_of([] { generation_schema<gen_test::WrongGuide>(); });
  EXPECT_EQ(k2, GenerationErrorKind::kUnsupportedGuide);
  EXPECT_NE(m2.find("does not apply"), std::string::npos) << m2;
  auto [k3, m3] = kind_of([] { DynamicGenerationSchema::array(DynamicGenerationSchema::string(),
                                                               {guide::min_count(3), guide::max_count(2)}); });
  EXPECT_EQ(k3, GenerationErrorKind::kUnsupportedGuide) << m3;
  auto [k4, m4] = kind_of([] { DynamicGenerationSchema::any_of(std::vector<std::string>{}); });
  EXPECT_EQ(k4, GenerationErrorKind::kUnsupportedGuide) << m4;
}

TEST(DynamicGenerationSchema, BuildsTheSameShapeAsAGenerableStruct) {
  using D = DynamicGenerationSchema;
  const D point = D::object("Point", "a point",
                            {{"x", "x", D::integer({guide::range(-10, 10)})},
                             {"y", "y", D::integer({guide::minimum(0)}), true}});
  const Json& s = point.json_schema();
  EXPECT_EQ(s["required"], Json::parse(R"(["x"])"));
  EXPECT_EQ(s["properties"]["x"]["maximum"], 10);
  EXPECT_EQ(s["properties"]["y"]["description"], "y");
  const auto grammar = guided::compile_json_schema(D::array(point, {guide::count(2)}).json_schema());
  EXPECT_TRUE(guided::ByteMatcher::matches(grammar, R"([{"x":1},{"x":2,"y":3}])"));
  EXPECT_FALSE(guided::ByteMatcher::matches(grammar, R"([{"x":1}])"));
}

}  // namespace
}  // namespace afm

// Tools of one turn run concurrently: each call below waits until both have started, which
// only happens if they run at the same time (a sequential runner would time out and fail).

namespace afm {
namespace {

class Rendezvous : public Tool {
 public:
  Rendezvous(std::string name, std::mutex& m, std::condition_variable& cv, int& started)
      : name_(std::move(name)), m_(m), cv_(cv), started_(started) {}
  std::string name() const override { return name_; }
  std::string description() const override { return ""; }
  GenerationSchema arguments_schema() const override { return GenerationSchema(); }
  ToolOutput call(const GeneratedContent&) override {
    std::unique_lock<std::mutex> lock(m_);
    ++started_;
    cv_.notify_all();
    if (!cv_.wait_for(lock, std::chrono::seconds(10), [&] { return started_ == 2; })) {
      throw std::runtime_error("the other call never started");
    }
    if (name_ == "bad") throw std::runtime_error("boom");
    return name_ + " done";
  }

 private:
  std::string name_;
  std::mutex& m_;
  std::condition_variable& cv_;
  int& started_;
};

TEST(ToolCalls, RunConcurrentlyAndReportTheFailingTool) {
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  std::vector<std::shared_ptr<Tool>> tools = {std::make_shared<Rendezvous>("a", m, cv, started),
                                              std::make_shared<Rendezvous>("b", m, cv, started)};
  const std::vector<std::string> out =
      call_tools_concurrently(tools, {ToolCall{"", "b", {}}, ToolCall{"", "a", {}}});
  EXPECT_EQ(out, (std::vector<std::string>{"b done", "a done"}));  // in call order
  started = 0;
  tools.push_back(std::make_shared<Rendezvous>("bad", m, cv, started));
  try {
    call_tools_concurrently(tools, {ToolCall{"", "a", {}}, ToolCall{"", "bad", {}}});
    FAIL() << "expected a tool_call_error";
  } catch (const GenerationError& e) {
    EXPECT_EQ(e.kind(), GenerationErrorKind::kToolCallError);
    EXPECT_EQ(e.tool_name(), "bad");
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos);
  }
}

}  // namespace
}  // namespace afm
