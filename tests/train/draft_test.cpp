// Draft-model distillation: the KL / CE / agreement terms against a reference computed by hand
// in double precision, the draft's shape and initialisation from a base, mixed batches, and a
// short run on a tiny base that lowers the held-out KL and exports a file with the base's
// tokenizer.
#include "train/draft.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/error.h"
#include "data/sft_records.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "shard_fixture.h"
#include "tiny_config.h"
#include "train/checkpoint.h"
#include "train/distill_loss.h"
#include "train/draft_data.h"
#include "train/draft_model.h"
#include "train/gguf_export.h"
#include "train/trainer.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;
using testing::tiny_config;

// A fixed batch: 4 positions, a vocabulary of 5; position 2 is padding.
constexpr int kN = 4, kV = 5;
const double kStudent[kN][kV] = {{0.3, -1.2, 2.0, 0.1, -0.4},
                                 {1.5, 0.2, -0.3, 0.9, 0.0},
                                 {9.0, -9.0, 3.0, 1.0, 2.0},
                                 {-0.7, 0.4, 0.8, -2.1, 1.1}};
const double kTeacher[kN][kV] = {{0.1, -0.5, 1.0, 2.2, -1.0},
                                 {2.0, 0.1, -1.0, 0.5, 0.3},
                                 {-4.0, 5.0, 0.0, 0.0, 1.0},
                                 {-1.0, 0.2, 1.5, -1.5, 0.9}};
const bool kValid[kN] = {true, true, false, true};
const int64_t kTargets[kN] = {-100, 1, 3, 0};

torch::Tensor tensor_of(const double (&x)[kN][kV]) {
  torch::Tensor t = torch::empty({kN, kV}, torch::kFloat32);
  for (int i = 0; i < kN; ++i)
    for (int v = 0; v < kV; ++v) t[i][v] = x[i][v];
  return t;
}

std::vector<double> softmax(const double* z, double temperature) {
  double m = z[0];
  for (int v = 1; v < kV; ++v) m = std::max(m, z[v]);
  std::vector<double> p(kV);
  double sum = 0;
  for (int v = 0; v < kV; ++v) sum += p[v] = std::exp((z[v] - m) / temperature);
  for (double& x : p) x /= sum;
  return p;
}

int argmax(const double* z) { return static_cast<int>(std::max_element(z, z + kV) - z); }

struct Reference {
  double kl = 0, ce = 0, agreement = 0, target_agreement = 0;
};

// The definitions of distill_loss.h, written out position by position.
Reference reference(double temperature) {
  Reference r;
  int positions = 0, targets = 0;
  for (int i = 0; i < kN; ++i) {
    if (!kValid[i]) continue;
    ++positions;
    const std::vector<double> p = softmax(kTeacher[i], temperature);
    const std::vector<double> q = softmax(kStudent[i], temperature);
    for (int v = 0; v < kV; ++v) r.kl += p[v] * (std::log(p[v]) - std::log(q[v]));
    r.agreement += argmax(kStudent[i]) == argmax(kTeacher[i]) ? 1 : 0;
    if (kTargets[i] >= 0) {
      ++targets;
      r.ce -= std::log(softmax(kStudent[i], 1.0)[kTargets[i]]);
      r.target_agreement += argmax(kStudent[i]) == argmax(kTeacher[i]) ? 1 : 0;
    }
  }
  r.kl /= positions, r.agreement /= positions, r.ce /= targets, r.target_agreement /= targets;
  return r;
}

DistillTerms terms(const torch::Tensor& student, double temperature) {
  torch::Tensor valid = torch::empty({kN}, torch::kBool),
                targets = torch::empty({kN}, torch::kInt64);
  for (int i = 0; i < kN; ++i) valid[i] = kValid[i], targets[i] = kTargets[i];
  return distill_terms(student, tensor_of(kTeacher), valid, targets, temperature);
}

