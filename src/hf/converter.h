// `afm convert`: a Hugging Face model folder (config.json, *.safetensors, tokenizer.json,
// tokenizer_config.json) to one GGUF file that llama.cpp and afm both run. mlx-lm folders
// (afm7) have the same layout; their config names the model by "model_type" only.
#pragma once

#include <string>

#include "gguf/types.h"

namespace afm::hf {

struct ConvertOptions {
  std::string hf_dir;
  std::string out_path;
  gguf::TensorType type = gguf::TensorType::kF16;
};

struct ConvertResult {
  std::string architecture;   // GGUF name
  uint64_t tensor_count = 0;  // GGUF tensors written
  uint64_t tensor_bytes = 0;
};

// Streams tensors one at a time (memory ~ the largest tensor) and writes atomically: on any
// error no output file exists (or the previous one is untouched). Errors name the file, key
// or tensor at fault.
ConvertResult convert_hf_to_gguf(const ConvertOptions& options);

}  // namespace afm::hf
