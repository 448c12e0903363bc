// Qwen2: rotate-half RoPE and q/k/v biases (loaded because the tensors are present).
#include "model/dense_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_qwen2(std::shared_ptr<const gguf::File> file) {
  return load_dense_decoder(std::move(file), {ops::RopeLayout::kHalves, QkNorm::kNone});
}

}  // namespace
AFM_REGISTER_ARCH("qwen2", load_qwen2);
}  // namespace afm::model
