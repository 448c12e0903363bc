#include "train/gguf_import.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "quant/astc6x6.h"
#include "quant/tensor_encode.h"

namespace afm::train {
namespace {

[[noreturn]] void fail(const gguf::File& file, ErrorCode code, const std::string& what) {
  throw_error(code, file.path() + ": " + what);
}

std::string shape_string(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---- metadata -------------------------------------------------------------------------------

const gguf::Value& require_key(const gguf::File& file, const std::string& key) {
  const gguf::Value* v = file.find(key);
  if (v == nullptr) fail(file, ErrorCode::kFormat, "missing metadata key " + key);
  return *v;
}

// The Value accessors name the key but not the file; every error here names both.
template <typename Read>
auto read_value(const gguf::File& file, const std::string& key, Read read) {
  const gguf::Value& v = require_key(file, key);
  try {
    return read(v);
  } catch (const Error& e) {
    fail(file, e.code(), e.what());
  }
}

// An integer key in [min, 2^31], the runtime's range (src/model/hparams.cpp): it keeps every
// product of two widths inside int64.
int64_t int_key(const gguf::File& file, const std::string& key, int64_t min = 1) {
  const uint64_t v = read_value(file, key, [&](const gguf::Value& x) { return x.as_u64(key); });
  if (v < static_cast<uint64_t>(min) || v > (1ull << 31))
    fail(file, ErrorCode::kFormat, key + " = " + std::to_string(v) + " is out of range");
  return static_cast<int64_t>(v);
}

// f32 keys widen through their shortest decimal form: the exporter narrowed the config's
// double (1e-5) to f32, and this gives 1e-5 back rather than 9.99999975e-06.
double real_key(const gguf::File& file, const std::string& key) {
  const gguf::Value& v = require_key(file, key);
  if (const auto* f = std::get_if<float>(&v.storage())) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, *f).ptr;
    double d = 0;
    std::from_chars(buf, end, d);
    return d;
  }
  return read_value(file, key, [&](const gguf::Value& x) { return x.as_f64(key); });
}

std::string string_key(const gguf::File& file, const std::string& key) {
  return read_value(file, key, [&](const gguf::Value& x) { return x.as_string(key); });
}

std::string read_arch(const gguf::File& file) {
  const std::string arch = string_key(file, "general.architecture");
  if (arch != "llama" && arch != "afm-device" && arch != "afm-server")
    fail(file, ErrorCode::kUnsupported,
         "general.architecture '" + arch +
             "' has no training model (llama, afm-device, afm-server)");
  return arch;
}

// Keys the trainer's models cannot represent: one head width for K and V, RoPE over the whole
// head, the mean track merge.
void check_representable(const gguf::File& file, const ModelConfig& c) {
  const std::string p = c.arch + ".";
  const int64_t value_length = int_key(file, p + "attention.value_length");
  if (value_length != c.head_dim)
    fail(file, ErrorCode::kUnsupported,
         p + "attention.value_length " + std::to_string(value_length) + " differs from key_length " +
             std::to_string(c.head_dim) + "; the training models use one head width");
  if (c.arch == "llama") {
    const int64_t rope_dims = int_key(file, p + "rope.dimension_count");
    if (rope_dims != c.head_dim)
      fail(file, ErrorCode::kUnsupported,
           p + "rope.dimension_count " + std::to_string(rope_dims) +
               " is not the head width " + std::to_string(c.head_dim) +
               "; the training models rotate whole heads");
  }
  if (c.arch == "afm-server") {
    const std::string merge = string_key(file, p + "track_merge");
    if (merge != "mean")
      fail(file, ErrorCode::kUnsupported, p + "track_merge '" + merge + "' is not supported (mean)");
  }
}

void read_server_keys(const gguf::File& file, const std::string& p, ModelConfig& c) {
  c.tracks = int_key(file, p + "tracks");
  c.track_block_depth = int_key(file, p + "track_block_depth");
  c.expert_count = int_key(file, p + "expert_count", 0);
  c.expert_used_count = int_key(file, p + "expert_used_count", 0);
  c.expert_feed_forward_length = int_key(file, p + "expert_feed_forward_length", 0);
  c.moe_every = int_key(file, p + "moe_every");
  c.sliding_window = int_key(file, p + "attention.sliding_window");
  c.global_every = int_key(file, p + "attention.global_every");
}

// Runs the config file's validation, so a GGUF gives the trainer nothing a config file could
// not; its messages name the config field, which is the key's last part.
ModelConfig validated(const gguf::File& file, const ModelConfig& c) {
  try {
    return ModelConfig::from_json(c.to_json());
  } catch (const Error& e) {
    fail(file, ErrorCode::kFormat, std::string("metadata rejected: ") + e.what());
  }
}

// ---- tensors --------------------------------------------------------------------------------

// Refuses metadata describing a model far larger than the file before anything is allocated:
// a corrupt block_count or width would otherwise build (and randomly initialise) a model of
// terabytes. The long double bound comes first because parameter_count() multiplies widths in
// int64, which hostile keys overflow; the slack (2x + 1M) lets a missing or misshapen tensor
// reach match_tensors(), whose error names it.
void check_plausible_size(const gguf::File& file, const ModelConfig& c) {
  // Every layer has several tensors; this also bounds parameter_count()'s loop over layers.
  const int64_t layers = c.block_count * c.tracks;
  if (layers > static_cast<int64_t>(file.tensors().size()))
    fail(file, ErrorCode::kFormat,
         "the metadata describes " + std::to_string(layers) + " layers (" + c.arch +
             ".block_count x tracks), the file has " + std::to_string(file.tensors().size()) +
             " tensors");
  uint64_t file_values = 0;
  for (const gguf::TensorInfo& t : file.tensors()) file_values += t.n_elements();
  using L = long double;
  const L d = c.embedding_length, hd = c.effective_head_dim();
  const L q = c.head_count * hd, kv = c.head_count_kv * hd, e = c.expert_count;
  const L layer = 2 * d + 2 * d * q + 2 * d * kv + 2 * hd + 3 * d * c.feed_forward_length +
                  d * e + 3 * e * d * c.expert_feed_forward_length;
  const L bound = c.vocab_size * d + d + L(c.block_count) * L(c.tracks) * layer;
  const bool huge = bound > L(1ull << 62);
  if (huge || c.parameter_count() > 2 * static_cast<int64_t>(file_values) + (1 << 20))
    fail(file, ErrorCode::kFormat,
         "the metadata (" + c.arch + ".vocab_size, embedding_length, block_count, ...) describes " +
             (huge ? std::string("more than 2^62") : std::to_string(c.parameter_count())) +
             " parameters, the file's tensors hold " + std::to_string(file_values) + " values");
}

std::vector<uint64_t> gguf_shape(const torch::Tensor& t) {
  std::vector<uint64_t> shape;  // GGUF lists the innermost dimension first
  for (int64_t i = t.dim() - 1; i >= 0; --i) shape.push_back(static_cast<uint64_t>(t.size(i)));
  return shape;
}

// The file's tensor for each parameter, in parameter order; every file tensor must be used.
std::vector<const gguf::TensorInfo*> match_tensors(const gguf::File& file,
                                                   const LanguageModel& model) {
  const std::string& arch = model.config().arch;
  std::vector<const gguf::TensorInfo*> matched;
  std::unordered_set<std::string> names;
  for (const NamedParameter& p : model.gguf_parameters()) {
    const std::vector<uint64_t> want = gguf_shape(p.tensor);
    const gguf::TensorInfo* t = file.find_tensor(p.gguf_name);
    if (t == nullptr)
      fail(file, ErrorCode::kFormat,
           "missing tensor " + p.gguf_name + " (shape " + shape_string(want) + ") of the " + arch +
               " model its metadata describes");
    if (t->shape != want)
      fail(file, ErrorCode::kFormat,
           "tensor " + p.gguf_name + " has shape " + shape_string(t->shape) + ", the " + arch +
               " model expects " + shape_string(want) + " (GGUF order, innermost first)");
    matched.push_back(t);
    names.insert(p.gguf_name);
  }
  for (const gguf::TensorInfo& t : file.tensors())
    if (names.count(t.name) == 0)
      fail(file, ErrorCode::kFormat,
           "tensor " + t.name + " (shape " + shape_string(t.shape) + ") is not a parameter of the " +
               arch + " training model");
  return matched;
}


void load_parameters(const gguf::File& file, LanguageModel& model) {
  const std::vector<const gguf::TensorInfo*> tensors = match_tensors(file, model);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const torch::Tensor& param = model.gguf_parameters()[i].tensor;
    torch::Tensor values = torch::empty(param.sizes(), torch::kFloat32);
    dequantize_tensor(file, *tensors[i], values.data_ptr<float>());
    param.copy_(values);
  }
}

