// LoRA adapters: a GGUF adapter file in llama.cpp's layout (docs/adapters.md), loaded and
// checked against the base model it will run on.
//
// For a base weight W (GGUF "<name>", shape [in, out], y = x W), the adapter holds
//   "<name>.lora_a": shape [in, rank]   -> ops::Matrix (rank, in):  m = x · Aᵀ   (T, rank)
//   "<name>.lora_b": shape [rank, out]  -> ops::Matrix (out, rank): d = m · Bᵀ   (T, out)
// and the runtime computes y = x W + s · d with s = alpha / rank x the user's scale (alpha 0 or
// absent: s = the user's scale), as llama.cpp does. Stacked expert weights ([in, out, E]) take
// [in, rank, E] / [rank, out, E] pairs: expert e uses slice e of each.
//
// Ownership and threads: a LoraAdapter owns its mapped file and is immutable after load; one
// adapter can serve many sequences on many threads. Its matrices view the adapter's mmap.
//
// Errors (all afm::Error; every message names the adapter file):
//   kFormat        not an adapter (general.type / adapter.type), a tensor without its pair, a
//                  suffix other than .lora_a / .lora_b (norm tensors are ignored, as llama.cpp
//                  does), shapes that do not fit the base tensor (naming both shapes), a
//                  malformed adapter.base_model_sha256
//   kInvalidArgument  another architecture than the base's, or a base_model_sha256 that is not
//                  the base's data-section SHA-256 (naming both hashes)
//   kNotFound      a pair whose base tensor the base model does not have
//   kUnsupported   a pair on a tensor the runtime does not adapt (token_embd, norms) or a
//                  tensor type the kernels do not run
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "ops/matrix.h"

namespace afm::model {

inline constexpr const char* kAdapterBaseSha256Key = "adapter.base_model_sha256";

struct LoraPair {
  ops::Matrix a;  // (n_stack * rank, in)
  ops::Matrix b;  // (n_stack * out, rank)
  int64_t rank = 0, in = 0, out = 0, n_stack = 1;
  // B transposed to f32, (n_stack, rank, out): decode adds rank long rows (axpy) instead of
  // `out` dot products of length rank. Exact: f16 values widen without rounding.
  std::vector<float> b_t;
};

// Fills pair.b_t from pair.b (after a, b and the sizes are set).
void transpose_lora_b(LoraPair& pair);

class LoraAdapter {
 public:
  // Opens `path` and checks it against `base` (the base model's GGUF file).
  static std::shared_ptr<const LoraAdapter> load(const std::string& path, const gguf::File& base);
  static std::shared_ptr<const LoraAdapter> from_file(std::shared_ptr<const gguf::File> file,
                                                      const gguf::File& base);

  // The pair for a base tensor ("blk.3.attn_q.weight"), or null.
  const LoraPair* find(const std::string& base_tensor) const;
  const std::map<std::string, LoraPair>& pairs() const { return pairs_; }
  float alpha() const { return alpha_; }
  // s = alpha / rank x user_scale (alpha 0: user_scale).
  float scale_for(const LoraPair& pair, float user_scale) const;
  int64_t max_rank() const;
  const std::string& path() const { return file_->path(); }
  const std::string& architecture() const { return arch_; }
  const std::string& base_sha256() const { return base_sha256_; }  // "" when the file has none
  const gguf::File& file() const { return *file_; }

 private:
  LoraAdapter() = default;
  void check_metadata(const gguf::File& base);
  void collect_pairs(const gguf::File& base);

  std::shared_ptr<const gguf::File> file_;
  std::string arch_, base_sha256_;
  float alpha_ = 0;
  std::map<std::string, LoraPair> pairs_;
};

// Whether the runtime applies an adapter to this base tensor (attention and feed-forward
// projections, routers, stacked experts, a separate output head).
bool is_adaptable_tensor(const std::string& base_tensor);

}  // namespace afm::model
