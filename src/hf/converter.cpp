#include "hf/converter.h"

#include <filesystem>
#include <set>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "gguf/writer.h"
#include "hf/arch.h"
#include "hf/safetensors.h"
#include "hf/tensor_convert.h"
#include "tokenizer/gguf_export.h"

namespace afm::hf {

namespace {

namespace fs = std::filesystem;

// llama.cpp's general.file_type numbering (LLAMA_FTYPE_*).
uint32_t file_type(gguf::TensorType t) {
  switch (t) {
    case gguf::TensorType::kF32:
      return 0;
    case gguf::TensorType::kF16:
      return 1;
    case gguf::TensorType::kQ4_0:
      return 2;
    case gguf::TensorType::kQ8_0:
      return 7;
    case gguf::TensorType::kBF16:
      return 32;
  }
  return 0;
}

std::string read_optional(const fs::path& p) {
  return fs::exists(p) ? read_file_to_string(p.string()) : std::string();
}

void write_general(const HfConfig& config, const ArchSpec& arch, const ConvertOptions& opt,
                   gguf::Writer& w) {
  w.set("general.architecture", gguf::Value(arch.gguf_arch));
  std::string name = fs::path(opt.hf_dir).filename().string();
  if (name.empty()) name = fs::path(opt.hf_dir).parent_path().filename().string();
  w.set("general.name", gguf::Value(name));
  w.set("general.file_type", gguf::Value(file_type(opt.type)));
  w.set("general.quantization_version", gguf::Value(uint32_t{2}));
}

void add_tensors(const HfConfig& config, const ArchSpec& arch, const SafetensorsModel& model,
                 gguf::TensorType type, gguf::Writer& w) {
  const bool tied = config.get_bool("tie_word_embeddings", false);
  std::set<std::string> seen;
  for (const SafeTensor* t : model.tensors()) {
    std::optional<TensorPlan> plan = arch.plan_tensor(config, t->name);
    if (!plan) continue;
    if (tied && plan->gguf_name == "output.weight") continue;  // the head reuses token_embd
    if (t->shape.empty() || t->shape.size() > 2) {
      throw_error(ErrorCode::kFormat, t->file + ": tensor '" + t->name + "' has rank " +
                                          std::to_string(t->shape.size()) + ", expected 1 or 2");
    }
    const gguf::TensorType stored = storage_type(*t, type);
    std::vector<uint64_t> shape(t->shape.rbegin(), t->shape.rend());  // ggml order
    w.add_tensor(
        plan->gguf_name, stored, shape, [t, plan = *plan, stored](std::vector<uint8_t>& out) {
          std::vector<float> x = to_f32(*t);
          if (plan.permute_rows_for_rope) {
            const uint64_t rows = t->shape[0], cols = t->shape.size() > 1 ? t->shape[1] : 1;
            if (rows % (2 * plan.permute_heads) != 0) {
              throw_error(ErrorCode::kFormat, t->file + ": tensor '" + t->name + "' rows " +
                                                  std::to_string(rows) +
                                                  " do not split into heads");
            }
            x = permute_rope_rows(x, rows, cols, plan.permute_heads);
          }
          encode(x, stored, out);
        });
    seen.insert(plan->gguf_name);
  }
  for (const char* required : {"token_embd.weight", "output_norm.weight"}) {
    if (seen.count(required) == 0) {
      throw_error(ErrorCode::kNotFound, "missing tensor for '" + std::string(required) + "'");
    }
  }
  if (!tied && seen.count("output.weight") == 0) {
    throw_error(ErrorCode::kNotFound, "missing lm_head.weight (tie_word_embeddings is false)");
  }
  const uint64_t layers = config.get_uint("num_hidden_layers");
  for (uint64_t i = 0; i < layers; ++i) {
    for (const char* part : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_up", "ffn_down"}) {
      std::string name = "blk." + std::to_string(i) + "." + part + ".weight";
      if (seen.count(name) == 0)
        throw_error(ErrorCode::kNotFound, "missing tensor for '" + name + "'");
    }
  }
}

}  // namespace

ConvertResult convert_hf_to_gguf(const ConvertOptions& opt) {
  const fs::path dir(opt.hf_dir);
  if (!fs::is_directory(dir)) throw_error(ErrorCode::kIo, "not a directory: '" + opt.hf_dir + "'");
  const HfConfig config = HfConfig::load((dir / "config.json").string());
  const ArchSpec& arch = find_arch(config.architecture());
  const SafetensorsModel model = SafetensorsModel::open_dir(opt.hf_dir);

  gguf::Writer w;
  write_general(config, arch, opt, w);
  arch.write_hparams(config, arch.gguf_arch, w);
  const fs::path tok = dir / "tokenizer.json";
  if (!fs::exists(tok)) throw_error(ErrorCode::kNotFound, "missing '" + tok.string() + "'");
  tokenizer::add_gguf_tokenizer_metadata(read_file_to_string(tok.string()),
                                         read_optional(dir / "tokenizer_config.json"), w);
  add_tensors(config, arch, model, opt.type, w);

  ProgressBar bar("convert", w.total_tensor_bytes());
  w.write(opt.out_path, [&](uint64_t done, uint64_t) { bar.update(done); });
  bar.finish();
  return {arch.gguf_arch, model.tensors().size(), w.total_tensor_bytes()};
}

}  // namespace afm::hf
