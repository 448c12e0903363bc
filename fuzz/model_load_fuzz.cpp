// libFuzzer target: any byte string given to the model loader becomes a model that runs two
// tokens, or an afm::Error -- never a crash, a hang or an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/error.h"
#include "gguf/reader.h"
#include "model/context.h"
#include "model/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto file = std::make_shared<const afm::gguf::File>(
        afm::gguf::File::parse(std::span<const uint8_t>(data, size), "fuzz"));
    std::shared_ptr<const afm::model::Model> model = afm::model::load_model(file);
    afm::model::Context ctx(model, {.n_ctx = 8, .n_threads = 1, .n_batch = 4});
    const std::vector<int32_t> tokens{0, static_cast<int32_t>(model->hparams().n_vocab - 1)};
    ctx.eval(tokens);
  } catch (const afm::Error&) {
  }
  return 0;
}
