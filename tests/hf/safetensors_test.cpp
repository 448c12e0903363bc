#include "hf/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "base/atomic_file.h"
#include "base/error.h"

namespace afm::hf {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> make_file(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> b(8);
  uint64_t n = header.size();
  std::memcpy(b.data(), &n, 8);
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<uint8_t>(i));
  return b;
}

const std::string kGood =
    R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}})";

void expect_error(const std::string& header, size_t data_bytes, const std::string& needle) {
  std::vector<uint8_t> bytes = make_file(header, data_bytes);
  try {
    SafetensorsFile::parse(bytes, "x.safetensors");
    ADD_FAILURE() << "parsed; expected '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Safetensors, ParsesTensorsAndMetadata) {
  std::vector<uint8_t> bytes = make_file(kGood, 22);
  SafetensorsFile f = SafetensorsFile::parse(bytes, "x.safetensors");
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const SafeTensor& a = f.tensors()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, DType::kF32);
  EXPECT_EQ(a.shape, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(a.data.data(), bytes.data() + 8 + kGood.size());  // zero copy
  EXPECT_EQ(f.tensors()[1].data.size(), 6u);
}

// mlx's save_safetensors writes "__metadata__": null when given none, and 0-dim scalars.
TEST(Safetensors, AcceptsNullMetadataAndScalars) {
  const std::string header =
      R"({"__metadata__":null,"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  std::vector<uint8_t> bytes = make_file(header, 4);
  SafetensorsFile f = SafetensorsFile::parse(bytes, "x.safetensors");
  EXPECT_TRUE(f.metadata().empty());
  ASSERT_EQ(f.tensors().size(), 1u);
  EXPECT_TRUE(f.tensors()[0].shape.empty());
  EXPECT_EQ(f.tensors()[0].n_elements(), 1u);
  EXPECT_EQ(f.tensors()[0].data.size(), 4u);
  expect_error(R"({"__metadata__":[]})", 0, "__metadata__ is not an object");
}

TEST(Safetensors, RejectsMalformedHeaders) {
  expect_error("{not json", 0, "not valid JSON");
  expect_error("[1,2]", 0, "not a JSON object");
  expect_error(R"({"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", 4, "unknown dtype");
  expect_error(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4, "no dtype");
  expect_error(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "non-integer");
  expect_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4, "data_offsets");
  expect_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 8, "need 8");
  expect_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 2, "outside");
  expect_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4, "outside");
  expect_error(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4,
               "overflows");
  expect_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
               8, "overlaps");
  expect_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
               R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
               8, "duplicate tensor name 'a'");
  expect_error(R"({"__metadata__":{"k":1}})", 0, "not a string");
}

TEST(Safetensors, EveryTruncationIsAnError) {
  std::vector<uint8_t> full = make_file(kGood, 22);
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(n));
    EXPECT_THROW(SafetensorsFile::parse(prefix, "t"), Error) << n;
  }
  std::vector<uint8_t> huge(16, 0xff);  // header length 2^64-1
  EXPECT_THROW(SafetensorsFile::parse(huge, "t"), Error);
}

TEST(Safetensors, RandomMutationsNeverCrash) {
  std::vector<uint8_t> original = make_file(kGood, 22);
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> b = original;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    try {
      SafetensorsFile::parse(b, "m");
    } catch (const Error&) {
    }
  }
}

TEST(SafetensorsModel, ShardedIndexIsChecked) {
  fs::path dir = fs::temp_directory_path() / "afm_st_shards";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::vector<uint8_t>& b) {
    write_file_atomic((dir / name).string(), std::string(b.begin(), b.end()));
  };
  write("s1.safetensors",
        make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4));
  write("s2.safetensors",
        make_file(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4));
  write_file_atomic((dir / "model.safetensors.index.json").string(),
                    R"({"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})");
  SafetensorsModel m = SafetensorsModel::open_dir(dir.string());
  EXPECT_EQ(m.tensors().size(), 2u);
  EXPECT_EQ(m.get("b").name, "b");
  EXPECT_THROW(m.get("c"), Error);
  write_file_atomic((dir / "model.safetensors.index.json").string(),
                    R"({"weight_map":{"a":"s1.safetensors","b":"s1.safetensors"}})");
  EXPECT_THROW(SafetensorsModel::open_dir(dir.string()), Error);  // b is not in s1
  write_file_atomic((dir / "model.safetensors.index.json").string(),
                    R"({"weight_map":{"a":"s3.safetensors"}})");
  EXPECT_THROW(SafetensorsModel::open_dir(dir.string()), Error);  // missing shard
  fs::remove(dir / "model.safetensors.index.json");
  write("s3.safetensors",
        make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4));
  EXPECT_THROW(SafetensorsModel::open_dir(dir.string()), Error);  // 'a' in two files
  fs::remove_all(dir);
}

}  // namespace
}  // namespace afm::hf
