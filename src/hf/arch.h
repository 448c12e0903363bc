// How one Hugging Face (or mlx-lm) architecture maps onto a GGUF architecture: hyperparameter
// keys, tensor names and the tensors a complete model must have. Each architecture registers
// itself from its own file (arch_<name>.cpp), so adding one touches no central switch.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "gguf/writer.h"
#include "hf/config.h"

namespace afm::hf {

// One GGUF tensor made from one source tensor. A source tensor may yield several (afm7's fused
// qkv_proj is split by rows into attn_q / attn_k / attn_v).
struct TensorPlan {
  std::string gguf_name;
  bool permute_rows_for_rope = false;  // llama's q/k: HF rotate-half -> interleaved pairs
  uint64_t permute_heads = 0;          // head count for that permutation
  // Rows [row_begin, row_begin + row_count) of the source's first dimension; row_count 0 means
  // every row. The converter checks the range lies inside the tensor.
  uint64_t row_begin = 0;
  uint64_t row_count = 0;
  // Added to every value (Gemma's RMSNorm multiplies by 1 + w: its norm weights are stored
  // shifted by 1, as llama.cpp's converter writes them).
  float add = 0;
};

struct ArchSpec {
  std::string hf_name;     // config "architectures"[0], e.g. "LlamaForCausalLM"; "" if none
  std::string model_type;  // config "model_type", e.g. "llama", used when "architectures" is absent
  std::string gguf_arch;   // "llama"
  // Writes {arch}.* hyperparameters; throws naming a missing or inconsistent config key.
  void (*write_hparams)(const HfConfig& config, const std::string& arch, gguf::Writer& writer);
  // The GGUF tensors made from one source tensor: empty for tensors the format drops (rotary
  // caches). Throws Error(kUnsupported) naming a tensor it does not know.
  std::vector<TensorPlan> (*plan_tensor)(const HfConfig& config, const std::string& src_name);
  // GGUF tensors a complete model has; the converter reports the first one missing.
  std::vector<std::string> (*required_tensors)(const HfConfig& config);
};

void register_arch(ArchSpec spec);
// The spec for a config: by "architectures"[0] when that field exists, else by "model_type"
// (mlx-lm folders carry only the latter). Error(kUnsupported) naming the architecture and
// listing the known ones; Error(kFormat) when the config has neither field.
const ArchSpec& find_arch(const HfConfig& config);

// Shared by the Llama-family architectures (keys from transformers' config names).
void write_llama_family_hparams(const HfConfig& config, const std::string& arch,
                                gguf::Writer& writer);
std::optional<TensorPlan> plan_llama_family_tensor(const std::string& hf_name);
// `sliding_window` (when set and not null) as {arch}.attention.sliding_window; Error(kFormat)
// when it is 0.
void write_sliding_window(const HfConfig& config, const std::string& arch, gguf::Writer& writer);
// token_embd, output_norm, output (unless `tied`) and, for every layer, blk.N.<part>.weight
// for each of `layer_parts`.
std::vector<std::string> required_tensors(const HfConfig& config, bool tied,
                                          std::initializer_list<const char*> layer_parts);
// required_tensors with q/k/v/output and ffn up/down.
std::vector<std::string> llama_family_required_tensors(const HfConfig& config);

}  // namespace afm::hf

#define AFM_REGISTER_HF_ARCH(ident, ...) \
  static const bool afm_hf_arch_##ident = (::afm::hf::register_arch(__VA_ARGS__), true)