TEST(DistillLoss, MatchesTheDefinitionComputedByHand) {
  for (const double temperature : {1.0, 2.0, 0.5}) {
    const Reference want = reference(temperature);
    const DistillTerms got = terms(tensor_of(kStudent), temperature);
    EXPECT_EQ(got.positions, 3);
    EXPECT_EQ(got.targets, 2);  // position 2 has a target but is padding
    EXPECT_NEAR(got.kl(), want.kl, 1e-6) << temperature;
    EXPECT_NEAR(got.ce(), want.ce, 1e-6) << temperature;
    EXPECT_NEAR(got.agreement(), want.agreement, 1e-12);
    EXPECT_NEAR(got.target_agreement(), want.target_agreement, 1e-12);
    const double t2 = temperature * temperature;
    EXPECT_NEAR(got.loss(temperature, 0.0).item<double>(), t2 * want.kl, 1e-5);
    EXPECT_NEAR(got.loss(temperature, 0.3).item<double>(), t2 * want.kl + 0.3 * want.ce, 1e-5);
  }
  // The fixture's own check: position 1 agrees, 0 and 3 do not.
  EXPECT_NEAR(reference(1.0).agreement, 1.0 / 3, 1e-12);
  EXPECT_NEAR(reference(1.0).target_agreement, 1.0 / 2, 1e-12);
}

// d mean KL / d student logits = (q - p) / positions at T = 1: zero at padding.
TEST(DistillLoss, GradientIsStudentMinusTeacherProbabilities) {
  torch::Tensor student = tensor_of(kStudent).requires_grad_(true);
  terms(student, 1.0).loss(1.0, 0.0).backward();
  for (int i = 0; i < kN; ++i) {
    const std::vector<double> p = softmax(kTeacher[i], 1.0), q = softmax(kStudent[i], 1.0);
    for (int v = 0; v < kV; ++v) {
      const double want = kValid[i] ? (q[v] - p[v]) / 3 : 0.0;
      EXPECT_NEAR(student.grad()[i][v].item<double>(), want, 1e-6) << i << "," << v;
    }
  }
}

TEST(DistillLoss, IdenticalLogitsGiveZeroKlAndFullAgreement) {
  const DistillTerms d =
      distill_terms(tensor_of(kTeacher), tensor_of(kTeacher), torch::ones({kN}, torch::kBool),
                    torch::full({kN}, -100, torch::kInt64), 1.0);
  EXPECT_NEAR(d.kl(), 0.0, 1e-7);
  EXPECT_EQ(d.agreement(), 1.0);
  EXPECT_EQ(d.targets, 0);
  EXPECT_EQ(d.loss(1.0, 1.0).item<double>(), d.loss(1.0, 0.0).item<double>());
}

ModelConfig base_config() {
  ModelConfig c = tiny_config("afm-device");  // 4 layers of width 64, Block 2 from layer 3
  c.head_dim = 16;
  return c;
}

