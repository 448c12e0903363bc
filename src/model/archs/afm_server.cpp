// afm-server: the server AFM family, a Parallel-Track Mixture-of-Experts decoder.
#include "model/pt_moe_decoder.h"
#include "model/registry.h"

namespace afm::model {
namespace {

std::unique_ptr<Model> load_afm_server(std::shared_ptr<const gguf::File> file) {
  return std::make_unique<PtMoeDecoder>(std::move(file));
}

}  // namespace
AFM_REGISTER_ARCH("afm-server", load_afm_server);
}  // namespace afm::model
