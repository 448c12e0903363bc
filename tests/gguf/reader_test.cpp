#include "gguf/reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "base/error.h"
#include "base/mapped_file.h"
#include "gguf/writer.h"

namespace afm::gguf {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("afm_gguf_" + name)).string();
}

Writer sample_writer() {
  Writer w;
  w.set("general.architecture", Value("llama"));
  w.set("u8", Value(uint8_t{200}));
  w.set("i8", Value(int8_t{-100}));
  w.set("u16", Value(uint16_t{60000}));
  w.set("i16", Value(int16_t{-30000}));
  w.set("u32", Value(uint32_t{4000000000u}));
  w.set("i32", Value(int32_t{-2000000000}));
  w.set("f32", Value(1.5f));
  w.set("bool", Value(true));
  w.set("string", Value("héllo ✓"));
  w.set("u64", Value(uint64_t{1} << 60));
  w.set("i64", Value(int64_t{-1} << 60));
  w.set("f64", Value(3.141592653589793));
  w.set("strings", Value::string_array({"a", "", "ccc"}));
  w.set("empty", Value(Array{ValueType::kFloat32, {}}));
  Array inner1{ValueType::kInt32, {Value(int32_t{1}), Value(int32_t{2})}};
  Array inner2{ValueType::kInt32, {Value(int32_t{3})}};
  w.set("nested", Value(Array{ValueType::kArray, {Value(inner1), Value(inner2)}}));
  std::vector<uint8_t> f32(4 * 8);
  for (size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<uint8_t>(i);
  w.add_tensor("a.weight", TensorType::kF32, {8}, f32);
  std::vector<uint8_t> q8(34 * 2, 7);
  w.add_tensor("b.weight", TensorType::kQ8_0, {32, 2}, q8);
  std::vector<uint8_t> f16(2 * 3, 9);
  w.add_tensor("c.bias", TensorType::kF16, {3}, f16);
  return w;
}

TEST(GgufReader, RoundTripsEveryValueTypeAndTensor) {
  std::string path = temp_path("roundtrip.gguf");
  Writer w = sample_writer();
  w.write(path);
  File f = File::open(path);
  EXPECT_EQ(f.version(), 3u);
  ASSERT_EQ(f.metadata().size(), w.metadata().size());
  for (size_t i = 0; i < w.metadata().size(); ++i) {
    EXPECT_EQ(f.metadata()[i].first, w.metadata()[i].first);
    EXPECT_TRUE(f.metadata()[i].second == w.metadata()[i].second) << w.metadata()[i].first;
  }
  EXPECT_EQ(f.architecture(), "llama");
  EXPECT_EQ(f.get_u64("u32"), 4000000000u);
  EXPECT_EQ(f.get("i64").as_i64("i64"), int64_t{-1} << 60);
  EXPECT_DOUBLE_EQ(f.get_f64("f32"), 1.5);
  EXPECT_EQ(f.get_string("string"), "héllo ✓");
  ASSERT_EQ(f.tensors().size(), 3u);
  const TensorInfo& b = f.get_tensor("b.weight");
  EXPECT_EQ(b.shape, (std::vector<uint64_t>{32, 2}));
  EXPECT_EQ(b.n_bytes, 68u);
  EXPECT_EQ(b.n_elements(), 64u);
  EXPECT_EQ(b.data[0], 7);
  EXPECT_EQ(f.get_tensor("a.weight").data[5], 5);
  for (const TensorInfo& t : f.tensors()) {
    EXPECT_EQ((f.data_offset() + t.offset) % f.alignment(), 0u) << t.name;
  }
  std::remove(path.c_str());
}

TEST(GgufReader, TensorViewsPointIntoTheMapping) {
  std::string path = temp_path("zerocopy.gguf");
  sample_writer().write(path);
  File f = File::open(path);
  MappedFile raw = MappedFile::open(path);
  const TensorInfo& a = f.get_tensor("a.weight");
  EXPECT_EQ(std::memcmp(a.data, raw.data() + f.data_offset() + a.offset, a.n_bytes), 0);
  // Zero copy: the view lies inside the reader's own mapping, i.e. not in a heap buffer, and
  // its distance from the first tensor equals the file distance.
  const TensorInfo& b = f.get_tensor("b.weight");
  EXPECT_EQ(static_cast<uint64_t>(b.data - a.data), b.offset - a.offset);
  std::remove(path.c_str());
}

TEST(GgufReader, HonoursCustomAlignment) {
  std::string path = temp_path("align.gguf");
  Writer w = sample_writer();
  w.set_alignment(64);
  w.write(path);
  File f = File::open(path);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  for (const TensorInfo& t : f.tensors()) EXPECT_EQ(t.offset % 64, 0u);
  std::remove(path.c_str());
}

TEST(GgufReader, MissingKeysAndTensorsAreTypedErrors) {
  std::string path = temp_path("missing.gguf");
  sample_writer().write(path);
  File f = File::open(path);
  try {
    f.get("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
  EXPECT_THROW(f.get_tensor("nope"), Error);
  EXPECT_THROW(f.get_string("u8"), Error);  // type mismatch
  EXPECT_THROW(f.get_u64("i8"), Error);     // negative into unsigned
  EXPECT_THROW(File::open(temp_path("does_not_exist.gguf")), Error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace afm::gguf
