// Gemma 2 and Gemma 3 text models (llama.cpp's "gemma2" / "gemma3"): rotate-half RoPE, token
// embeddings scaled by sqrt(n_embd), RMSNorm before and after each block (the files store
// Gemma's 1 + w norm weights already shifted, as llama.cpp's converter writes them), GeGLU,
// a tied output head, and sliding-window attention in all but every 2nd (Gemma 2) / 6th
// (Gemma 3) layer.
//   Gemma 2: attention and final logits soft-capped ({arch}.attn_logit_softcapping,
//            final_logit_softcapping); window 4096 unless the file says otherwise.
//   Gemma 3: per-head QK-RMSNorm before RoPE; the window layers use their own RoPE base
//            (gemma3.rope.freq_base_swa, default 10000) without the global layers' scaling;
//            no window at all when the file has none.
// {arch}.attention.sliding_window_pattern, when present, must be a count (the period); llama.cpp
// also accepts a per-layer array, which afm refuses by name rather than misread.
// The q·k scale is {arch}.attention.scale when present (afm convert writes
// query_pre_attn_scalar^-1/2), else llama.cpp's rule: 1 / sqrt(n_embd / n_head) for the 27B
// models (46 / 62 layers), 1 / sqrt(head_dim) otherwise.
#include <cmath>

#include "base/error.h"
#include "model/dense_decoder.h"
#include "model/hparams.h"
#include "model/registry.h"

namespace afm::model {
namespace {

DenseOptions gemma_options(const gguf::File& file, const std::string& arch,
                           int64_t layers_of_27b) {
  const HParams hp = read_decoder_hparams(file, arch);
  DenseOptions o{ops::RopeLayout::kHalves, QkNorm::kNone};
  o.scale_embeddings = true;
  o.sandwich_norms = true;
  o.activation = ops::FfnActivation::kGeluTanh;
  const float per_head = hp.n_layer == layers_of_27b && hp.n_head > 0
                             ? static_cast<float>(hp.n_embd / hp.n_head)
                             : static_cast<float>(hp.head_dim);
  o.attention_scale = 1.0f / std::sqrt(per_head);
  return o;
}

int64_t swa_pattern(const gguf::File& file, const std::string& arch, int64_t fallback) {
  const std::string key = arch + ".attention.sliding_window_pattern";
  if (file.has(key) && file.get(key).is_array()) {
    throw_error(ErrorCode::kUnsupported, file.path() + ": " + key + " as a per-layer array is not supported");
  }
  return read_optional_count(file, key, fallback);
}

std::unique_ptr<Model> load_gemma2(std::shared_ptr<const gguf::File> file) {
  DenseOptions o = gemma_options(*file, "gemma2", 46);
  o.swa_pattern = swa_pattern(*file, "gemma2", 2);
  o.default_window = 4096;
  return load_dense_decoder(std::move(file), o);
}

std::unique_ptr<Model> load_gemma3(std::shared_ptr<const gguf::File> file) {
  DenseOptions o = gemma_options(*file, "gemma3", 62);
  o.qk_norm = QkNorm::kBeforeRope;
  o.swa_pattern = swa_pattern(*file, "gemma3", 6);
  o.rope_local_base = read_optional_float(*file, "gemma3.rope.freq_base_swa", 10000.0f);
  if (!(o.rope_local_base > 0) || !std::isfinite(o.rope_local_base)) {
    throw_error(ErrorCode::kFormat, file->path() + ": gemma3.rope.freq_base_swa must be > 0");
  }
  return load_dense_decoder(std::move(file), o);
}

}  // namespace
AFM_REGISTER_ARCH("gemma2", load_gemma2);
AFM_REGISTER_ARCH("gemma3", load_gemma3);
}  // namespace afm::model
