// Phi-3 (llama.cpp's "phi3"): rotate-half RoPE, q/k/v fused in attn_qkv and gate/up fused in
// ffn_up (rows gate | up), an optional sliding window (phi3.attention.sliding_window: Phi-3
// mini 4k has 2047). LongRoPE files (the 128k variants: rope_factors_long / rope_factors_short
// tensors) are refused: their per-dimension frequency factors are not implemented.
#include "base/error.h"
#include "model/dense_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_phi3(std::shared_ptr<const gguf::File> file) {
  for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (file->find_tensor(name)) {
      throw_error(ErrorCode::kUnsupported,
                  file->path() + ": " + name + " (Phi-3 LongRoPE, the 128k-context variants) "
                  "is not supported");
    }
  }
  DenseOptions options{ops::RopeLayout::kHalves, QkNorm::kNone};
  options.fused_projections = true;
  return load_dense_decoder(std::move(file), options);
}

}  // namespace
AFM_REGISTER_ARCH("phi3", load_phi3);
}  // namespace afm::model
