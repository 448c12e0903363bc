// Encodes f32 tensor values as a GGUF tensor type, shared by every writer of model files
// (`afm convert`, the trainer's export).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/types.h"

namespace afm::quant {

// Encodes x (n values, rows contiguous) as `type` into out (resized). For block types n must be
// a multiple of the block size (32).
void encode_tensor(const float* x, size_t n, gguf::TensorType type, std::vector<uint8_t>& out);

// llama.cpp's general.file_type number (LLAMA_FTYPE_*) for a model mostly stored as `type`.
uint32_t llama_file_type(gguf::TensorType type);

}  // namespace afm::quant
