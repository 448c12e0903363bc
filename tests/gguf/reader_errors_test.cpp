// Every malformed-file class docs/gguf.md lists gives Error(kFormat) naming the problem and a
// byte offset; none crashes (these tests also run under ASan/UBSan).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "base/error.h"
#include "base/mapped_file.h"
#include "gguf/gguf_bytes.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace afm::gguf {
namespace {

using testing::GgufBytes;

// Parses and expects a format error whose message contains `needle` and names an offset.
void expect_format_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    File::parse(bytes, "test.gguf");
    ADD_FAILURE() << "parsed, expected error containing '" << needle << "'";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kFormat) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset"), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("test.gguf: ", 0), 0u) << msg;
  }
}

// A valid file with one metadata key and one 8-float tensor.
GgufBytes valid_prefix(uint64_t n_tensors) {
  GgufBytes b;
  b.header(n_tensors, 1).kv_u32("general.alignment", 32);
  return b;
}

std::vector<uint8_t> small_valid_file() {
  GgufBytes b = valid_prefix(1);
  b.tensor("t", {8}, 0, 0).pad_to(32).zeros(32);
  return b.bytes();
}

TEST(GgufReaderErrors, SmallValidFileParses) {
  File f = File::parse(small_valid_file(), "test.gguf");
  EXPECT_EQ(f.tensors().size(), 1u);
}

TEST(GgufReaderErrors, EveryTruncationIsAnError) {
  std::vector<uint8_t> full = small_valid_file();
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(n));
    EXPECT_THROW(File::parse(prefix, "test.gguf"), Error) << "prefix of " << n << " bytes";
  }
}

TEST(GgufReaderErrors, BadMagicAndVersion) {
  GgufBytes magic;
  magic.u32(0x12345678).u32(3).u64(0).u64(0);
  expect_format_error(magic.bytes(), "bad magic");
  GgufBytes big;
  big.u32(0x47475546).u32(3).u64(0).u64(0);
  expect_format_error(big.bytes(), "big-endian");
  GgufBytes v1;
  v1.header(0, 0, 1);
  expect_format_error(v1.bytes(), "unsupported GGUF version 1");
  GgufBytes v4;
  v4.header(0, 0, 4);
  expect_format_error(v4.bytes(), "unsupported GGUF version 4");
}

TEST(GgufReaderErrors, AbsurdCountsAndLengths) {
  GgufBytes kv;
  kv.header(0, uint64_t{1} << 62);
  expect_format_error(kv.bytes(), "metadata count");
  GgufBytes tensors;
  tensors.header(uint64_t{1} << 61, 0);
  expect_format_error(tensors.bytes(), "tensor count");
  GgufBytes key;
  key.header(0, 1).u64(uint64_t{1} << 40).zeros(16);
  expect_format_error(key.bytes(), "metadata key length");
  GgufBytes str;
  str.header(0, 1).str("k").u32(8).u64(~uint64_t{0});
  expect_format_error(str.bytes(), "string value length");
  GgufBytes arr;
  arr.header(0, 1).str("k").u32(9).u32(6).u64(uint64_t{1} << 60);
  expect_format_error(arr.bytes(), "array length");
}

TEST(GgufReaderErrors, BadValuesAndKeys) {
  GgufBytes type;
  type.header(0, 1).str("k").u32(13).u32(0);
  expect_format_error(type.bytes(), "unknown value type 13");
  GgufBytes elem;
  elem.header(0, 1).str("k").u32(9).u32(99).u64(0);
  expect_format_error(elem.bytes(), "unknown array element type 99");
  GgufBytes dup;
  dup.header(0, 2).kv_u32("a", 1).kv_u32("a", 2);
  expect_format_error(dup.bytes(), "duplicate metadata key 'a'");
  GgufBytes empty;
  empty.header(0, 1).str("").u32(4).u32(0);
  expect_format_error(empty.bytes(), "empty metadata key");
  GgufBytes boolean;
  boolean.header(0, 1).str("b").u32(7).u8(2);
  expect_format_error(boolean.bytes(), "bool value 2");
  GgufBytes deep;
  deep.header(0, 1).str("k").u32(9);
  for (int i = 0; i < 20; ++i) deep.u32(9).u64(1);
  deep.u32(4).u64(0);
  expect_format_error(deep.bytes(), "nested deeper");
}

