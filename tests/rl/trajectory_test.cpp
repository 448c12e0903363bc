// Trajectory groups (rl/trajectory.h): what a generator encodes the updater decodes unchanged,
// and every broken rule of the format is a kFormat error naming it.
#include "rl/trajectory.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace afm::rl {
namespace {

TrajectoryGroup example_group() {
  TrajectoryGroup g;
  g.id = "3-1700000000000-12";
  g.version = 7;
  g.generator = 3;
  g.task = 41;
  g.kind = "arithmetic";
  g.sample_seconds = 1.25;
  g.samples.push_back({{5, 9, 11, 12, 13, 2}, {{3, 6}}, {-0.5f, -1.25f, -0.0625f}, 1.0, 3});
  g.samples.push_back({{5, 9, 11, 14, 2}, {{1, 2}, {3, 5}}, {-2.0f, -0.25f, -3.5f}, 0.0, 2});
  return g;
}

std::string expect_format_error(const std::string& text) {
  try {
    decode_group(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

// The example with one edit applied to its JSON.
std::string edited(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(encode_group(example_group()));
  edit(j);
  return j.dump();
}

TEST(Trajectory, RoundTripKeepsEveryField) {
  const TrajectoryGroup g = example_group();
  const TrajectoryGroup back = decode_group(encode_group(g));
  EXPECT_EQ(back.id, g.id);
  EXPECT_EQ(back.version, 7);
  EXPECT_EQ(back.generator, 3);
  EXPECT_EQ(back.task, 41);
  EXPECT_EQ(back.kind, "arithmetic");
  EXPECT_DOUBLE_EQ(back.sample_seconds, 1.25);
  ASSERT_EQ(back.samples.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.samples[i].tokens, g.samples[i].tokens);
    EXPECT_EQ(back.samples[i].trained, g.samples[i].trained);
    EXPECT_EQ(back.samples[i].behaviour, g.samples[i].behaviour);
    EXPECT_EQ(back.samples[i].reward, g.samples[i].reward);
    EXPECT_EQ(back.samples[i].completion_tokens, g.samples[i].completion_tokens);
  }
  EXPECT_EQ(trained_count(back.samples[1]), 3);
}

TEST(Trajectory, BrokenRulesAreNamed) {
  EXPECT_NE(expect_format_error("not json").find("trajectory group"), std::string::npos);
  EXPECT_NE(expect_format_error("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(expect_format_error(edited([](auto& j) { j["format"] = 2; })).find("format"),
            std::string::npos);
  EXPECT_NE(expect_format_error(edited([](auto& j) { j.erase("version"); })).find("version"),
            std::string::npos);
  EXPECT_NE(expect_format_error(edited([](auto& j) { j["version"] = -1; })).find("version"),
            std::string::npos);
  EXPECT_NE(expect_format_error(edited([](auto& j) {
              j["samples"] = nlohmann::json::array();
            })).find("samples"),
            std::string::npos);
  // A span starting at 0 (nothing predicts the first token), overlapping or past the end.
  expect_format_error(edited([](auto& j) { j["samples"][0]["trained"] = {{0, 2}}; }));
  expect_format_error(edited([](auto& j) { j["samples"][1]["trained"] = {{1, 3}, {2, 4}}; }));
  expect_format_error(edited([](auto& j) { j["samples"][0]["trained"] = {{3, 7}}; }));
  expect_format_error(edited([](auto& j) { j["samples"][0]["trained"] = {{3}}; }));
  // Behaviour log-probabilities: one per trained token, numbers, finite, not positive.
  EXPECT_NE(expect_format_error(edited([](auto& j) {
              j["samples"][0]["behaviour"] = {-1.0};
            })).find("1 behaviour log-probabilities for 3 trained tokens"),
            std::string::npos);
  expect_format_error(edited([](auto& j) { j["samples"][0]["behaviour"] = {-1.0, 0.5, -1.0}; }));
  expect_format_error(edited([](auto& j) { j["samples"][0]["behaviour"] = {-1.0, "x", -1.0}; }));
  expect_format_error(edited([](auto& j) { j["samples"][0]["tokens"][0] = -4; }));
  expect_format_error(edited([](auto& j) { j["samples"][0]["tokens"][0] = 1.5; }));
  expect_format_error(edited([](auto& j) { j["samples"][0]["reward"] = "high"; }));
  expect_format_error(edited([](auto& j) { j["samples"][0] = 3; }));
  // NaN cannot be written in JSON, but a huge exponent overflows to infinity.
  expect_format_error(R"({"format":1,"id":"a","version":0,"generator":0,"task":0,"kind":"x",)"
                      R"("sample_seconds":1e999,"samples":[]})");
}

TEST(Trajectory, DeepNestingIsRefusedWithoutRecursion) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expect_format_error(deep);
}

}  // namespace
}  // namespace afm::rl
