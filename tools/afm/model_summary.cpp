#include "model_summary.h"

#include <string>

#include "framework/chat_template_kind.h"

namespace afm::cli {

namespace {

nlohmann::json to_json(const gguf::Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, gguf::Array>) {
          nlohmann::json a = nlohmann::json::array();
          for (const gguf::Value& item : x.items) a.push_back(to_json(item));
          return a;
        } else {
          return x;
        }
      },
      v.storage());
}

nlohmann::json tensor_stats(const gguf::File& file, uint64_t* total_bytes) {
  nlohmann::json types = nlohmann::json::object();
  *total_bytes = 0;
  for (const gguf::TensorInfo& t : file.tensors()) {
    std::string name(gguf::tensor_type_traits(t.type).name);
    nlohmann::json& s = types[name];
    if (s.is_null()) s = {{"count", 0}, {"elements", 0ull}, {"bytes", 0ull}};
    s["count"] = s["count"].get<int>() + 1;
    s["elements"] = s["elements"].get<uint64_t>() + t.n_elements();
    s["bytes"] = s["bytes"].get<uint64_t>() + t.n_bytes;
    *total_bytes += t.n_bytes;
  }
  return types;
}

nlohmann::json special_token(const gguf::File& file, const char* key, const gguf::Array* tokens) {
  const gguf::Value* id = file.find(key);
  if (id == nullptr || !id->is_integer()) return nullptr;
  int64_t i = id->as_i64(key);
  nlohmann::json j = {{"id", i}};
  if (tokens != nullptr && i >= 0 && static_cast<uint64_t>(i) < tokens->items.size() &&
      tokens->items[static_cast<size_t>(i)].is_string()) {
    j["text"] = tokens->items[static_cast<size_t>(i)].as_string("tokenizer.ggml.tokens");
  }
  return j;
}

nlohmann::json tokenizer_summary(const gguf::File& file) {
  const gguf::Value* model = file.find("tokenizer.ggml.model");
  if (model == nullptr || !model->is_string()) return nullptr;
  const gguf::Value* tokens_v = file.find("tokenizer.ggml.tokens");
  const gguf::Array* tokens = tokens_v != nullptr && tokens_v->is_array()
                                  ? &tokens_v->as_array("tokenizer.ggml.tokens")
                                  : nullptr;
  const gguf::Value* merges = file.find("tokenizer.ggml.merges");
  const gguf::Value* pre = file.find("tokenizer.ggml.pre");
  nlohmann::json j = {
      {"model", model->as_string("tokenizer.ggml.model")},
      {"pre",
       pre != nullptr && pre->is_string() ? pre->as_string("tokenizer.ggml.pre") : "default"},
      {"vocab_size", tokens != nullptr ? tokens->items.size() : 0},
      {"merges", merges != nullptr && merges->is_array()
                     ? merges->as_array("tokenizer.ggml.merges").items.size()
                     : 0},
  };
  const std::pair<const char*, const char*> specials[] = {
      {"bos", "tokenizer.ggml.bos_token_id"},
      {"eos", "tokenizer.ggml.eos_token_id"},
      {"unk", "tokenizer.ggml.unknown_token_id"},
      {"pad", "tokenizer.ggml.padding_token_id"}};
  for (const auto& [name, key] : specials) {
    nlohmann::json s = special_token(file, key, tokens);
    if (!s.is_null()) j[name] = s;
  }
  return j;
}

}  // namespace

nlohmann::json summarize_model(const gguf::File& file) {
  std::string arch = file.architecture();
  const gguf::Value* name = file.find("general.name");
  nlohmann::json hparams = nlohmann::json::object();
  for (const auto& [key, value] : file.metadata()) {
    if (!arch.empty() && key.rfind(arch + ".", 0) == 0)
      hparams[key.substr(arch.size() + 1)] = to_json(value);
  }
  uint64_t total_bytes = 0;
  nlohmann::json types = tensor_stats(file, &total_bytes);
  const gguf::Value* tmpl = file.find("tokenizer.chat_template");
  std::string tmpl_text = tmpl != nullptr && tmpl->is_string() ? tmpl->as_string("") : "";
  return {
      {"file", file.path()},
      {"file_bytes", file.file_size()},
      {"gguf_version", file.version()},
      {"architecture", arch.empty() ? "unknown" : arch},
      {"name", name != nullptr && name->is_string() ? name->as_string("general.name") : ""},
      {"hyperparameters", hparams},
      {"tensor_count", file.tensors().size()},
      {"tensor_bytes", total_bytes},
      {"tensor_types", types},
      {"tokenizer", tokenizer_summary(file)},
      {"chat_template", std::string(chat_template_kind_name(detect_chat_template(tmpl_text)))},
  };
}

}  // namespace afm::cli
