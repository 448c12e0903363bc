// How one Hugging Face architecture maps onto a GGUF architecture: hyperparameter keys and
// tensor names. Each architecture registers itself from its own file (arch_<name>.cpp), so
// adding one touches no central switch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gguf/writer.h"
#include "hf/config.h"

namespace afm::hf {

// How the converter must treat one source tensor.
struct TensorPlan {
  std::string gguf_name;
  bool permute_rows_for_rope = false;  // llama's q/k: HF rotate-half -> interleaved pairs
  uint64_t permute_heads = 0;          // head count for that permutation
};

struct ArchSpec {
  std::string hf_name;    // "LlamaForCausalLM"
  std::string gguf_arch;  // "llama"
  // Writes {arch}.* hyperparameters.
  void (*write_hparams)(const HfConfig& config, const std::string& arch, gguf::Writer& writer);
  // Maps an HF tensor name to its plan; nullopt for tensors the format drops (rotary caches);
  // throws Error(kUnsupported) naming a tensor it does not know.
  std::optional<TensorPlan> (*plan_tensor)(const HfConfig& config, const std::string& hf_name);
};

void register_arch(ArchSpec spec);
// Error(kUnsupported) naming the architecture and listing the known ones.
const ArchSpec& find_arch(const std::string& hf_name);

// Shared by the Llama-family architectures.
void write_llama_family_hparams(const HfConfig& config, const std::string& arch,
                                gguf::Writer& writer);
std::optional<TensorPlan> plan_llama_family_tensor(const std::string& hf_name);

}  // namespace afm::hf

#define AFM_REGISTER_HF_ARCH(ident, ...) \
  static const bool afm_hf_arch_##ident = (::afm::hf::register_arch(__VA_ARGS__), true)
