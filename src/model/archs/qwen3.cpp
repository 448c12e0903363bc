// Qwen3: rotate-half RoPE, per-head RMSNorm on q and k before RoPE, no biases.
#include "model/dense_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_qwen3(std::shared_ptr<const gguf::File> file) {
  return load_dense_decoder(std::move(file), {ops::RopeLayout::kHalves, QkNorm::kBeforeRope});
}

}  // namespace
AFM_REGISTER_ARCH("qwen3", load_qwen3);
}  // namespace afm::model
