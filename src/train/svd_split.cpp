#include "train/svd_split.h"

#include <cmath>
#include <vector>

#include "base/error.h"
#include "gguf/reader.h"
#include "train/gguf_import.h"

namespace afm::train {
namespace {

torch::Tensor find_parameter(const LanguageModel& model, const std::string& name) {
  for (const NamedParameter& p : model.gguf_parameters()) {
    if (p.gguf_name == name) return p.tensor;
  }
  throw_error(ErrorCode::kInternal, "no parameter named " + name);
}

// The tensor `name` of `file` as float32 with `like`'s shape.
torch::Tensor read_like(const gguf::File& file, const std::string& name, const torch::Tensor& like) {
  const gguf::TensorInfo* t = file.find_tensor(name);
  std::vector<uint64_t> want;
  for (int64_t i = like.dim() - 1; i >= 0; --i) want.push_back(static_cast<uint64_t>(like.size(i)));
  if (t == nullptr || t->shape != want) {
    throw_error(ErrorCode::kFormat, file.path() + ": " + (t == nullptr ? "has no tensor " + name
                                                                       : "tensor " + name + " has another shape") +
                                        " than the model being trained");
  }
  torch::Tensor values = torch::empty(like.sizes(), torch::kFloat32);
  dequantize_tensor(file, *t, values.data_ptr<float>());
  return values.to(like.device());
}

}  // namespace

LowRank principal_part(const torch::Tensor& w, int64_t rank) {
  const int64_t limit = std::min(w.size(-1), w.size(-2));
  if (rank < 1 || rank > limit) {
    throw_error(ErrorCode::kInvalidArgument, "SVD rank " + std::to_string(rank) +
                                                 " must be between 1 and " + std::to_string(limit));
  }
  // In float64: the residual is W minus a product of factors, and small singular values of a
  // float32 SVD would leak rounding noise of the size of the residual's own values.
  const auto [u, s, vh] = at::linalg_svd(w.to(torch::kFloat64), /*full_matrices=*/false);
  const torch::Tensor root = s.narrow(-1, 0, rank).sqrt();
  LowRank out;
  out.b = (u.narrow(-1, 0, rank) * root.unsqueeze(-2)).to(torch::kFloat32);
  out.a = (vh.narrow(-2, 0, rank) * root.unsqueeze(-1)).to(torch::kFloat32);
  return out;
}

int64_t subtract_principal_parts(LanguageModel& model, const LoraSpec& spec) {
  AFM_CHECK(!model.has_lora());
  const auto targets = model.lora_targets(spec);  // exactly what adapter training will adapt
  torch::NoGradGuard no_grad;
  for (const auto& [name, w] : targets) {
    const LowRank part = principal_part(w, spec.rank);
    torch::Tensor target = w;
    target.sub_(torch::matmul(part.b, part.a).to(w.device()));
  }
  return static_cast<int64_t>(targets.size());
}

void init_lora_from_principal_parts(LanguageModel& model, const std::string& original) {
  const gguf::File file = gguf::File::open(original);
  torch::NoGradGuard no_grad;
  const double scale = model.lora_spec().alpha / static_cast<double>(model.lora_spec().rank);
  for (const LoraPair& p : model.lora_pairs()) {
    const torch::Tensor w = read_like(file, p.base_name, find_parameter(model, p.base_name));
    const LowRank part = principal_part(w, p.a.size(-2));
    // The runtime computes s · B A: each factor takes 1 / sqrt(s).
    const double k = 1.0 / std::sqrt(scale);
    p.a.copy_(part.a * k);
    p.b.copy_(part.b * k);
  }
}

}  // namespace afm::train
