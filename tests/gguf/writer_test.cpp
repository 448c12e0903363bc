#include "gguf/writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/mapped_file.h"

namespace afm::gguf {
namespace {

namespace fs = std::filesystem;

TEST(GgufWriter, RejectsInvalidInput) {
  Writer w;
  w.set("a", Value(uint32_t{1}));
  EXPECT_THROW(w.set("a", Value(uint32_t{2})), Error);
  EXPECT_THROW(w.set("", Value(uint32_t{2})), Error);
  EXPECT_THROW(w.set("mixed", Value(Array{ValueType::kUint32, {Value(1.0f)}})), Error);
  EXPECT_THROW(w.set_alignment(48), Error);
  w.add_tensor("t", TensorType::kF32, {4}, std::vector<uint8_t>(16));
  EXPECT_THROW(w.add_tensor("t", TensorType::kF32, {4}, std::vector<uint8_t>(16)), Error);
  EXPECT_THROW(w.add_tensor("u", TensorType::kF32, {4}, std::vector<uint8_t>(15)), Error);
  EXPECT_THROW(w.add_tensor("q", TensorType::kQ8_0, {16}, std::vector<uint8_t>(17)), Error);
  EXPECT_THROW(w.add_tensor(std::string(64, 'n'), TensorType::kF32, {1}, std::vector<uint8_t>(4)),
               Error);
  EXPECT_EQ(Writer::tensor_bytes(TensorType::kQ4_0, {64, 3}), 18u * 2 * 3);
  EXPECT_EQ(Writer::tensor_bytes(TensorType::kBF16, {5, 7}), 70u);
}

// A producer that fails mid-write leaves the previous file untouched and no temporary behind.
TEST(GgufWriter, FailedWriteKeepsThePreviousFile) {
  fs::path dir = fs::temp_directory_path() / "afm_writer_atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string path = (dir / "model.gguf").string();
  { std::ofstream(path) << "previous contents"; }
  Writer w;
  w.set("k", Value(uint32_t{1}));
  w.add_tensor("t", TensorType::kF32, {4},
               [](std::vector<uint8_t>&) { throw Error(ErrorCode::kIo, "disk on fire"); });
  EXPECT_THROW(w.write(path), Error);
  std::ifstream in(path);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "previous contents");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(GgufWriter, ProducerSizeMismatchIsAnError) {
  std::string path = (fs::temp_directory_path() / "afm_writer_mismatch.gguf").string();
  Writer w;
  w.add_tensor("t", TensorType::kF32, {4}, [](std::vector<uint8_t>& out) { out.resize(3); });
  EXPECT_THROW(w.write(path), Error);
  EXPECT_FALSE(fs::exists(path));
}

TEST(GgufWriter, ReportsProgress) {
  std::string path = (fs::temp_directory_path() / "afm_writer_progress.gguf").string();
  Writer w;
  w.add_tensor("a", TensorType::kF32, {4}, std::vector<uint8_t>(16));
  w.add_tensor("b", TensorType::kF16, {4}, std::vector<uint8_t>(8));
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  w.write(path, [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); });
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1], std::make_pair(uint64_t{24}, uint64_t{24}));
  fs::remove(path);
}

}  // namespace
}  // namespace afm::gguf
