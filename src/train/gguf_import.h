// Reads a GGUF model afm wrote (export_gguf, or an `afm convert` file of a trainable
// architecture) back into a training model: the inverse of gguf_export.h, so that fine-tuning
// and LoRA-adapter training start from a shipped or downloaded model (`--base MODEL.gguf`).
//
// Contract:
// - The config comes from exactly the keys export_gguf writes for the architecture
//   (docs/gguf.md): `general.architecture` (llama | afm-device | afm-server) and the
//   `{arch}.*` hyper-parameters, validated as a config file is; training-only fields
//   (router_aux_loss) keep their defaults. f32 keys are read through their shortest decimal
//   form, so an epsilon of 1e-5 written as f32 reads back as 1e-5, the exported config's value.
// - Every parameter of make_language_model(config) must be a tensor of the same name and
//   shape, and every tensor in the file must be one of them (the training models have no
//   attn_k_scale / attn_v_scale and no untied `output`). Tensors of the types the reader knows
//   (f32, f16, bf16, q8_0, q4_0) are dequantized to float32; an f32 file imports bit for bit.
// - The model is built and filled on the CPU, then moved to `device`.
// - Errors are afm::Error naming the file and the key or tensor, with the runtime's codes
//   (src/model): kIo / kFormat from the reader (unreadable or malformed file); kUnsupported for
//   an architecture without a training model, a key value the models cannot represent
//   (value_length != key_length, partial RoPE, a track merge other than mean) or a tensor type
//   this build cannot dequantize; kFormat for a missing, mistyped or out-of-range key,
//   hyper-parameters the config rejects, metadata describing a model far larger than the file
//   (refused before anything is allocated), and a missing, misshapen or unused tensor (shapes
//   in GGUF order, innermost first).
#pragma once

#include <memory>
#include <string>

#include <torch/torch.h>

#include "gguf/reader.h"
#include "train/language_model.h"
#include "train/model_config.h"

namespace afm::train {

// Every value of tensor t of `file` as float32 into out (t.n_elements() of them), whatever its
// type: the block types through their codecs, astc6x6 matrix by matrix after checking each
// block (Error kFormat naming the tile otherwise).
void dequantize_tensor(const gguf::File& file, const gguf::TensorInfo& t, float* out);

// The model configuration a file's metadata describes (no tensor is read).
ModelConfig read_gguf_model_config(const std::string& path);
ModelConfig read_gguf_model_config(const gguf::File& file);

struct ImportedModel {
  ModelConfig config;
  std::shared_ptr<LanguageModel> model;  // float32 parameters on the requested device
  // What the file says about its tokenizer, for logs: "gpt2 (pre: qwen2), 8192 tokens", or
  // "none (no tokenizer.ggml.tokens)". The tokenizer itself is read from the file by its users.
  std::string tokenizer_note;
};

ImportedModel import_gguf_model(const std::string& path, const torch::Device& device = torch::kCPU);

}  // namespace afm::train