void expect_invalid(const DraftShape& s, const std::string& names) {
  try {
    draft_config(base_config(), s);
    ADD_FAILURE() << "accepted a shape that should name " << names;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(DraftConfig, DerivesTheShapeFromTheBase) {
  const ModelConfig c = draft_config(base_config(), {});
  EXPECT_EQ(c.arch, "afm-device");
  EXPECT_EQ(c.block_count, 2);
  EXPECT_EQ(c.effective_block1_layers(), 2);  // every draft layer owns its K/V
  EXPECT_EQ(c.embedding_length, 64);
  EXPECT_EQ(c.head_count, 4);
  EXPECT_EQ(c.head_count_kv, 2);
  EXPECT_EQ(c.feed_forward_length, 96);
  EXPECT_EQ(c.vocab_size, 96);
  EXPECT_EQ(c.context_length, 64);
  const ModelConfig narrow =
      draft_config(base_config(), {.arch = "llama", .layers = 1, .width = 32, .heads = 2});
  EXPECT_EQ(narrow.arch, "llama");
  EXPECT_EQ(narrow.effective_head_dim(), 16);
  EXPECT_EQ(narrow.head_count_kv, 2);
  EXPECT_EQ(narrow.feed_forward_length, 64);  // 96 x 32 / 64, rounded to a multiple of 32
  EXPECT_EQ(draft_config(tiny_config("afm-server"), {}).arch, "afm-device");
}

TEST(DraftConfig, ShapesTheBaseCannotTakeAreErrorsNamingTheOption) {
  expect_invalid({.heads = 5}, "--heads 5");
  expect_invalid({.heads = 4, .kv_heads = 3}, "--kv-heads 3");
  expect_invalid({.arch = "afm-server"}, "--arch afm-server");
  expect_invalid({.layers = 0}, "--layers");
}

TEST(DraftInit, CopiesTheBasesEmbeddingAndFirstLayersWhereShapesMatch) {
  torch::NoGradGuard no_grad;
  const auto base = make_language_model(base_config(), 1);
  auto same = [](const LanguageModel& m, const LanguageModel& b, const std::string& name) {
    for (const NamedParameter& p : m.gguf_parameters())
      for (const NamedParameter& q : b.gguf_parameters())
        if (p.gguf_name == name && q.gguf_name == name) return p.tensor.equal(q.tensor);
    ADD_FAILURE() << "no tensor " << name;
    return false;
  };
  const ModelConfig shape = draft_config(base_config(), {});
  auto full = make_language_model(shape, 2);
  EXPECT_EQ(initialise_draft(*full, *base, DraftInit::kBase),
            static_cast<int64_t>(full->gguf_parameters().size()));
  for (const char* n : {"token_embd.weight", "output_norm.weight", "blk.0.attn_k.weight",
                        "blk.1.ffn_down.weight", "blk.1.attn_q_norm.weight"})
    EXPECT_TRUE(same(*full, *base, n)) << n;
  auto embeddings = make_language_model(shape, 2);
  EXPECT_EQ(initialise_draft(*embeddings, *base, DraftInit::kEmbeddings), 2);
  EXPECT_TRUE(same(*embeddings, *base, "token_embd.weight"));
  EXPECT_FALSE(same(*embeddings, *base, "blk.0.attn_q.weight"));
  auto narrow = make_language_model(draft_config(base_config(), {.width = 32, .heads = 2}), 2);
  EXPECT_EQ(initialise_draft(*narrow, *base, DraftInit::kBase), 0);
}

class DraftRun : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("afm_draft_test_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A tiny afm-device base pretrained for a few steps on the shards (a teacher whose greedy
  // token follows the stream, not the current token), with a tokenizer of `vocab` made-up
  // tokens.
  std::string write_base(int64_t vocab) {
    const std::string tok = (root_ / "tok.gguf").string();
    gguf::Writer w;
    w.set("general.architecture", gguf::Value(std::string("tokenizer")));
    w.set("tokenizer.ggml.model", gguf::Value(std::string("gpt2")));
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < vocab; ++i) tokens.push_back("t" + std::to_string(i));
    w.set("tokenizer.ggml.tokens", gguf::Value::string_array(tokens));
    w.write(tok);
    TrainConfig c;
    c.model = base_config();
    c.model.vocab_size = vocab;
    c.shards = (root_ / "shards").string();
    c.seq_len = 32;
    c.optim.lr = 1e-2, c.optim.min_lr = 1e-3, c.optim.warmup_steps = 5, c.optim.steps = 40;
    c.eval_every = 0, c.out_dir = (root_ / "teacher").string(), c.checkpoint_every = 0;
    run_pretraining(c, {.threads = 1, .cpu_bf16 = CpuBf16::kOff});
    auto base = make_language_model(c.model, 0);
    load_checkpoint(c.out_dir, *base, nullptr);
    const std::string path = (root_ / "base.gguf").string();
    export_gguf(*base, {gguf::TensorType::kF32, tok, "tiny"}, path);
    return path;
  }

  DraftOptions options(const std::string& base) {
    DraftOptions o;
    o.base = base;
    o.shards = (root_ / "shards").string();
    o.out_dir = (root_ / "run").string();
    o.shape.layers = 1;
    o.init = DraftInit::kRandom;  // all to learn
    o.seq_len = 32;
    o.optim.steps = 30, o.optim.batch_size = 8, o.optim.lr = 3e-3, o.optim.min_lr = 3e-4;
    o.optim.warmup_steps = 2, o.optim.weight_decay = 0;
    o.eval_every = 30, o.eval_batches = 4, o.log_every = 10, o.checkpoint_every = 0;
    o.export_type = gguf::TensorType::kF32;
    o.run.threads = 1;
    o.run.cpu_bf16 = CpuBf16::kOff;
    return o;
  }

  std::vector<nlohmann::json> evaluations() const {
    std::ifstream in(root_ / "run" / "log.jsonl");
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.contains("val_kl")) out.push_back(j);
    }
    return out;
  }

  fs::path root_;
};

