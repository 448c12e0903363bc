#include "model/hparams.h"

#include "base/error.h"

namespace afm::model {
namespace {

int64_t positive_key(const gguf::File& file, const std::string& key) {
  if (!file.has(key)) throw_error(ErrorCode::kFormat, file.path() + ": missing metadata key " + key);
  const uint64_t v = file.get_u64(key);
  if (v == 0 || v > (1ull << 31)) {
    throw_error(ErrorCode::kFormat, file.path() + ": " + key + " = " + std::to_string(v) +
                                        " is out of range");
  }
  return static_cast<int64_t>(v);
}

int64_t optional_key(const gguf::File& file, const std::string& key, int64_t fallback) {
  return file.has(key) ? positive_key(file, key) : fallback;
}

float optional_float(const gguf::File& file, const std::string& key, float fallback) {
  return file.has(key) ? static_cast<float>(file.get_f64(key)) : fallback;
}

void read_rope_scaling(const gguf::File& file, const std::string& arch, HParams& hp) {
  const std::string type_key = arch + ".rope.scaling.type";
  const std::string type = file.has(type_key) ? file.get_string(type_key) : "none";
  if (type == "none") return;
  if (type != "linear") {
    throw_error(ErrorCode::kUnsupported,
                file.path() + ": RoPE scaling type '" + type + "' is not supported (none, linear)");
  }
  const float factor = optional_float(file, arch + ".rope.scaling.factor", 1.0f);
  if (!(factor > 0)) {
    throw_error(ErrorCode::kFormat, file.path() + ": " + arch + ".rope.scaling.factor must be > 0");
  }
  hp.rope_freq_scale = 1.0f / factor;
}

}  // namespace

HParams read_decoder_hparams(const gguf::File& file, const std::string& arch) {
  HParams hp;
  hp.arch = arch;
  const std::string p = arch + ".";
  hp.n_embd = positive_key(file, p + "embedding_length");
  hp.n_layer = positive_key(file, p + "block_count");
  hp.n_ff = positive_key(file, p + "feed_forward_length");
  hp.n_head = positive_key(file, p + "attention.head_count");
  hp.n_head_kv = optional_key(file, p + "attention.head_count_kv", hp.n_head);
  hp.n_ctx_train = optional_key(file, p + "context_length", 2048);
  hp.head_dim = optional_key(file, p + "attention.key_length", hp.n_embd / hp.n_head);
  hp.rope_dims = optional_key(file, p + "rope.dimension_count", hp.head_dim);
  hp.rope_theta = optional_float(file, p + "rope.freq_base", 10000.0f);
  hp.rms_eps = optional_float(file, p + "attention.layer_norm_rms_epsilon", 1e-5f);
  hp.qk_norm_eps = optional_float(file, p + "attention.qk_norm_epsilon", hp.rms_eps);
  if (hp.n_head % hp.n_head_kv != 0) {
    throw_error(ErrorCode::kFormat, file.path() + ": head_count " + std::to_string(hp.n_head) +
                                        " is not a multiple of head_count_kv " +
                                        std::to_string(hp.n_head_kv));
  }
  if (hp.rope_dims > hp.head_dim || hp.rope_dims % 2 != 0) {
    throw_error(ErrorCode::kFormat, file.path() + ": " + p + "rope.dimension_count " +
                                        std::to_string(hp.rope_dims) + " does not fit head size " +
                                        std::to_string(hp.head_dim));
  }
  if (!(hp.rope_theta > 0) || !(hp.rms_eps > 0) || !(hp.qk_norm_eps > 0)) {
    throw_error(ErrorCode::kFormat, file.path() + ": rope.freq_base and rms epsilon must be > 0");
  }
  read_rope_scaling(file, arch, hp);
  return hp;
}

int64_t read_optional_count(const gguf::File& file, const std::string& key, int64_t fallback) {
  return optional_key(file, key, fallback);
}

int64_t read_count(const gguf::File& file, const std::string& key) { return positive_key(file, key); }

float read_optional_float(const gguf::File& file, const std::string& key, float fallback) {
  return optional_float(file, key, fallback);
}

}  // namespace afm::model
