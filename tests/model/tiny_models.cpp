#include "tiny_models.h"

#include <functional>
#include <map>
#include <random>
#include <vector>

#include "base/error.h"
#include "gguf/writer.h"
#include "quant/tensor_encode.h"

namespace afm::model::testing {
namespace {

constexpr int64_t kEmbd = 64, kHead = 4, kHeadKv = 2, kHeadDim = 16, kFf = 96, kVocab = 160;

class TinyWriter {
 public:
  TinyWriter(const std::string& arch, uint64_t seed, gguf::TensorType matrix_type)
      : arch_(arch), rng_(seed), matrix_type_(matrix_type) {
    w_.set("general.architecture", gguf::Value(arch));
    u32("embedding_length", kEmbd);
    u32("feed_forward_length", kFf);
    u32("attention.head_count", kHead);
    u32("attention.head_count_kv", kHeadKv);
    u32("context_length", 256);
    w_.set(arch + ".attention.layer_norm_rms_epsilon", gguf::Value(1e-5f));
    w_.set(arch + ".rope.freq_base", gguf::Value(10000.0f));
  }
  void u32(const std::string& key, int64_t v) {
    w_.set(arch_ + "." + key, gguf::Value(static_cast<uint32_t>(v)));
  }
  void str(const std::string& key, const std::string& v) { w_.set(arch_ + "." + key, gguf::Value(v)); }
  void f32(const std::string& key, float v) { w_.set(arch_ + "." + key, gguf::Value(v)); }
  // A tensor of numpy-order shape `dims` (rows last-to-first reversed for GGUF).
  void tensor(const std::string& name, std::vector<uint64_t> dims, float scale, float offset = 0,
              gguf::TensorType type = gguf::TensorType::kF32) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    std::vector<float> v(n);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& x : v) x = offset + scale * normal(rng_);
    std::vector<uint64_t> shape(dims.rbegin(), dims.rend());
    std::vector<uint8_t> bytes;
    quant::encode_tensor(v.data(), v.size(), type, bytes);
    w_.add_tensor(name, type, shape, bytes);
  }
  void norm(const std::string& name, int64_t n) { tensor(name, {static_cast<uint64_t>(n)}, 0.05f, 1.0f); }
  void matrix(const std::string& name, int64_t rows, int64_t cols) {
    tensor(name, {static_cast<uint64_t>(rows), static_cast<uint64_t>(cols)}, 0.08f, 0, matrix_type_);
  }
  void scale(const std::string& name, float value) { tensor(name, {1}, 0.0f, value); }
  void embeddings() {
    tensor("token_embd.weight", {kVocab, kEmbd}, 1.0f);
    norm("output_norm.weight", kEmbd);
  }
  // p: tensor name prefix ("blk.3."). with_kv false: a KV-sharing layer.
  void attention(const std::string& p, bool with_kv, bool qk_norm, bool bias) {
    norm(p + "attn_norm.weight", kEmbd);
    matrix(p + "attn_q.weight", kHead * kHeadDim, kEmbd);
    matrix(p + "attn_output.weight", kEmbd, kHead * kHeadDim);
    if (with_kv) {
      matrix(p + "attn_k.weight", kHeadKv * kHeadDim, kEmbd);
      matrix(p + "attn_v.weight", kHeadKv * kHeadDim, kEmbd);
    }
    if (qk_norm) {
      norm(p + "attn_q_norm.weight", kHeadDim);
      if (with_kv) norm(p + "attn_k_norm.weight", kHeadDim);
    }
    if (bias) {
      tensor(p + "attn_q.bias", {kHead * kHeadDim}, 0.05f);
      tensor(p + "attn_k.bias", {kHeadKv * kHeadDim}, 0.05f);
      tensor(p + "attn_v.bias", {kHeadKv * kHeadDim}, 0.05f);
    }
  }
  void ffn(const std::string& p) {
    norm(p + "ffn_norm.weight", kEmbd);
    matrix(p + "ffn_gate.weight", kFf, kEmbd);
    matrix(p + "ffn_up.weight", kFf, kEmbd);
    matrix(p + "ffn_down.weight", kEmbd, kFf);
  }
  void moe(const std::string& p, int64_t experts, int64_t ff) {
    norm(p + "ffn_norm.weight", kEmbd);
    tensor(p + "ffn_gate_inp.weight", {static_cast<uint64_t>(experts), kEmbd}, 0.3f);
    const auto e = static_cast<uint64_t>(experts), f = static_cast<uint64_t>(ff);
    tensor(p + "ffn_gate_exps.weight", {e, f, kEmbd}, 0.08f, 0, matrix_type_);
    tensor(p + "ffn_up_exps.weight", {e, f, kEmbd}, 0.08f, 0, matrix_type_);
    tensor(p + "ffn_down_exps.weight", {e, kEmbd, f}, 0.08f, 0, matrix_type_);
  }
  void write(const std::string& path) {
    u32("attention.key_length", kHeadDim);
    w_.write(path);
  }

 private:
  std::string arch_;
  std::mt19937_64 rng_;
  gguf::TensorType matrix_type_;
  gguf::Writer w_;
};

