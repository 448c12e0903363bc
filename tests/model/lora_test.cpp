// Loading LoRA adapters (model/lora.h): every malformed or mismatched adapter is a typed error
// whose message names the file, the tensor and the shapes or hashes involved; an adapter
// without a base hash (as llama.cpp writes them) loads after the structural checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "adapter_merge.h"
#include "base/error.h"
#include "gguf/digest.h"
#include "gguf/writer.h"
#include "model/lora.h"
#include "model/lora_writer.h"
#include "model/tiny_models.h"

namespace afm::model {
namespace {

namespace fs = std::filesystem;

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("afm_lora_" + std::to_string(getpid()) + "_" + name);
}

gguf::File tiny_file(const std::string& arch, uint64_t seed = 1) {
  const fs::path path = temp(arch + std::to_string(seed) + ".gguf");
  testing::write_tiny_model(arch, path.string(), seed);
  gguf::File f = gguf::File::open(path.string());
  fs::remove(path);  // the mapping stays valid
  return f;
}

// An adapter written by hand: metadata as llama.cpp's converter writes it, no base hash.
struct HandAdapter {
  gguf::Writer w;
  explicit HandAdapter(const std::string& arch, const char* type = "adapter") {
    w.set("general.architecture", gguf::Value(arch));
    w.set("general.type", gguf::Value(type));
    w.set("adapter.type", gguf::Value("lora"));
    w.set("adapter.lora.alpha", gguf::Value(8.0f));
  }
  void tensor(const std::string& name, std::vector<uint64_t> shape) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    std::vector<uint8_t> bytes(n * sizeof(float), 0);
    w.add_tensor(name, gguf::TensorType::kF32, std::move(shape), bytes);
  }
  // q_dim = n_embd for the tiny models' attn_q ([n_embd, q_dim]).
  void pair(const std::string& base, const gguf::File& f, uint64_t rank) {
    const auto& s = f.get_tensor(base).shape;
    tensor(base + ".lora_a", {s[0], rank});
    tensor(base + ".lora_b", {rank, s[1]});
  }
  std::string write(const std::string& name) {
    const std::string path = temp(name).string();
    w.write(path);
    return path;
  }
};

// Runs fn, expects an afm::Error of `code` whose message contains every one of `parts`.
template <typename Fn>
void expect_error(Fn fn, ErrorCode code, std::initializer_list<std::string> parts) {
  try {
    fn();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(LoraLoad, WrittenAdapterLoadsWithItsHash) {
  const gguf::File base = tiny_file("llama");
  const std::string path = temp("ok.gguf").string();
  cli::RandomAdapterOptions o;
  o.rank = 4;
  cli::write_random_adapter(base, o, path);
  const auto a = LoraAdapter::load(path, base);
  EXPECT_EQ(a->base_sha256(), gguf::data_section_sha256(base));
  EXPECT_EQ(a->architecture(), "llama");
  const LoraPair* q = a->find("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->rank, 4);
  EXPECT_FLOAT_EQ(a->scale_for(*q, 0.5f), 32.0f / 4 * 0.5f);
  fs::remove(path);
}

TEST(LoraLoad, WrongBaseHashNamesBothHashes) {
  const gguf::File base = tiny_file("llama", 1), other = tiny_file("llama", 2);
  const std::string path = temp("hash.gguf").string();
  cli::write_random_adapter(base, {}, path);
  expect_error([&] { LoraAdapter::load(path, other); }, ErrorCode::kInvalidArgument,
               {path, gguf::data_section_sha256(base), gguf::data_section_sha256(other)});
  fs::remove(path);
}

TEST(LoraLoad, WrongArchitecture) {
  const gguf::File llama = tiny_file("llama"), qwen = tiny_file("qwen2");
  HandAdapter h("llama");
  h.pair("blk.0.attn_q.weight", llama, 2);
  const std::string path = h.write("arch.gguf");
  expect_error([&] { LoraAdapter::load(path, qwen); }, ErrorCode::kInvalidArgument,
               {"'llama'", "'qwen2'"});
  fs::remove(path);
}

TEST(LoraLoad, WithoutBaseHashLoadsAfterStructuralChecks) {
  const gguf::File base = tiny_file("llama");
  HandAdapter h("llama");
  h.pair("blk.1.ffn_down.weight", base, 2);
  h.tensor("blk.1.ffn_norm.weight", {base.get_tensor("blk.1.ffn_norm.weight").shape[0]});
  const std::string path = h.write("nohash.gguf");
  const auto a = LoraAdapter::load(path, base);
  EXPECT_TRUE(a->base_sha256().empty());
  EXPECT_EQ(a->pairs().size(), 1u);  // adapted norms are ignored, as llama.cpp does
  fs::remove(path);
}

TEST(LoraLoad, MissingBaseTensor) {
  const gguf::File base = tiny_file("llama");
  HandAdapter h("llama");
  h.tensor("blk.99.attn_q.weight.lora_a", {4, 2});
  h.tensor("blk.99.attn_q.weight.lora_b", {2, 4});
  const std::string path = h.write("missing.gguf");
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kNotFound,
               {"blk.99.attn_q.weight"});
  fs::remove(path);
}

TEST(LoraLoad, BadShapesNameTheTensorAndShapes) {
  const gguf::File base = tiny_file("llama");
  const auto& s = base.get_tensor("blk.0.attn_v.weight").shape;
  HandAdapter h("llama");
  h.tensor("blk.0.attn_v.weight.lora_a", {s[0] + 1, 2});
  h.tensor("blk.0.attn_v.weight.lora_b", {2, s[1]});
  const std::string path = h.write("shape.gguf");
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kFormat,
               {"blk.0.attn_v.weight", "[" + std::to_string(s[0] + 1) + ", 2]",
                "[" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + "]"});
  fs::remove(path);
}

TEST(LoraLoad, TransposedPairIsAShapeError) {
  const gguf::File base = tiny_file("llama");
  const auto& s = base.get_tensor("blk.0.ffn_up.weight").shape;  // [n_embd, n_ff]
  HandAdapter h("llama");
  h.tensor("blk.0.ffn_up.weight.lora_a", {2, s[0]});
  h.tensor("blk.0.ffn_up.weight.lora_b", {s[1], 2});
  const std::string path = h.write("transposed.gguf");
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kFormat,
               {"blk.0.ffn_up.weight", "lora_a"});
  fs::remove(path);
}

