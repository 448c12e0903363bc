// `afm data sft`: JSONL conversations rendered into record files, and the record files' reader
// (its errors name the file, the record and the offset).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/sft_records.h"
#include "data/sft_render.h"

namespace afm::data {
namespace {

namespace fs = std::filesystem;

const char* const kModel = "models/afm-device-21m.gguf";
const char* const kGood =
    R"({"messages": [{"role": "user", "content": "Add 2 and 3."}, {"role": "assistant", "content": "5"}]})";

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("afm_sft_render_test_" + name);
}

std::string write_jsonl(const std::string& name, const std::string& text) {
  const fs::path path = temp(name + ".jsonl");
  std::ofstream(path) << text;
  return path.string();
}

SftRenderSummary render(const std::string& input, const std::string& name, int64_t max_tokens = 256,
                        double val = 0.0) {
  return render_sft_jsonl({kModel, input, temp(name).string(), max_tokens, val, 1});
}

TEST(SftRender, WritesRecordsSkipsBlankLinesAndCountsTooLongOnes) {
  const std::string tools =
      R"({"messages": [{"role": "user", "content": "Weather in Oslo?"},)"
      R"( {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function":)"
      R"( {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}],)"
      R"( "tools": [{"type": "function", "function": {"name": "get_weather",)"
      R"( "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],)"
      R"( "metadata": {"task": "tools"}})";
  const std::string long_one = R"({"messages": [{"role": "user", "content": ")" +
                               std::string(2000, 'x') +
                               R"("}, {"role": "assistant", "content": "ok"}]})";
  const SftRenderSummary s =
      render(write_jsonl("good", std::string(kGood) + "\n\n" + tools + "\n" + long_one + "\n"),
             "good");
  EXPECT_EQ(s.conversations, 3);
  EXPECT_EQ(s.skipped_long, 1);
  EXPECT_EQ(s.train, 2);
  const SftRecordFile f = read_sft_records((temp("good") / "train.sft").string());
  EXPECT_EQ(f.vocab_size, 8192u);
  ASSERT_EQ(f.records.size(), 2u);
  EXPECT_GT(f.records[1].trained_count(), 5);  // the tool-call block
  EXPECT_EQ(f.records[0].trained_count() + f.records[1].trained_count(), s.train_trained_tokens);
  EXPECT_TRUE(fs::exists(temp("good") / "meta.json"));
  EXPECT_TRUE(read_sft_records((temp("good") / "val.sft").string()).records.empty());
}

TEST(SftRender, HeldOutSplitIsDeterministic) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += std::string(kGood) + "\n";
  const std::string path = write_jsonl("split", text);
  const SftRenderSummary a = render(path, "split_a", 256, 0.2), b = render(path, "split_b", 256, 0.2);
  EXPECT_EQ(a.val, b.val);
  EXPECT_GT(a.val, 20);
  EXPECT_LT(a.val, 60);
  EXPECT_EQ(a.train + a.val, 200);
}

void expect_error(const std::string& name, const std::string& text, const std::string& where,
                  const std::string& what) {
  const std::string path = write_jsonl(name, text);
  try {
    render(path, name);
    FAIL() << "no error for " << name;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string message = e.what();
    EXPECT_NE(message.find(path + ":" + where + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

TEST(SftRender, MalformedLinesAreErrorsNamingTheLine) {
  expect_error("bad_json", std::string(kGood) + "\n{\"messages\": [\n", "2", "not a JSON value");
  expect_error("not_object", "[1, 2]\n", "1", "must be a JSON object");
  expect_error("bad_role", R"({"messages": [{"role": "wizard", "content": "hi"}]})" "\n", "1",
               "wizard");
  expect_error("no_assistant",
               std::string(kGood) + "\n" + R"({"messages": [{"role": "user", "content": "hi"}]})" +
                   "\n",
               "2", "no assistant turn");
}

TEST(SftRecords, RoundTripAndEveryTruncationIsAnErrorNamingTheFile) {
  SftRecordFile f{100, {{{1, 2, 3}, {0, 1, 1}}, {{4, 5}, {0, 1}}}};
  const std::string path = temp("records.sft").string();
  write_sft_records(path, f);
  const SftRecordFile back = read_sft_records(path);
  ASSERT_EQ(back.records.size(), 2u);
  EXPECT_EQ(back.records[0].tokens, f.records[0].tokens);
  EXPECT_EQ(back.records[1].trained, f.records[1].trained);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::string cut_path = temp("cut.sft").string();
    std::ofstream(cut_path, std::ios::binary) << bytes.substr(0, cut);
    try {
      read_sft_records(cut_path);
      FAIL() << "no error at " << cut;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kFormat) << cut;
      EXPECT_NE(std::string(e.what()).find(cut_path), std::string::npos) << e.what();
    }
  }
}

TEST(SftRecords, BadContentIsAnErrorNamingTheRecord) {
  auto expect_bad = [](const SftRecordFile& f, const std::string& what) {
    const std::string path = temp("bad.sft").string();
    write_sft_records(path, f);
    try {
      read_sft_records(path);
      FAIL() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_bad({10, {{{1, 2}, {0, 1}}, {{1, 12}, {0, 1}}}}, "record 1 has token id 12 >= vocab_size 10");
  expect_bad({10, {{{1, 2}, {0, 2}}}}, "record 0 has a trained flag other than 0 or 1");
  expect_bad({10, {{{1, 2}, {1, 0}}}}, "record 0 has no trained token after its first");
  expect_bad({0xE4000064u, {}}, "vocab_size 3825205348 is not in 1..2147483647");
  expect_bad({0, {}}, "vocab_size 0 is not in 1..2147483647");
}

}  // namespace
}  // namespace afm::data
