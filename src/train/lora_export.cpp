#include "train/lora_export.h"

#include <vector>

#include "base/error.h"
#include "gguf/reader.h"
#include "model/lora_writer.h"

namespace afm::train {
namespace {

std::vector<float> as_floats(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

int64_t export_lora_adapter(const LanguageModel& model, const std::string& base_gguf,
                            const AdapterExportOptions& options, const std::string& out_path) {
  const std::vector<LoraPair> pairs = model.lora_pairs();
  if (pairs.empty())
    throw_error(ErrorCode::kInvalidArgument, "the model has no LoRA branches to export");
  const gguf::File base = gguf::File::open(base_gguf);
  const LoraSpec& spec = model.lora_spec();
  model::LoraWriter writer(base, static_cast<float>(spec.alpha));
  writer.set("general.name", gguf::Value(options.name));
  for (const LoraPair& p : pairs)
    writer.add(p.base_name, spec.rank, as_floats(p.a), as_floats(p.b), options.type);
  writer.write(out_path);
  return static_cast<int64_t>(pairs.size());
}

}  // namespace afm::train
