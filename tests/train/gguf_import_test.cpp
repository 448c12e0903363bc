// GGUF import, the inverse of the export: a model exported to f32 comes back bit for bit with
// the same config and logits; quantized exports come back within their rounding; the shipped
// afm-device-21m imports with its metadata's config; bad files are typed errors naming the
// key or tensor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "tiny_config.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

// The shared tiny configuration with a RoPE base and a QK-norm epsilon that f32 storage does
// not hold exactly (both must come back as written).
ModelConfig tiny_config(const std::string& arch) {
  ModelConfig c = testing::tiny_config(arch);
  if (arch == "llama") c.qk_norm_epsilon = 1e-5;  // llama files do not store it: the default
  c.rope_freq_base = 50000;
  return c;
}

// Norms away from 1 and matrices large enough that logits span several units.
void redraw_weights(LanguageModel& model) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(7);
  for (const NamedParameter& p : model.gguf_parameters()) {
    const double std = p.tensor.dim() == 1 ? 0.1 : p.gguf_name == "token_embd.weight" ? 1.0 : 0.15;
    p.tensor.copy_((p.tensor.dim() == 1 ? 1.0 : 0.0) + std * torch::randn_like(p.tensor));
  }
}

torch::Tensor logits_of(LanguageModel& model) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 19; ++i) ids.push_back((i * 37 + 11) % model.config().vocab_size);
  torch::NoGradGuard no_grad;
  return model.forward(torch::tensor(ids).unsqueeze(0));
}

// A GGUF file taken apart, so tests can break one thing and write it back.
struct TensorPart {
  std::string name;
  gguf::TensorType type;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};
struct FileParts {
  std::vector<gguf::KeyValue> metadata;
  std::vector<TensorPart> tensors;
};

FileParts parts_of(const fs::path& path) {
  const gguf::File file = gguf::File::open(path.string());
  FileParts parts{file.metadata(), {}};
  for (const gguf::TensorInfo& t : file.tensors())
    parts.tensors.push_back({t.name, t.type, t.shape, {t.data, t.data + t.n_bytes}});
  return parts;
}

void write_parts(const FileParts& parts, const fs::path& path) {
  gguf::Writer w;
  for (const auto& [key, value] : parts.metadata) w.set(key, value);
  for (const TensorPart& t : parts.tensors) w.add_tensor(t.name, t.type, t.shape, t.bytes);
  w.write(path.string());
}

gguf::Value* find_key(FileParts& parts, const std::string& key) {
  for (auto& [k, v] : parts.metadata)
    if (k == key) return &v;
  return nullptr;
}

void erase_key(FileParts& parts, const std::string& key) {
  std::erase_if(parts.metadata, [&](const gguf::KeyValue& kv) { return kv.first == key; });
}

std::vector<uint8_t> f32_bytes(size_t n) { return std::vector<uint8_t>(n * 4, 0); }

class GgufImport : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("afm_gguf_import_test_" + std::to_string(getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Exports a redrawn tiny model of `arch` as `type`; returns the model.
  std::shared_ptr<LanguageModel> exported(const std::string& arch, gguf::TensorType type,
                                          const fs::path& path) {
    auto model = make_language_model(tiny_config(arch), 1);
    redraw_weights(*model);
    ExportOptions options;
    options.type = type;
    export_gguf(*model, options, path.string());
    return model;
  }

  // The error importing `parts` gives (a failure when it imports).
  Error import_error(const FileParts& parts) {
    const fs::path path = root_ / "bad.gguf";
    write_parts(parts, path);
    try {
      import_gguf_model(path.string());
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos)
          << "the message names the file: " << e.what();
      return e;
    }
    ADD_FAILURE() << "imported a bad file";
    return Error(ErrorCode::kInternal, "");
  }

  fs::path root_;
};

bool contains(const Error& e, const std::string& s) {
  return std::string(e.what()).find(s) != std::string::npos;
}

class GgufImportArch : public GgufImport, public ::testing::WithParamInterface<std::string> {};

