#include "hf/converter.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "gguf/writer.h"
#include "hf/arch.h"
#include "hf/safetensors.h"
#include "hf/tensor_convert.h"
#include "quant/tensor_encode.h"
#include "tokenizer/gguf_export.h"

namespace afm::hf {

namespace {

namespace fs = std::filesystem;

std::string read_optional(const fs::path& p) {
  return fs::exists(p) ? read_file_to_string(p.string()) : std::string();
}

void write_general(const HfConfig& config, const ArchSpec& arch, const ConvertOptions& opt,
                   gguf::Writer& w) {
  w.set("general.architecture", gguf::Value(arch.gguf_arch));
  std::string name = fs::path(opt.hf_dir).filename().string();
  if (name.empty()) name = fs::path(opt.hf_dir).parent_path().filename().string();
  w.set("general.name", gguf::Value(name));
  w.set("general.file_type", gguf::Value(quant::llama_file_type(opt.type)));
  w.set("general.quantization_version", gguf::Value(uint32_t{2}));
}

// The source shape in PyTorch order, a 0-dim scalar read as [1]; Error(kFormat) above rank 2.
std::vector<uint64_t> source_shape(const SafeTensor& t) {
  if (t.shape.size() > 2) {
    throw_error(ErrorCode::kFormat, t.file + ": tensor '" + t.name + "' has rank " +
                                        std::to_string(t.shape.size()) + ", expected 0, 1 or 2");
  }
  return t.shape.empty() ? std::vector<uint64_t>{1} : t.shape;
}

// Rows the plan takes from a source of `rows` rows (every row unless it names a range).
uint64_t plan_rows(const TensorPlan& plan, uint64_t rows) {
  return plan.row_count == 0 ? rows : plan.row_count;
}

// Error(kFormat) unless a tensor the plans slice is covered by their row ranges in order, each
// row exactly once (a split that drops or repeats rows means config.json and weights disagree).
void check_row_split(const SafeTensor& t, const std::vector<TensorPlan>& plans) {
  if (std::none_of(plans.begin(), plans.end(), [](const TensorPlan& p) { return p.row_count; })) {
    return;
  }
  const uint64_t rows = source_shape(t)[0];
  uint64_t next = 0;
  for (const TensorPlan& p : plans) {
    if (p.row_count == 0 || p.row_begin != next || p.row_count > rows - next) {
      next = rows + 1;
      break;
    }
    next += p.row_count;
  }
  if (next != rows) {
    throw_error(ErrorCode::kFormat,
                t.file + ": tensor '" + t.name + "' has " + std::to_string(rows) +
                    " rows, which do not split into the sizes config.json gives");
  }
}

// The plan's values as f32: its rows of the source, rope-permuted when it asks.
std::vector<float> plan_values(const SafeTensor& t, const TensorPlan& plan) {
  const std::vector<uint64_t> shape = source_shape(t);
  const uint64_t cols = shape.size() > 1 ? shape[1] : 1;
  std::vector<float> x = to_f32(t);
  if (plan.row_count != 0) {
    x = std::vector<float>(x.begin() + plan.row_begin * cols,
                           x.begin() + (plan.row_begin + plan.row_count) * cols);
  }
  if (plan.permute_rows_for_rope) {
    const uint64_t rows = plan_rows(plan, shape[0]);
    if (rows % (2 * plan.permute_heads) != 0) {
      throw_error(ErrorCode::kFormat, t.file + ": tensor '" + t.name + "' rows " +
                                          std::to_string(rows) + " do not split into heads");
    }
    x = permute_rope_rows(x, rows, cols, plan.permute_heads);
  }
  if (plan.add != 0) {
    for (float& v : x) v += plan.add;
  }
  return x;
}

// Registers one GGUF tensor whose bytes are produced at write time.
void add_planned_tensor(const SafeTensor& t, const TensorPlan& plan, gguf::TensorType type,
                        gguf::Writer& w) {
  std::vector<uint64_t> shape = source_shape(t);
  shape[0] = plan_rows(plan, shape[0]);
  std::reverse(shape.begin(), shape.end());  // ggml order
  const gguf::TensorType stored = storage_type(t, type);
  w.add_tensor(plan.gguf_name, stored, shape, [&t, plan, stored](std::vector<uint8_t>& out) {
    encode(plan_values(t, plan), stored, out);
  });
}

// Adds every GGUF tensor the source tensors plan; returns how many. Error(kNotFound) naming
// the first required tensor no source produced.
uint64_t add_tensors(const HfConfig& config, const ArchSpec& arch, const SafetensorsModel& model,
                     gguf::TensorType type, gguf::Writer& w) {
  const bool tied = config.get_bool("tie_word_embeddings", false);
  std::set<std::string> seen;
  for (const SafeTensor* t : model.tensors()) {
    const std::vector<TensorPlan> plans = arch.plan_tensor(config, t->name);
    check_row_split(*t, plans);
    for (const TensorPlan& plan : plans) {
      if (tied && plan.gguf_name == "output.weight") continue;  // the head reuses token_embd
      add_planned_tensor(*t, plan, type, w);
      seen.insert(plan.gguf_name);
    }
  }
  for (const std::string& required : arch.required_tensors(config)) {
    if (seen.count(required) == 0) {
      throw_error(ErrorCode::kNotFound, "missing tensor for '" + required + "'");
    }
  }
  return seen.size();
}

}  // namespace

ConvertResult convert_hf_to_gguf(const ConvertOptions& opt) {
  const fs::path dir(opt.hf_dir);
  if (!fs::is_directory(dir)) throw_error(ErrorCode::kIo, "not a directory: '" + opt.hf_dir + "'");
  const HfConfig config = HfConfig::load((dir / "config.json").string());
  const ArchSpec& arch = find_arch(config);
  const SafetensorsModel model = SafetensorsModel::open_dir(opt.hf_dir);

  gguf::Writer w;
  write_general(config, arch, opt, w);
  arch.write_hparams(config, arch.gguf_arch, w);
  const fs::path tok = dir / "tokenizer.json";
  if (!fs::exists(tok)) throw_error(ErrorCode::kNotFound, "missing '" + tok.string() + "'");
  tokenizer::add_gguf_tokenizer_metadata(read_file_to_string(tok.string()),
                                         read_optional(dir / "tokenizer_config.json"), w);
  const uint64_t n_tensors = add_tensors(config, arch, model, opt.type, w);

  ProgressBar bar("convert", w.total_tensor_bytes());
  w.write(opt.out_path, [&](uint64_t done, uint64_t) { bar.update(done); });
  bar.finish();
  return {arch.gguf_arch, n_tensors, w.total_tensor_bytes()};
}

}  // namespace afm::hf
