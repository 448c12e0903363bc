// Hyper-parameters of a decoder, read from GGUF metadata (llama.cpp's key names).
#pragma once

#include <cstdint>
#include <string>

#include "gguf/reader.h"
#include "ops/rope.h"

namespace afm::model {

struct HParams {
  std::string arch;
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t n_ff = 0;
  int64_t n_ctx_train = 0;
  float rms_eps = 1e-6f;
  float qk_norm_eps = 1e-6f;     // {arch}.attention.qk_norm_epsilon, default rms_eps
  float rope_theta = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
  int64_t rope_dims = 0;         // rotated dimensions per head
  ops::RopeLayout rope_layout = ops::RopeLayout::kAdjacent;
};

// Reads `{arch}.*` keys shared by Llama-family decoders. Missing required keys and
// inconsistent values are Error(kFormat) naming the key; unsupported RoPE scaling types are
// Error(kUnsupported) naming the type. n_vocab is left for the caller (from token_embd).
HParams read_decoder_hparams(const gguf::File& file, const std::string& arch);

// An optional positive integer key (Error naming it when out of range); `fallback` if absent.
int64_t read_optional_count(const gguf::File& file, const std::string& key, int64_t fallback);
// An optional float key; `fallback` if absent.
float read_optional_float(const gguf::File& file, const std::string& key, float fallback);
// A required positive integer key.
int64_t read_count(const gguf::File& file, const std::string& key);

}  // namespace afm::model
