// afm-device: the on-device AFM family (tech report 2.1; Apple's mlx_lm/models/afm7.py).
// Consecutive-pair RoPE, QK-RMSNorm after RoPE, tied embeddings, optional learned int8 K/V
// scales, and KV-cache sharing: Block 2 layers reuse the K/V of the last Block 1 layer.
#include "model/dense_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_afm_device(std::shared_ptr<const gguf::File> file) {
  return load_dense_decoder(std::move(file),
                            {ops::RopeLayout::kAdjacent, QkNorm::kAfterRope, /*kv_share=*/true});
}

}  // namespace
AFM_REGISTER_ARCH("afm-device", load_afm_device);
}  // namespace afm::model
