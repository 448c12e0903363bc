// SmolLM3 (llama.cpp's "smollm3"): Llama with adjacent-pair RoPE (the converter permuted q/k
// as for llama), except that every 4th layer (3, 7, 11, ...) has no positional embedding,
// as llama.cpp hard-codes it and transformers' default no_rope_layer_interval = 4 gives.
#include "model/dense_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_smollm3(std::shared_ptr<const gguf::File> file) {
  DenseOptions options{ops::RopeLayout::kAdjacent, QkNorm::kNone};
  options.nope_every = 4;
  return load_dense_decoder(std::move(file), options);
}

}  // namespace
AFM_REGISTER_ARCH("smollm3", load_smollm3);
}  // namespace afm::model
