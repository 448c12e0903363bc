// SystemLanguageModel(base, adapter): sessions on an adapted model run the LoRA adapter
// unmerged over the shared base weights; scale 0 answers like the base; a missing or
// mismatched adapter makes the model unavailable with the loader's message, never a throw.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "afm/afm.h"
#include "framework/loaded_model.h"
#include "model/lora_writer.h"

namespace {

constexpr const char* kModel = "models/afm-device-21m.gguf";

afm::GenerationOptions greedy(int64_t n = 12) {
  afm::GenerationOptions o;
  o.maximum_response_tokens = n;
  return o;
}

// A seeded adapter on every layer's attn_q and ffn_down, strong enough to change greedy text.
std::string write_adapter(const afm::SystemLanguageModel& base) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("afm_session_lora_" + std::to_string(getpid()) + ".gguf"))
                               .string();
  const afm::gguf::File& file = base.loaded()->weights()->file();
  afm::model::LoraWriter w(file, 8);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0, 1);
  const int64_t rank = 8;
  for (const afm::gguf::TensorInfo& t : file.tensors()) {
    if (!t.name.ends_with("attn_q.weight") && !t.name.ends_with("ffn_down.weight")) continue;
    const int64_t in = static_cast<int64_t>(t.shape[0]), out = static_cast<int64_t>(t.shape[1]);
    std::vector<float> a(rank * in), b(out * rank);
    for (float& v : a) v = normal(rng) / std::sqrt(static_cast<float>(in));
    for (float& v : b) v = 1.5f * normal(rng);
    w.add(t.name, rank, a, b);
  }
  w.write(path);
  return path;
}

TEST(AdapterSession, AdapterChangesTheAnswerAndScaleZeroDoesNot) {
  afm::SystemLanguageModel base(kModel);
  ASSERT_TRUE(base.is_available()) << base.availability().reason;
  const std::string path = write_adapter(base);
  afm::SystemLanguageModel adapted(base, path), off(base, path, 0.0f);
  ASSERT_TRUE(adapted.is_available()) << adapted.availability().reason;
  EXPECT_EQ(adapted.loaded(), base.loaded());  // one copy of the base weights
  const std::string prompt = "Name a color.";
  const std::string want = afm::LanguageModelSession(base).respond(prompt, greedy()).content;
  EXPECT_NE(afm::LanguageModelSession(adapted).respond(prompt, greedy()).content, want);
  EXPECT_EQ(afm::LanguageModelSession(off).respond(prompt, greedy()).content, want);
  std::filesystem::remove(path);
}

TEST(AdapterSession, MissingAdapterMakesTheModelUnavailable) {
  afm::SystemLanguageModel base(kModel);
  afm::SystemLanguageModel adapted(base, "no/such/adapter.gguf");
  EXPECT_FALSE(adapted.is_available());
  EXPECT_NE(adapted.availability().reason.find("no/such/adapter.gguf"), std::string::npos);
  EXPECT_TRUE(base.is_available());
}

}  // namespace