TEST(LoraLoad, HalfAPairAndStrayTensorsAreFormatErrors) {
  const gguf::File base = tiny_file("llama");
  HandAdapter h("llama");
  h.tensor("blk.0.attn_q.weight.lora_a", {base.get_tensor("blk.0.attn_q.weight").shape[0], 2});
  const std::string path = h.write("half.gguf");
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kFormat,
               {"blk.0.attn_q.weight", "no .lora_b"});
  HandAdapter stray("llama");
  stray.tensor("blk.0.attn_q.weight", {4});
  const std::string stray_path = stray.write("stray.gguf");
  expect_error([&] { LoraAdapter::load(stray_path, base); }, ErrorCode::kFormat,
               {"blk.0.attn_q.weight"});
  fs::remove(path);
  fs::remove(stray_path);
}

TEST(LoraLoad, EmbeddingAdaptersAreRefusedByName) {
  const gguf::File base = tiny_file("llama");
  HandAdapter h("llama");
  h.pair("token_embd.weight", base, 2);
  const std::string path = h.write("embd.gguf");
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kUnsupported,
               {"token_embd.weight"});
  fs::remove(path);
}

TEST(LoraLoad, AModelIsNotAnAdapter) {
  const gguf::File base = tiny_file("llama");
  HandAdapter h("llama", "model");
  const std::string path = h.write("model.gguf");
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kFormat, {"general.type"});
  fs::remove(path);
}

TEST(LoraLoad, TruncatedFileIsAFormatError) {
  const gguf::File base = tiny_file("llama");
  const std::string path = temp("cut.gguf").string();
  cli::write_random_adapter(base, {}, path);
  fs::resize_file(path, fs::file_size(path) - 100);
  expect_error([&] { LoraAdapter::load(path, base); }, ErrorCode::kFormat, {"truncated"});
  fs::remove(path);
}

TEST(LoraWriterTest, RefusesWrongSizesAndUnknownTensors) {
  const gguf::File base = tiny_file("llama");
  LoraWriter w(base, 8);
  const std::vector<float> few(3);
  expect_error([&] { w.add("blk.0.attn_q.weight", 2, few, few); }, ErrorCode::kInvalidArgument,
               {"blk.0.attn_q.weight", "rank 2"});
  expect_error([&] { w.add("blk.7.nothing.weight", 2, few, few); }, ErrorCode::kNotFound,
               {"blk.7.nothing.weight"});
}

}  // namespace
}  // namespace afm::model