TEST(GgufReaderErrors, BadAlignment) {
  GgufBytes three;
  three.header(0, 1).kv_u32("general.alignment", 3);
  expect_format_error(three.bytes(), "not a power of two");
  GgufBytes zero;
  zero.header(0, 1).kv_u32("general.alignment", 0);
  expect_format_error(zero.bytes(), "not a power of two");
  GgufBytes wrong_type;
  wrong_type.header(0, 1).str("general.alignment").u32(10).u64(32);
  expect_format_error(wrong_type.bytes(), "general.alignment must be a u32");
}

TEST(GgufReaderErrors, BadTensorInfos) {
  auto with_tensor = [](const std::string& name, std::vector<uint64_t> shape, uint32_t type,
                        uint64_t offset, size_t data_bytes) {
    GgufBytes b = valid_prefix(1);
    b.tensor(name, std::move(shape), type, offset).pad_to(32).zeros(data_bytes);
    return b.bytes();
  };
  expect_format_error(with_tensor("t", {8}, 12, 0, 64), "unknown or unsupported type 12");
  expect_format_error(with_tensor("t", {8}, 99, 0, 64), "unknown or unsupported type 99");
  expect_format_error(with_tensor("t", {0}, 0, 0, 64), "zero dimension");
  expect_format_error(with_tensor("t", {1, 1, 1, 1, 1}, 0, 0, 64), "5 dimensions");
  expect_format_error(with_tensor("t", {30}, 8, 0, 64), "not a multiple of the q8_0 block size");
  expect_format_error(with_tensor("t", {8}, 0, 16, 64), "not aligned");
  expect_format_error(with_tensor("t", {8}, 0, 64, 64), "outside");
  expect_format_error(with_tensor("t", {100}, 0, 0, 64), "outside");
  expect_format_error(with_tensor("t", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 64),
                      "overflows");
  expect_format_error(with_tensor("", {8}, 0, 0, 64), "empty tensor name");
  expect_format_error(with_tensor(std::string(64, 'x'), {8}, 0, 0, 64), "longer than 63");
}

TEST(GgufReaderErrors, DuplicateAndOverlappingTensors) {
  GgufBytes dup = valid_prefix(2);
  dup.tensor("t", {8}, 0, 0).tensor("t", {8}, 0, 32).pad_to(32).zeros(64);
  expect_format_error(dup.bytes(), "duplicate tensor name 't'");
  GgufBytes overlap = valid_prefix(2);
  overlap.tensor("a", {16}, 0, 32).tensor("b", {16}, 0, 0).pad_to(32).zeros(96);
  expect_format_error(overlap.bytes(), "overlaps");
}

// Deterministic mutation sweep: flipping bytes of a valid file never crashes or hangs; the
// reader either accepts the file or throws afm::Error.
TEST(GgufReaderErrors, RandomMutationsNeverCrash) {
  std::string path = (std::filesystem::temp_directory_path() / "afm_gguf_mut.gguf").string();
  Writer w;
  w.set("general.architecture", Value("llama"));
  w.set("tokens", Value::string_array({"a", "bb", "ccc"}));
  w.add_tensor("x", TensorType::kQ4_0, {32, 2}, std::vector<uint8_t>(36, 1));
  w.write(path);
  MappedFile m = MappedFile::open(path);
  std::vector<uint8_t> original(m.data(), m.data() + m.size());
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 5000; ++iter) {
    std::vector<uint8_t> bytes = original;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    try {
      File::parse(bytes, "mutated");
    } catch (const Error&) {
    }
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace afm::gguf
