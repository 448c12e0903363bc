#include "model/lora.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "base/error.h"
#include "gguf/digest.h"
#include "ops/embedding.h"

namespace afm::model {
namespace {

constexpr std::string_view kSuffixA = ".lora_a", kSuffixB = ".lora_b";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string string_or_empty(const gguf::File& f, std::string_view key) {
  const gguf::Value* v = f.find(key);
  return v && v->type() == gguf::ValueType::kString ? v->as_string(key) : std::string();
}

bool is_lower_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// An (rows, cols) view of a 2-D or 3-D adapter tensor; the kernels must run its type.
ops::Matrix view(const gguf::File& f, const gguf::TensorInfo& t, int64_t rows, int64_t cols) {
  const auto traits = gguf::tensor_type_traits(t.type);
  if (!ops::is_supported_weight_type(t.type) || traits.tile_rows > 1 ||
      cols % traits.block_elements != 0) {
    throw_error(ErrorCode::kUnsupported,
                f.path() + ": tensor " + t.name + " has type " + std::string(traits.name) +
                    " with rows of " + std::to_string(cols) +
                    " values, which the kernels do not run (f32, f16, bf16; q8_0/q4_0 need "
                    "rows of whole 32-value blocks)");
  }
  return ops::Matrix{t.type, t.data, rows, cols, ops::row_bytes_for(t.type, cols)};
}

}  // namespace

void transpose_lora_b(LoraPair& p) {
  p.b_t.resize(p.n_stack * p.rank * p.out);
  std::vector<float> row(p.rank);
  for (int64_t e = 0; e < p.n_stack; ++e) {
    for (int64_t o = 0; o < p.out; ++o) {
      ops::dequantize_row(p.b, e * p.out + o, row.data());
      for (int64_t r = 0; r < p.rank; ++r) p.b_t[(e * p.rank + r) * p.out + o] = row[r];
    }
  }
}

bool is_adaptable_tensor(const std::string& name) {
  static constexpr std::array<std::string_view, 11> kLayerSuffixes = {
      "attn_q.weight",   "attn_k.weight",        "attn_v.weight",      "attn_output.weight",
      "ffn_gate.weight", "ffn_up.weight",        "ffn_down.weight",    "ffn_gate_inp.weight",
      "ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight"};
  if (name == "output.weight") return true;
  for (std::string_view s : kLayerSuffixes) {
    if (ends_with(name, std::string(".") + std::string(s))) return true;
  }
  return false;
}

std::shared_ptr<const LoraAdapter> LoraAdapter::load(const std::string& path,
                                                     const gguf::File& base) {
  return from_file(std::make_shared<const gguf::File>(gguf::File::open(path)), base);
}

std::shared_ptr<const LoraAdapter> LoraAdapter::from_file(std::shared_ptr<const gguf::File> file,
                                                          const gguf::File& base) {
  std::shared_ptr<LoraAdapter> a(new LoraAdapter());
  a->file_ = std::move(file);
  a->check_metadata(base);
  a->collect_pairs(base);
  return a;
}

void LoraAdapter::check_metadata(const gguf::File& base) {
  const gguf::File& f = *file_;
  const std::string type = string_or_empty(f, "general.type");
  if (type != "adapter") {
    throw_error(ErrorCode::kFormat, f.path() + ": general.type is '" + type +
                                        "', expected 'adapter' (is this a model, not an adapter?)");
  }
  const std::string adapter_type = string_or_empty(f, "adapter.type");
  if (adapter_type != "lora") {
    throw_error(ErrorCode::kUnsupported,
                f.path() + ": adapter.type is '" + adapter_type + "', only 'lora' is supported");
  }
  arch_ = f.architecture();
  if (arch_ != base.architecture()) {
    throw_error(ErrorCode::kInvalidArgument,
                f.path() + ": adapter is for architecture '" + arch_ + "' but the base model " +
                    base.path() + " is '" + base.architecture() + "'");
  }
  if (f.has("adapter.lora.alpha")) {
    const double alpha = f.get_f64("adapter.lora.alpha");
    if (!std::isfinite(alpha) || alpha < 0) {
      throw_error(ErrorCode::kFormat, f.path() + ": adapter.lora.alpha = " +
                                          std::to_string(alpha) + " is not a finite value >= 0");
    }
    alpha_ = static_cast<float>(alpha);
  }
  if (f.has(kAdapterBaseSha256Key)) {
    base_sha256_ = f.get_string(kAdapterBaseSha256Key);
    if (!is_lower_hex64(base_sha256_)) {
      throw_error(ErrorCode::kFormat, f.path() + ": " + kAdapterBaseSha256Key + " '" +
                                          base_sha256_ + "' is not 64 lowercase hex digits");
    }
    const std::string actual = gguf::data_section_sha256(base);
    if (actual != base_sha256_) {
      throw_error(ErrorCode::kInvalidArgument,
                  f.path() + ": adapter was made for a base model whose tensor data has SHA-256 " +
                      base_sha256_ + ", but " + base.path() + " has " + actual);
    }
  }
}

void LoraAdapter::collect_pairs(const gguf::File& base) {
  const gguf::File& f = *file_;
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> ab;
  for (const gguf::TensorInfo& t : f.tensors()) {
    const std::string_view name = t.name;
    if (ends_with(name, kSuffixA)) {
      ab[std::string(name.substr(0, name.size() - kSuffixA.size()))].first = &t;
    } else if (ends_with(name, kSuffixB)) {
      ab[std::string(name.substr(0, name.size() - kSuffixB.size()))].second = &t;
    } else if (!ends_with(name, "_norm.weight")) {  // llama.cpp ignores adapted norms too
      throw_error(ErrorCode::kFormat, f.path() + ": tensor " + t.name +
                                          " is neither <base tensor>.lora_a nor .lora_b");
    }
  }
  for (const auto& [name, tensors] : ab) {
    const auto [ta, tb] = tensors;
    if (!ta || !tb) {
      throw_error(ErrorCode::kFormat, f.path() + ": " + name + " has " +
                                          (ta ? ".lora_a but no .lora_b" : ".lora_b but no .lora_a"));
    }
    const gguf::TensorInfo* w = base.find_tensor(name);
    if (!w) {
      throw_error(ErrorCode::kNotFound, f.path() + ": adapted tensor " + name +
                                            " does not exist in the base model " + base.path());
    }
    if (!is_adaptable_tensor(name)) {
      throw_error(ErrorCode::kUnsupported,
                  f.path() + ": " + name + " cannot be adapted (the runtime adapts attention and "
                                           "feed-forward projections, routers, experts and a "
                                           "separate output head)");
    }
    const bool stacked = w->shape.size() == 3;
    const uint64_t in = w->shape[0], out = w->shape.size() > 1 ? w->shape[1] : 1;
    const uint64_t n_stack = stacked ? w->shape[2] : 1, rank = tb->shape[0];
    std::vector<uint64_t> want_a{in, rank}, want_b{rank, out};
    if (stacked) want_a.push_back(n_stack), want_b.push_back(n_stack);
    if (w->shape.size() < 2 || ta->shape != want_a || tb->shape != want_b) {
      throw_error(ErrorCode::kFormat, f.path() + ": " + name + " has base shape " +
                                          shape_text(w->shape) + " but lora_a " +
                                          shape_text(ta->shape) + " and lora_b " +
                                          shape_text(tb->shape) + " (expected lora_a [in, rank" +
                                          (stacked ? ", n" : "") + "] = " + shape_text(want_a) +
                                          " and lora_b [rank, out" + (stacked ? ", n" : "") +
                                          "] = " + shape_text(want_b) + ")");
    }
    LoraPair p;
    p.rank = static_cast<int64_t>(rank);
    p.in = static_cast<int64_t>(in);
    p.out = static_cast<int64_t>(out);
    p.n_stack = static_cast<int64_t>(n_stack);
    p.a = view(f, *ta, p.n_stack * p.rank, p.in);
    p.b = view(f, *tb, p.n_stack * p.out, p.rank);
    transpose_lora_b(p);
    pairs_.emplace(name, std::move(p));
  }
}

const LoraPair* LoraAdapter::find(const std::string& base_tensor) const {
  const auto it = pairs_.find(base_tensor);
  return it == pairs_.end() ? nullptr : &it->second;
}

float LoraAdapter::scale_for(const LoraPair& pair, float user_scale) const {
  return alpha_ > 0 ? alpha_ / static_cast<float>(pair.rank) * user_scale : user_scale;
}

int64_t LoraAdapter::max_rank() const {
  int64_t r = 0;
  for (const auto& [name, p] : pairs_) r = std::max(r, p.rank);
  return r;
}

}  // namespace afm::model