TEST_P(GgufImportArch, F32ExportImportsBitForBitWithTheSameConfigAndLogits) {
  const fs::path path = root_ / "model.gguf";
  auto original = exported(GetParam(), gguf::TensorType::kF32, path);
  const ImportedModel imported = import_gguf_model(path.string());

  EXPECT_EQ(imported.config.to_json(), original->config().to_json());
  EXPECT_EQ(imported.model->config().to_json(), original->config().to_json());
  EXPECT_EQ(read_gguf_model_config(path.string()).to_json(), original->config().to_json());
  EXPECT_EQ(imported.tokenizer_note, "none (no tokenizer.ggml.tokens)");
  const auto& want = original->gguf_parameters();
  const auto& got = imported.model->gguf_parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].gguf_name, want[i].gguf_name);
    EXPECT_TRUE(torch::equal(got[i].tensor, want[i].tensor)) << want[i].gguf_name;
    EXPECT_TRUE(got[i].tensor.requires_grad()) << "imported parameters stay trainable";
  }
  const torch::Tensor expected = logits_of(*original);
  EXPECT_GT(expected.abs().max().item<float>(), 3.0f) << "weights too small for the check";
  EXPECT_TRUE(torch::equal(logits_of(*imported.model), expected));
}

INSTANTIATE_TEST_SUITE_P(Archs, GgufImportArch,
                         ::testing::Values("llama", "afm-device", "afm-server"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// Per tensor, the largest error relative to the tensor's largest magnitude: f16 and bf16 round
// each value (2^-11, 2^-9 relative); q8_0 rounds to half a step of amax/127 per 32-value block,
// plus 127 steps of the f16 scale's rounding; q4_0's steps are amax/8 and the extreme opposite
// the block's signed maximum is clamped a whole step. Logits (of order 35 with these weights)
// move by about 0.1%, 0.6%, 2% of their largest magnitude for f16, bf16, q8_0; q4_0 moves
// them by a quarter, so its logits are not compared.
TEST_F(GgufImport, QuantizedExportsImportWithinTheirRounding) {
  struct Case {
    gguf::TensorType type;
    double weight_tolerance, logit_tolerance;
  };
  const Case cases[] = {{gguf::TensorType::kF16, 1.0 / 2048, 0.005},
                        {gguf::TensorType::kBF16, 1.0 / 256, 0.03},
                        {gguf::TensorType::kQ8_0, 0.0045, 0.06},
                        {gguf::TensorType::kQ4_0, 0.13, 0}};
  for (const auto& [type, tolerance, logit_tolerance] : cases) {
    const std::string name(gguf::tensor_type_traits(type).name);
    const fs::path path = root_ / (name + ".gguf");
    auto original = exported("afm-device", type, path);
    const ImportedModel imported = import_gguf_model(path.string());
    const auto& want = original->gguf_parameters();
    const auto& got = imported.model->gguf_parameters();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const torch::Tensor& x = want[i].tensor;
      const float err = (got[i].tensor - x).abs().max().item<float>();
      if (x.dim() == 1) {
        EXPECT_EQ(err, 0.0f) << name << " " << want[i].gguf_name << ": vectors stay f32";
      } else {
        EXPECT_GT(err, 0.0f) << name << " " << want[i].gguf_name << " was not rounded";
        EXPECT_LE(err, tolerance * x.abs().max().item<float>()) << name << " " << want[i].gguf_name;
      }
    }
    const torch::Tensor expected = logits_of(*original);
    const float drift = (logits_of(*imported.model) - expected).abs().max().item<float>();
    if (logit_tolerance > 0) {
      EXPECT_LT(drift, logit_tolerance * expected.abs().max().item<float>()) << name;
    }
  }
}

TEST_F(GgufImport, ImportsOntoTheRequestedDevice) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const fs::path path = root_ / "model.gguf";
  auto original = exported("afm-server", gguf::TensorType::kF32, path);
  const ImportedModel imported = import_gguf_model(path.string(), torch::Device(torch::kCUDA, 0));
  for (size_t i = 0; i < original->gguf_parameters().size(); ++i) {
    const torch::Tensor& t = imported.model->gguf_parameters()[i].tensor;
    EXPECT_TRUE(t.is_cuda());
    EXPECT_TRUE(torch::equal(t.cpu(), original->gguf_parameters()[i].tensor));
  }
}

