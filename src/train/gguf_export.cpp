#include "train/gguf_export.h"

#include <algorithm>

#include "base/error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "quant/balanced_2bit.h"
#include "quant/tensor_encode.h"

namespace afm::train {
namespace {

using gguf::Value;

void add_hparams(const ModelConfig& c, gguf::Writer& w) {
  const std::string a = c.arch + ".";
  auto u32 = [](int64_t v) { return Value(static_cast<uint32_t>(v)); };
  w.set("general.architecture", Value(c.arch));
  w.set(a + "vocab_size", u32(c.vocab_size));
  w.set(a + "context_length", u32(c.context_length));
  w.set(a + "embedding_length", u32(c.embedding_length));
  w.set(a + "block_count", u32(c.block_count));
  w.set(a + "feed_forward_length", u32(c.feed_forward_length));
  w.set(a + "attention.head_count", u32(c.head_count));
  w.set(a + "attention.head_count_kv", u32(c.head_count_kv));
  w.set(a + "attention.key_length", u32(c.effective_head_dim()));
  w.set(a + "attention.value_length", u32(c.effective_head_dim()));
  w.set(a + "rope.freq_base", Value(static_cast<float>(c.rope_freq_base)));
  w.set(a + "attention.layer_norm_rms_epsilon", Value(static_cast<float>(c.rms_epsilon)));
  if (c.arch == "llama") {
    w.set(a + "rope.dimension_count", u32(c.effective_head_dim()));
    return;
  }
  w.set(a + "attention.qk_norm_epsilon", Value(static_cast<float>(c.qk_norm_epsilon)));
  if (c.arch == "afm-device") {
    w.set(a + "kv_share.block1_layers", u32(c.effective_block1_layers()));
    return;
  }
  w.set(a + "tracks", u32(c.tracks));
  w.set(a + "track_block_depth", u32(c.track_block_depth));
  w.set(a + "expert_count", u32(c.expert_count));
  w.set(a + "expert_used_count", u32(c.expert_used_count));
  w.set(a + "expert_feed_forward_length", u32(c.expert_feed_forward_length));
  w.set(a + "moe_every", u32(c.moe_every));
  w.set(a + "attention.sliding_window", u32(c.sliding_window));
  w.set(a + "attention.global_every", u32(c.global_every));
  w.set(a + "track_merge", Value(std::string("mean")));
}

void add_tokenizer(const std::string& path, int64_t vocab_size, gguf::Writer& w) {
  const gguf::File file = gguf::File::open(path);
  const Value* tokens = file.find("tokenizer.ggml.tokens");
  if (tokens == nullptr)
    throw_error(ErrorCode::kNotFound, path + ": no tokenizer.ggml.tokens (not a tokenizer GGUF)");
  const size_t n = tokens->as_array("tokenizer.ggml.tokens").items.size();
  if (static_cast<int64_t>(n) != vocab_size)
    throw_error(ErrorCode::kInvalidArgument,
                path + ": the tokenizer has " + std::to_string(n) +
                    " tokens, the model's vocab_size is " + std::to_string(vocab_size));
  for (const auto& [key, value] : file.metadata())
    if (key.rfind("tokenizer.", 0) == 0) w.set(key, value);
}

gguf::TensorType storage_type(const torch::Tensor& t, gguf::TensorType requested) {
  if (t.dim() <= 1) return gguf::TensorType::kF32;
  const int64_t block = gguf::tensor_type_traits(requested).block_elements;
  return t.size(-1) % block == 0 ? requested : gguf::TensorType::kF16;
}

}  // namespace

void export_gguf(const LanguageModel& model, const ExportOptions& options,
                 const std::string& out_path) {
  const ModelConfig& c = model.config();
  gguf::Writer w;
  w.set("general.name", Value(options.name));
  add_hparams(c, w);
  w.set("general.file_type", Value(quant::llama_file_type(
                                 options.q2b_factors.empty() ? options.type : gguf::TensorType::kQ2_B)));
  if (!options.tokenizer_gguf.empty()) add_tokenizer(options.tokenizer_gguf, c.vocab_size, w);
  for (const auto& [key, value] : options.extra_u32) w.set(key, Value(value));
  for (const NamedParameter& p : model.gguf_parameters()) {
    torch::Tensor t = p.tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    std::vector<uint64_t> shape;  // GGUF lists the innermost dimension first
    for (int64_t i = t.dim() - 1; i >= 0; --i) shape.push_back(static_cast<uint64_t>(t.size(i)));
    const auto factor = std::find_if(options.q2b_factors.begin(), options.q2b_factors.end(),
                                     [&](const auto& f) { return f.first == p.gguf_name; });
    if (factor != options.q2b_factors.end()) {
      const float f = static_cast<float>(factor->second);
      w.add_tensor(p.gguf_name, gguf::TensorType::kQ2_B, shape, [t, f](std::vector<uint8_t>& out) {
        const size_t n = static_cast<size_t>(t.numel());
        out.resize(quant::encoded_bytes(gguf::TensorType::kQ2_B, n));
        quant::quantize_row_q2b(t.data_ptr<float>(), reinterpret_cast<quant::BlockQ2B*>(out.data()),
                                n, f);
      });
      continue;
    }
    const bool embedding = p.gguf_name == "token_embd.weight" && options.embedding_type;
    const gguf::TensorType type = storage_type(t, embedding ? *options.embedding_type : options.type);
    w.add_tensor(p.gguf_name, type, shape, [t, type](std::vector<uint8_t>& out) {
      quant::encode_tensor(t.data_ptr<float>(), static_cast<size_t>(t.numel()), type, out);
    });
  }
  w.write(out_path);
}

void prepare_qat_export(LanguageModel& model, ExportOptions& options) {
  if (!model.has_qat()) return;
  model.load_ema_weights();
  options.q2b_factors = model.qat_factors();
  if (model.qat_spec()->embedding_4bit) options.embedding_type = gguf::TensorType::kQ4_0;
}

}  // namespace afm::train
