// Token shards: writer/reader round trip, thread-count independence, the split, bad files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/document_io.h"
#include "data/hash_mix.h"
#include "data/shard_builder.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "data_pipeline/test_util.h"

namespace afm::data {
namespace {

namespace fs = std::filesystem;
using afm::data::testing::fresh_dir;
using afm::data::testing::read_text;
using afm::data::testing::write_text;

// 400 ids, "<|endoftext|>" = 0 (a tiny byte-level BPE fixture).
const std::string kTokenizer = "tests/data/hf/qwen2/tokenizer.json";

std::string docs_file(const fs::path& dir, int n, const std::string& name = "docs.txt") {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "Document " + std::to_string(i) + ": the quick brown fox";
    for (int k = 0; k < i % 7; ++k) text += " jumps over the lazy dog";
    if (i % 5 == 0) text += " <|im_start|>special";
    text += "\n\f\n";
  }
  write_text(dir / name, text);
  return (dir / name).string();
}

ShardOptions options(const std::vector<std::string>& inputs, const fs::path& out) {
  ShardOptions o;
  o.tokenizer_path = kTokenizer;
  o.inputs = inputs;
  o.out_dir = out;
  o.val_fraction = 0.2;
  o.seed = 11;
  o.shard_tokens = 300;
  o.progress = false;
  return o;
}

std::vector<uint32_t> all_tokens(const fs::path& dir, const SplitMeta& split) {
  std::vector<uint32_t> out;
  for (const std::string& name : split.shards) {
    const ShardReader r = ShardReader::open((dir / name).string(), /*verify_tokens=*/true);
    for (uint64_t i = 0; i < r.n_tokens(); ++i) out.push_back(r.token(i));
  }
  return out;
}

TEST(Shards, RoundTripMatchesTheTokenizer) {
  const fs::path dir = fresh_dir("shards_roundtrip");
  const std::string input = docs_file(dir, 120);
  const ShardResult r = build_shards(options({input}, dir / "out"));
  const ShardMeta meta = load_shard_meta(dir / "out");
  EXPECT_EQ(meta.to_json(), r.meta.to_json());
  EXPECT_EQ(meta.vocab_size, 400u);
  EXPECT_EQ(meta.eos_id, 0);
  EXPECT_EQ(meta.token_bytes, 2u);
  EXPECT_EQ(meta.tokenizer_sha256.size(), 64u);
  EXPECT_EQ(meta.train.documents + meta.val.documents, 120u);
  EXPECT_GT(meta.train.shards.size(), 1u);  // 300-token shards
  ASSERT_EQ(meta.inputs.size(), 1u);
  EXPECT_EQ(meta.inputs[0].documents, 120u);

  const auto tok = tokenizer::Tokenizer::from_json_file(kTokenizer);
  std::vector<uint32_t> want_train, want_val;
  const std::string text = read_text(input);
  const auto docs = split_documents(text);
  for (size_t i = 0; i < docs.size(); ++i) {
    auto& want = is_validation_document(11, i, 0.2) ? want_val : want_train;
    for (int32_t id : tok.encode(docs[i])) want.push_back(static_cast<uint32_t>(id));
    want.push_back(0);
  }
  EXPECT_EQ(all_tokens(dir / "out", meta.train), want_train);
  EXPECT_EQ(all_tokens(dir / "out", meta.val), want_val);
  EXPECT_EQ(want_train.size(), meta.train.tokens);
  // Special-token strings became their ids.
  EXPECT_NE(std::find(want_train.begin(), want_train.end(), 1u), want_train.end());

  for (const std::string& name : meta.train.shards) {
    const ShardReader s = ShardReader::open((dir / "out" / name).string());
    const uint64_t n = s.n_tokens();
    EXPECT_TRUE(n <= 300 || name == meta.train.shards.back());
    EXPECT_EQ(s.token(n - 1), 0u);  // shards end at a document boundary
  }
}

TEST(Shards, OutputDoesNotDependOnThreads) {
  const fs::path dir = fresh_dir("shards_threads");
  const std::vector<std::string> inputs = {docs_file(dir, 150, "a.txt"),
                                           docs_file(dir, 40, "b.txt")};
  ShardOptions one = options(inputs, dir / "one");
  ShardOptions four = options(inputs, dir / "four");
  four.threads = 4;
  const ShardResult a = build_shards(one);
  const ShardResult b = build_shards(four);
  EXPECT_EQ(a.meta.train.shards, b.meta.train.shards);
  for (const SplitMeta* split : {&a.meta.train, &a.meta.val}) {
    for (const std::string& name : split->shards) {
      EXPECT_EQ(read_text(dir / "one" / name), read_text(dir / "four" / name)) << name;
    }
  }
  EXPECT_EQ(read_text(dir / "one/meta.json"), read_text(dir / "four/meta.json"));
}

TEST(Shards, ValidationFractionIsHonoured) {
  for (double fraction : {0.0, 0.01, 0.1, 0.5, 1.0}) {
    int val = 0;
    constexpr int kDocs = 100000;
    for (int i = 0; i < kDocs; ++i) val += is_validation_document(3, i, fraction);
    EXPECT_NEAR(val / static_cast<double>(kDocs), fraction, 0.005) << fraction;
  }
  const fs::path dir = fresh_dir("shards_fraction");
  ShardOptions o = options({docs_file(dir, 1000)}, dir / "out");
  o.val_fraction = 0.1;
  const ShardResult r = build_shards(o);
  EXPECT_GT(r.meta.val.documents, 60u);
  EXPECT_LT(r.meta.val.documents, 140u);
}

TEST(Shards, BadOptionsAndTokenizersAreTypedErrors) {
  const fs::path dir = fresh_dir("shards_bad");
  const std::string input = docs_file(dir, 3);
  auto code_of = [](const ShardOptions& o) {
    try {
      build_shards(o);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::kInternal;
  };
  ShardOptions o = options({input}, dir / "out");
  o.val_fraction = 1.5;
  EXPECT_EQ(code_of(o), ErrorCode::kInvalidArgument);
  o = options({}, dir / "out");
  EXPECT_EQ(code_of(o), ErrorCode::kInvalidArgument);
  o = options({(dir / "missing.txt").string()}, dir / "out");
  EXPECT_EQ(code_of(o), ErrorCode::kIo);
  o = options({input}, dir / "out");
  o.eos_token = "<|nope|>";
  EXPECT_EQ(code_of(o), ErrorCode::kInvalidArgument);

  // A vocabulary without "<|endoftext|>" and without an eos token needs --eos.
  auto j = nlohmann::json::parse(read_text(kTokenizer));
  j["added_tokens"][0]["content"] = "<|sep|>";
  j["model"]["vocab"].erase("<|endoftext|>");
  j["model"]["vocab"]["<|sep|>"] = 0;
  write_text(dir / "tok/tokenizer.json", j.dump());
  o = options({input}, dir / "out");
  o.tokenizer_path = (dir / "tok/tokenizer.json").string();
  try {
    build_shards(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("--eos"), std::string::npos) << e.what();
  }
  o.eos_token = "<|sep|>";
  EXPECT_EQ(build_shards(o).meta.eos_id, 0);
}

// A valid shard's bytes with one change, and the error it must give.
void expect_shard_error(std::vector<uint8_t> bytes, ErrorCode code, const std::string& words,
                        bool verify = false) {
  try {
    ShardView::parse(bytes, "s.bin", verify);
    ADD_FAILURE() << "no error for: " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find("shard s.bin: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ShardReader, CorruptHeadersAreTypedErrors) {
  const fs::path dir = fresh_dir("shards_corrupt");
  const std::string path = (dir / "s.bin").string();
  write_shard(path, std::vector<uint32_t>{1, 2, 399, 0}, 400);
  const std::string good = read_text(path);
  const std::vector<uint8_t> bytes(good.begin(), good.end());
  ASSERT_EQ(bytes.size(), 32u + 8u);
  const ShardView v = ShardView::parse(bytes, "s.bin", true);
  EXPECT_EQ(v.n_tokens(), 4u);
  EXPECT_EQ(v.token(2), 399u);
  std::vector<int64_t> out(2);
  v.read(2, out);
  EXPECT_EQ(out, (std::vector<int64_t>{399, 0}));
  EXPECT_THROW(v.read(3, out), Error);

  auto with = [&](size_t at, uint8_t value) {
    std::vector<uint8_t> b = bytes;
    b[at] = value;
    return b;
  };
  expect_shard_error({bytes.begin(), bytes.begin() + 20}, ErrorCode::kFormat, "truncated header");
  expect_shard_error(with(0, 'X'), ErrorCode::kFormat, "bad magic");
  expect_shard_error(with(8, 2), ErrorCode::kUnsupported, "version 2");
  expect_shard_error(with(12, 3), ErrorCode::kFormat, "token_bytes");
  expect_shard_error(with(12, 4), ErrorCode::kFormat, "vocab_size");  // 400 ids need 2 bytes
  expect_shard_error(with(28, 1), ErrorCode::kFormat, "reserved");
  expect_shard_error(with(16, 5), ErrorCode::kFormat, "n_tokens 5");
  expect_shard_error(with(23, 0x80), ErrorCode::kFormat, "more bytes than the file has");
  expect_shard_error({bytes.begin(), bytes.end() - 1}, ErrorCode::kFormat, "truncated");
  expect_shard_error(with(36, 0x90), ErrorCode::kFormat, "token 2 is 400", /*verify=*/true);
  EXPECT_THROW(ShardReader::open((dir / "none.bin").string()), Error);
}

TEST(ShardReader, WideVocabulariesUseFourBytes) {
  const fs::path dir = fresh_dir("shards_wide");
  const std::string path = (dir / "w.bin").string();
  write_shard(path, std::vector<uint32_t>{70000, 5}, 100000);
  const ShardReader r = ShardReader::open(path, true);
  EXPECT_EQ(r.view().token_bytes(), 4u);
  EXPECT_EQ(r.token(0), 70000u);
}

TEST(ShardMetaFile, MissingOrMistypedFieldsAreNamed) {
  ShardMeta m;
  m.tokenizer_sha256 = "ab";
  m.vocab_size = 400;
  m.train.shards = {"train-00000.bin"};
  const std::string good = m.to_json().dump();
  EXPECT_EQ(parse_shard_meta(good, "meta.json").train.shards, m.train.shards);
  auto error_of = [](const nlohmann::json& j) {
    try {
      parse_shard_meta(j.dump(), "meta.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto j = nlohmann::json::parse(good);
  j["val"].erase("tokens");
  EXPECT_EQ(error_of(j), "meta.json: /val/tokens is missing");
  j = nlohmann::json::parse(good);
  j["train"]["shards"][0] = "../etc/passwd";
  EXPECT_EQ(error_of(j), "meta.json: /train/shards/0 is not a plain file name");
  j = nlohmann::json::parse(good);
  j["eos_id"] = 400;
  EXPECT_EQ(error_of(j), "meta.json: /eos_id is not below vocab_size");
  j = nlohmann::json::parse(good);
  j["vocab_size"] = "400";
  EXPECT_EQ(error_of(j), "meta.json: /vocab_size is not a non-negative integer");
  EXPECT_EQ(error_of(nlohmann::json::array()), "meta.json: / is not an object");
  EXPECT_THROW(parse_shard_meta("{not json", "meta.json"), Error);
  EXPECT_EQ(shard_paths("d", m, "train").at(0), fs::path("d/train-00000.bin"));
  EXPECT_THROW(shard_paths("d", m, "test"), Error);
}

}  // namespace
}  // namespace afm::data