void dense(const std::string& arch, const std::string& path, uint64_t seed,
           gguf::TensorType type, bool qk_norm, bool bias, int64_t layers = 3) {
  TinyWriter w(arch, seed, type);
  w.u32("block_count", layers);
  w.embeddings();
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    w.attention(p, true, qk_norm, bias);
    w.ffn(p);
  }
  w.write(path);
}

// Phi-3: q/k/v fused in attn_qkv, gate/up in ffn_up; a window shorter than the tests' prompts.
void phi3(const std::string& path, uint64_t seed, gguf::TensorType type) {
  TinyWriter w("phi3", seed, type);
  const int64_t layers = 3;
  w.u32("block_count", layers);
  w.u32("attention.sliding_window", 5);
  w.embeddings();
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    w.norm(p + "attn_norm.weight", kEmbd);
    w.matrix(p + "attn_qkv.weight", (kHead + 2 * kHeadKv) * kHeadDim, kEmbd);
    w.matrix(p + "attn_output.weight", kEmbd, kHead * kHeadDim);
    w.norm(p + "ffn_norm.weight", kEmbd);
    w.matrix(p + "ffn_up.weight", 2 * kFf, kEmbd);
    w.matrix(p + "ffn_down.weight", kEmbd, kFf);
  }
  w.write(path);
}

// Gemma 2 / 3: post-norms, soft-capping (2), QK-norm and a local RoPE base (3), a window in
// all but every 2nd / 6th layer.
void gemma(const std::string& arch, const std::string& path, uint64_t seed, gguf::TensorType type) {
  TinyWriter w(arch, seed, type);
  const bool v3 = arch == "gemma3";
  const int64_t layers = v3 ? 6 : 3;
  w.u32("block_count", layers);
  w.u32("attention.sliding_window", 5);
  if (v3) {
    w.f32("rope.freq_base_swa", 500.0f);
  } else {
    w.f32("attn_logit_softcapping", 5.0f);
    w.f32("final_logit_softcapping", 3.0f);
  }
  w.embeddings();
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    w.attention(p, true, v3, false);
    w.norm(p + "post_attention_norm.weight", kEmbd);
    w.ffn(p);
    w.norm(p + "post_ffw_norm.weight", kEmbd);
  }
  w.write(path);
}

void afm_device(const std::string& path, uint64_t seed, gguf::TensorType type) {
  TinyWriter w("afm-device", seed, type);
  const int64_t layers = 5, block1 = 3;
  w.u32("block_count", layers);
  w.u32("kv_share.block1_layers", block1);
  w.embeddings();
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    w.attention(p, i < block1, true, false);
    w.ffn(p);
    if (i == 1) {  // one layer with learned int8 K/V scales
      w.scale(p + "attn_k_scale.weight", 0.03f);
      w.scale(p + "attn_v_scale.weight", 0.01f);
    }
  }
  w.write(path);
}

void afm_server(const std::string& path, uint64_t seed, gguf::TensorType type) {
  TinyWriter w("afm-server", seed, type);
  const int64_t tracks = 2, layers = 4, experts = 4, ff_exp = 32;
  w.u32("block_count", layers);
  w.u32("tracks", tracks);
  w.u32("track_block_depth", 2);
  w.u32("expert_count", experts);
  w.u32("expert_used_count", 2);
  w.u32("expert_feed_forward_length", ff_exp);
  w.u32("moe_every", 2);
  w.u32("attention.sliding_window", 3);
  w.u32("attention.global_every", 2);
  w.str("track_merge", "mean");
  w.embeddings();
  for (int64_t t = 0; t < tracks; ++t) {
    for (int64_t n = 0; n < layers; ++n) {
      const std::string p = "trk." + std::to_string(t) + ".blk." + std::to_string(n) + ".";
      w.attention(p, true, true, false);
      if ((n + 1) % 2 == 0) {
        w.moe(p, experts, ff_exp);
      } else {
        w.ffn(p);
      }
      if (t == 1 && n == 2) {
        w.scale(p + "attn_k_scale.weight", 0.03f);
        w.scale(p + "attn_v_scale.weight", 0.01f);
      }
    }
  }
  w.write(path);
}

}  // namespace

void write_tiny_model(const std::string& arch, const std::string& path, uint64_t seed,
                      gguf::TensorType type) {
  using Maker = std::function<void()>;
  const std::map<std::string, Maker> makers{
      {"llama", [&] { dense("llama", path, seed, type, false, false); }},
      {"qwen2", [&] { dense("qwen2", path, seed, type, false, true); }},
      {"qwen3", [&] { dense("qwen3", path, seed, type, true, false); }},
      {"phi3", [&] { phi3(path, seed, type); }},
      {"smollm3", [&] { dense("smollm3", path, seed, type, false, false, 4); }},  // layer 3: NoPE
      {"gemma2", [&] { gemma("gemma2", path, seed, type); }},
      {"gemma3", [&] { gemma("gemma3", path, seed, type); }},
      {"afm-device", [&] { afm_device(path, seed, type); }},
      {"afm-server", [&] { afm_server(path, seed, type); }},
  };
  const auto it = makers.find(arch);
  if (it == makers.end()) {
    throw_error(ErrorCode::kUnsupported, "no tiny model generator for architecture " + arch +
                                             " (add one in tests/model/tiny_models.cpp)");
  }
  it->second();
}

}  // namespace afm::model::testing