std::string tokenizer_note(const gguf::File& file) {
  const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
  if (tokens == nullptr || !tokens->is_array()) return "none (no tokenizer.ggml.tokens)";
  const gguf::Value* model = file.find("tokenizer.ggml.model");
  const gguf::Value* pre = file.find("tokenizer.ggml.pre");
  std::string note = model != nullptr && model->is_string() ? model->as_string("") : "unknown";
  if (pre != nullptr && pre->is_string()) note += " (pre: " + pre->as_string("") + ")";
  const size_t n = tokens->as_array("tokenizer.ggml.tokens").items.size();
  return note + ", " + std::to_string(n) + " tokens";
}

}  // namespace

void dequantize_tensor(const gguf::File& file, const gguf::TensorInfo& t, float* out) {
  const auto* data = static_cast<const uint8_t*>(t.data);
  if (t.type != gguf::TensorType::kASTC6X6) {
    // Block rows are whole blocks (the reader checks shape[0]): the tensor is one run of them.
    quant::decode_values(data, static_cast<size_t>(t.n_elements()), t.type, out);
    return;
  }
  // A stack of matrices, each tiled on its own and checked before it is decoded.
  const int64_t cols = static_cast<int64_t>(t.shape[0]), rows = static_cast<int64_t>(t.shape[1]);
  const size_t bytes = quant::astc::tile_grid(rows, cols).bytes;
  for (int64_t e = 0; e < static_cast<int64_t>(t.n_elements()) / (rows * cols); ++e) {
    quant::astc::decode_matrix(data + e * bytes, rows, cols, file.path() + ": tensor " + t.name,
                               out + e * rows * cols);
  }
}

