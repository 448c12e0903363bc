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

// A file with every section non-trivial, and where each section ends.
struct SectionedFile {
  std::vector<uint8_t> bytes;
  size_t header_end, kv_end, infos_end, data_start;
};

SectionedFile sectioned_file() {
  GgufBytes b;
  b.header(2, 3).kv_u32("general.alignment", 32);
  b.str("general.name").u32(8).str("a model name");
  b.str("tokens").u32(9).u32(8).u64(3).str("a").str("bb").str("ccc");
  SectionedFile f;
  f.header_end = 24;
  f.kv_end = b.bytes().size();
  b.tensor("first", {8, 2}, 0, 0).tensor("second", {4}, 0, 64);
  f.infos_end = b.bytes().size();
  b.pad_to(32);
  f.data_start = b.bytes().size();
  b.zeros(64 + 16);
  f.bytes = b.bytes();
  return f;
}

// Parses a prefix and returns the error, failing the test if there is none.
Error parse_error(const std::vector<uint8_t>& bytes) {
  try {
    File::parse(bytes, "cut.gguf");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "a " << bytes.size() << "-byte prefix parsed";
  return Error(ErrorCode::kInternal, "");
}

// Cutting the file anywhere (header, metadata, tensor table, padding, data) is a format error
// that says the file is truncated; never a claim that a count is absurd.
TEST(GgufReaderErrors, EveryCutSaysTruncated) {
  const SectionedFile f = sectioned_file();
  ASSERT_EQ(File::parse(f.bytes, "cut.gguf").tensors().size(), 2u);
  ASSERT_LT(f.header_end, f.kv_end);
  ASSERT_LT(f.kv_end, f.infos_end);
  ASSERT_LT(f.infos_end, f.data_start);
  for (size_t n = 0; n < f.bytes.size(); ++n) {
    const Error e = parse_error({f.bytes.begin(), f.bytes.begin() + static_cast<long>(n)});
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kFormat) << n << ": " << msg;
    EXPECT_EQ(msg.rfind("cut.gguf: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << n << ": " << msg;
    EXPECT_NE(msg.find("byte offset"), std::string::npos) << n << ": " << msg;
    EXPECT_EQ(msg.find("absurd"), std::string::npos) << n << ": " << msg;
  }
}

// The counts in the header are checked first: a cut inside the metadata names the count that
// no longer fits, the offset where the file ends, and the bytes needed vs. present.
TEST(GgufReaderErrors, CutMetadataNamesSizes) {
  const SectionedFile f = sectioned_file();
  const Error e = parse_error({f.bytes.begin(), f.bytes.begin() + 40});
  EXPECT_STREQ(e.what(),
               "cut.gguf: file truncated at byte offset 40: metadata count 3 (at byte offset 16) "
               "needs at least 39 more bytes, the file has 16");
  const Error s = parse_error({f.bytes.begin(), f.bytes.begin() + 95});
  EXPECT_NE(std::string(s.what()).find("file truncated at byte offset 95: string value length 12"),
            std::string::npos)
      << s.what();
  const Error d =
      parse_error({f.bytes.begin(), f.bytes.begin() + static_cast<long>(f.data_start) + 70});
  EXPECT_NE(std::string(d.what()).find("tensor 'second' data [64, +16)"), std::string::npos)
      << d.what();
  EXPECT_NE(std::string(d.what()).find("10 bytes past the end of the file"), std::string::npos)
      << d.what();
}

// The shipped model cut after 200 bytes (an interrupted download) is reported as truncated.
TEST(GgufReaderErrors, ShippedModelCutShort) {
  const std::string path = "models/afm-device-21m.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  MappedFile m = MappedFile::open(path);
  ASSERT_GT(m.size(), 200u);
  const Error e = parse_error({m.data(), m.data() + 200});
  EXPECT_NE(std::string(e.what()).find("file truncated at byte offset 200: metadata count 26"),
            std::string::npos)
      << e.what();
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
  // 16 is ggml's IQ2_XXS, which afm does not read; 12 (Q4_K) is read, in whole super-blocks.
  expect_format_error(with_tensor("t", {8}, 16, 0, 64), "unknown or unsupported type 16");
  expect_format_error(with_tensor("t", {8}, 12, 0, 64), "row length 8 is not a multiple of the q4_k block size");
  expect_format_error(with_tensor("t", {8}, 99, 0, 64), "unknown or unsupported type 99");
  expect_format_error(with_tensor("t", {0}, 0, 0, 64), "zero dimension");
  expect_format_error(with_tensor("t", {1, 1, 1, 1, 1}, 0, 0, 64), "5 dimensions");
  expect_format_error(with_tensor("t", {30}, 8, 0, 64), "not a multiple of the q8_0 block size");
  // astc6x6 (129) is a tile type: a vector has no tiles; a 7 x 13 matrix is 2 x 3 tiles of 18
  // bytes, 108 bytes, so 64 bytes of data are a truncated file.
  expect_format_error(with_tensor("t", {36}, 129, 0, 64), "astc6x6 is a tile type");
  expect_format_error(with_tensor("t", {13, 7}, 129, 0, 64), "file truncated");
  expect_format_error(with_tensor("t", {8}, 0, 16, 64), "not aligned");
  expect_format_error(with_tensor("t", {8}, 0, 64, 64), "32 bytes past the end of the file");
  expect_format_error(with_tensor("t", {100}, 0, 0, 64), "file truncated");
  expect_format_error(with_tensor("t", {8}, 0, uint64_t{1} << 60, 64), "outside");
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