TEST_F(DraftRun, LowersHeldOutKlAndExportsTheBasesTokenizer) {
  testing::write_tiny_shards((root_ / "shards").string(), 96, 20000, 2000);
  const std::string base = write_base(96);
  const DraftResult r = run_draft(options(base));
  const std::vector<nlohmann::json> evals = evaluations();
  ASSERT_EQ(evals.size(), 2u);  // step 0 and the last step
  // Measured: KL 3.26 -> 0.93, agreement 0.001 -> 0.92 (the random draft starts out
  // predicting its current token, the teacher the stream's next one).
  EXPECT_LT(evals[1]["val_kl"].get<double>(), 0.5 * evals[0]["val_kl"].get<double>());
  EXPECT_GT(evals[1]["val_agreement"].get<double>(), evals[0]["val_agreement"].get<double>() + 0.5);
  EXPECT_EQ(r.copied_tensors, 0);
  ASSERT_FALSE(r.model_path.empty());
  const gguf::File draft = gguf::File::open(r.model_path), teacher = gguf::File::open(base);
  EXPECT_EQ(draft.find("afm-device.block_count")->as_u64(""), 1u);
  EXPECT_EQ(draft.find("tokenizer.ggml.tokens")->as_array("").items,
            teacher.find("tokenizer.ggml.tokens")->as_array("").items);
}

TEST_F(DraftRun, DataOfAnotherVocabularyIsAnError) {
  testing::write_tiny_shards((root_ / "shards").string(), 96, 20000, 2000);
  const std::string base = write_base(96);
  fs::remove_all(root_ / "shards");
  testing::write_tiny_shards((root_ / "shards").string(), 64, 20000, 2000);
  try {
    run_draft(options(base));
    FAIL() << "accepted shards of another vocabulary";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("vocab_size 64"), std::string::npos) << e.what();
  }
}

// Both sources: each micro-batch holds both kinds of row, the windows as one-document packed
// rows, and the padding of conversation rows is not a valid position.
TEST_F(DraftRun, MixedBatchesHoldWindowsAndConversations) {
  testing::write_tiny_shards((root_ / "shards").string(), 96, 20000, 2000);
  const fs::path sft = root_ / "sft";
  fs::create_directories(sft);
  data::SftRecordFile f{96, {}};
  for (int32_t i = 0; i < 40; ++i) {
    data::SftRecord r;
    for (int32_t j = 0; j < 10; ++j) r.tokens.push_back((i + j) % 96), r.trained.push_back(j > 4);
    f.records.push_back(r);
  }
  data::write_sft_records((sft / "train.sft").string(), f);
  data::write_sft_records((sft / "val.sft").string(), f);
  std::ofstream(sft / "meta.json") << "{}";
  DraftDataOptions o{(root_ / "shards").string(), sft.string(), 0.25, 8, 32, 2, 1, 96};
  const auto data = open_draft_data(o);
  const TrainBatch b = data->train(3, 0);
  ASSERT_EQ(b.input.size(0), 8);
  ASSERT_TRUE(b.packing.packed());
  const torch::Tensor valid = valid_positions(b);
  EXPECT_TRUE(valid.slice(0, 0, 6).all().item<bool>());       // 6 windows
  EXPECT_FALSE(valid.slice(0, 6, 8).all().item<bool>());      // 2 packed rows with padding
  EXPECT_EQ(b.packing.positions[5][31].item<int64_t>(), 31);  // a window counts from 0
  EXPECT_EQ(data->eval_count(), 2 + 2);
  EXPECT_TRUE(b.input.equal(data->train(3, 0).input));  // by coordinates
}

}  // namespace
}  // namespace afm::train