ModelConfig read_gguf_model_config(const gguf::File& file) {
  ModelConfig c;
  c.arch = read_arch(file);
  const std::string p = c.arch + ".";
  c.vocab_size = int_key(file, p + "vocab_size");
  c.context_length = int_key(file, p + "context_length");
  c.embedding_length = int_key(file, p + "embedding_length");
  c.block_count = int_key(file, p + "block_count");
  c.feed_forward_length = int_key(file, p + "feed_forward_length");
  c.head_count = int_key(file, p + "attention.head_count");
  c.head_count_kv = int_key(file, p + "attention.head_count_kv");
  c.head_dim = int_key(file, p + "attention.key_length");
  c.rope_freq_base = real_key(file, p + "rope.freq_base");
  c.rms_epsilon = real_key(file, p + "attention.layer_norm_rms_epsilon");
  if (c.arch != "llama") c.qk_norm_epsilon = real_key(file, p + "attention.qk_norm_epsilon");
  if (c.arch == "afm-device") c.block1_layers = int_key(file, p + "kv_share.block1_layers");
  if (c.arch == "afm-server") read_server_keys(file, p, c);
  check_representable(file, c);
  return validated(file, c);
}

ModelConfig read_gguf_model_config(const std::string& path) {
  return read_gguf_model_config(gguf::File::open(path));
}

ImportedModel import_gguf_model(const std::string& path, const torch::Device& device) {
  const gguf::File file = gguf::File::open(path);
  ImportedModel out;
  out.config = read_gguf_model_config(file);
  check_plausible_size(file, out.config);
  // The seed is irrelevant: every parameter is overwritten from the file.
  out.model = make_language_model(out.config, 0);
  load_parameters(file, *out.model);
  out.model->to(device);
  out.tokenizer_note = tokenizer_note(file);
  return out;
}

}  // namespace afm::train
