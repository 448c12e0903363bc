// Llama (and Mistral-style) GGUFs: q/k rows were permuted by the converter so RoPE rotates
// adjacent pairs, as in llama.cpp.
#include "model/dense_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_llama(std::shared_ptr<const gguf::File> file) {
  return load_dense_decoder(std::move(file), {ops::RopeLayout::kAdjacent, QkNorm::kNone});
}

}  // namespace
AFM_REGISTER_ARCH("llama", load_llama);
}  // namespace afm::model