TEST_F(GgufImport, TheShippedModelImportsWithTheConfigItsMetadataStates) {
  const char* source = std::getenv("AFM_SOURCE_DIR");
  const fs::path path = fs::path(source != nullptr ? source : ".") / "models/afm-device-21m.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is not in this checkout";
  const ImportedModel m = import_gguf_model(path.string());
  const ModelConfig& c = m.config;
  EXPECT_EQ(m.model->config().to_json(), c.to_json());
  EXPECT_EQ(c.arch, "afm-device");
  EXPECT_EQ(c.vocab_size, 8192);
  EXPECT_EQ(c.context_length, 1024);
  EXPECT_EQ(c.embedding_length, 384);
  EXPECT_EQ(c.block_count, 12);
  EXPECT_EQ(c.feed_forward_length, 1024);
  EXPECT_EQ(c.head_count, 6);
  EXPECT_EQ(c.head_count_kv, 2);
  EXPECT_EQ(c.effective_head_dim(), 64);
  EXPECT_EQ(c.effective_block1_layers(), 8);
  EXPECT_EQ(c.rope_freq_base, 10000.0);
  EXPECT_EQ(c.rms_epsilon, 1e-5);
  EXPECT_EQ(c.qk_norm_epsilon, 1e-5);
  EXPECT_EQ(m.tokenizer_note, "gpt2 (pre: qwen2), 8192 tokens");
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());

  // Every value of the file is a parameter, and the model runs.
  const gguf::File file = gguf::File::open(path.string());
  uint64_t values = 0;
  for (const gguf::TensorInfo& t : file.tensors()) values += t.n_elements();
  EXPECT_EQ(c.parameter_count(), static_cast<int64_t>(values));
  EXPECT_EQ(m.model->gguf_parameters().size(), file.tensors().size());
  EXPECT_TRUE(torch::isfinite(logits_of(*m.model)).all().item<bool>());
}

TEST_F(GgufImport, BadFilesAreTypedErrorsNamingTheKeyOrTensor) {
  const fs::path good = root_ / "good.gguf";
  exported("afm-device", gguf::TensorType::kF32, good);
  const FileParts base = parts_of(good);

  FileParts p = base;  // a tensor the model needs is missing
  std::erase_if(p.tensors, [](const TensorPart& t) { return t.name == "blk.1.ffn_up.weight"; });
  Error e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "missing tensor blk.1.ffn_up.weight (shape [64, 96])")) << e.what();

  p = base;  // a tensor of the wrong shape
  for (TensorPart& t : p.tensors)
    if (t.name == "blk.0.attn_q.weight") {
      t.shape = {64, 32};
      t.bytes = f32_bytes(64 * 32);
    }
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "tensor blk.0.attn_q.weight has shape [64, 32]")) << e.what();
  EXPECT_TRUE(contains(e, "expects [64, 64]")) << e.what();

  p = base;  // a tensor the model has no use for (a Block-2 layer's K/V)
  p.tensors.push_back({"blk.3.attn_k.weight", gguf::TensorType::kF32, {64, 32}, f32_bytes(2048)});
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "tensor blk.3.attn_k.weight (shape [64, 32]) is not a parameter"))
      << e.what();

  p = base;  // an architecture without a training model
  *find_key(p, "general.architecture") = gguf::Value("qwen2");
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(contains(e, "general.architecture 'qwen2'")) << e.what();

  p = base;  // a missing key
  erase_key(p, "afm-device.kv_share.block1_layers");
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "missing metadata key afm-device.kv_share.block1_layers")) << e.what();

  p = base;  // a key of the wrong type
  *find_key(p, "afm-device.vocab_size") = gguf::Value("96");
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "afm-device.vocab_size")) << e.what();

  p = base;  // a key out of range
  *find_key(p, "afm-device.attention.head_count") = gguf::Value(uint32_t{0});
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "afm-device.attention.head_count = 0 is out of range")) << e.what();

  p = base;  // keys the config rejects
  *find_key(p, "afm-device.attention.head_count_kv") = gguf::Value(uint32_t{3});
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "/head_count_kv: must divide head_count")) << e.what();

  p = base;  // a corrupt layer count is refused before a huge model is built
  *find_key(p, "afm-device.block_count") = gguf::Value(uint32_t{1u << 31});
  *find_key(p, "afm-device.kv_share.block1_layers") = gguf::Value(uint32_t{3});
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "describes 2147483648 layers")) << e.what();

  p = base;  // a corrupt width likewise
  *find_key(p, "afm-device.feed_forward_length") = gguf::Value(uint32_t{1u << 30});
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kFormat);
  EXPECT_TRUE(contains(e, "parameters, the file's tensors hold")) << e.what();

  p = base;  // a value the training models cannot represent
  *find_key(p, "afm-device.attention.value_length") = gguf::Value(uint32_t{32});
  e = import_error(p);
  EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(contains(e, "afm-device.attention.value_length 32")) << e.what();

  EXPECT_THROW(import_gguf_model((root_ / "absent.gguf").string()), Error);
}

}  // namespace
}  // namespace afm::train
