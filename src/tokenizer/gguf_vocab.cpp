// GGUF tokenizer.* keys (llama.cpp's names) <-> VocabSpec.
#include <cstdio>

#include "base/error.h"
#include "tokenizer/gguf_export.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace afm::tokenizer {

namespace {

// llama.cpp's token types.
constexpr int32_t kTypeNormal = 1, kTypeUnknown = 2, kTypeControl = 3, kTypeUserDefined = 4,
                  kTypeByte = 6;

std::optional<int32_t> optional_id(const gguf::File& f, const char* key) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return std::nullopt;
  return static_cast<int32_t>(v->as_i64(key));
}

bool optional_bool(const gguf::File& f, const char* key, bool fallback) {
  const gguf::Value* v = f.find(key);
  return v == nullptr ? fallback : v->as_bool(key);
}

std::vector<std::string> string_list(const gguf::File& f, const char* key) {
  std::vector<std::string> out;
  for (const gguf::Value& v : f.get(key).as_array(key).items) out.push_back(v.as_string(key));
  return out;
}

void set_id(gguf::Writer& w, const char* key, const std::optional<int32_t>& id) {
  if (id) w.set(key, gguf::Value(static_cast<uint32_t>(*id)));
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const gguf::File& f) {
  VocabSpec spec;
  const std::string& model = f.get_string("tokenizer.ggml.model");
  const gguf::Value* pre = f.find("tokenizer.ggml.pre");
  const std::string pre_name = pre != nullptr ? pre->as_string("tokenizer.ggml.pre") : "";
  if (model == "gpt2") {
    // llama.cpp uses its "default" regexes when a BPE vocabulary names no pre-tokenizer.
    spec.pre_name = pre_name.empty() ? "default" : pre_name;
    const PreTokenizerName& p = pre_tokenizer_for_name(spec.pre_name);
    spec.pre_regex = p.regexes[0];
    if (p.regexes.size() > 1) spec.pre_regex_stages = p.regexes;
    spec.ignore_merges = p.ignore_merges;  // as llama.cpp does (Llama-3)
  } else if (model == "llama") {
    // SentencePiece: llama.cpp ignores tokenizer.ggml.pre here (converters write "default").
    spec.kind = ModelKind::kSentencePiece;
    spec.add_prefix_space = optional_bool(f, "tokenizer.ggml.add_space_prefix", true);
  } else if (model == "gemma4") {
    // Raw-UTF-8 BPE with "▁" for spaces, split at newlines only, byte fallback <0xNN>.
    spec.kind = ModelKind::kSentencePieceBpe;
    spec.pre_name = "gemma4";
    spec.pre_regex = "[^\\n]+|[\\n]+";
    spec.newline_runs_whole = true;
    spec.byte_fallback = true;
    spec.add_prefix_space = optional_bool(f, "tokenizer.ggml.add_space_prefix", false);
  } else {
    const char* why = model == "bert"   ? " (WordPiece)"
                      : model == "t5"   ? " (Unigram)"
                      : model == "rwkv" ? " (RWKV)"
                                        : "";
    throw_error(ErrorCode::kUnsupported, f.path() + ": tokenizer.ggml.model '" + model + "'" + why +
                                             " is not supported (gpt2, llama, gemma4)");
  }
  spec.tokens = string_list(f, "tokenizer.ggml.tokens");
  if (spec.kind == ModelKind::kSentencePiece) {
    if (const gguf::Value* scores = f.find("tokenizer.ggml.scores")) {
      const auto& items = scores->as_array("tokenizer.ggml.scores").items;
      if (items.size() != spec.tokens.size()) {
        throw_error(ErrorCode::kFormat, f.path() + ": tokenizer.ggml.scores has " +
                                            std::to_string(items.size()) + " entries for " +
                                            std::to_string(spec.tokens.size()) + " tokens");
      }
      spec.scores.reserve(items.size());
      for (const gguf::Value& v : items)
        spec.scores.push_back(static_cast<float>(v.as_f64("tokenizer.ggml.scores")));
    }
  } else {
    for (const std::string& m : string_list(f, "tokenizer.ggml.merges")) {
      size_t sp = m.find(' ', 1);
      if (sp == std::string::npos)
        throw_error(ErrorCode::kFormat, f.path() + ": merge '" + m + "' has no space");
      spec.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
    }
  }
  if (const gguf::Value* types = f.find("tokenizer.ggml.token_type")) {
    const auto& items = types->as_array("tokenizer.ggml.token_type").items;
    if (items.size() != spec.tokens.size()) {
      throw_error(ErrorCode::kFormat, f.path() + ": tokenizer.ggml.token_type has " +
                                          std::to_string(items.size()) + " entries for " +
                                          std::to_string(spec.tokens.size()) + " tokens");
    }
    for (size_t i = 0; i < items.size(); ++i) {
      int64_t t = items[i].as_i64("tokenizer.ggml.token_type");
      // Unknown and control tokens are special (matched only with parse_special, as in
      // llama.cpp); user-defined ones are matched always.
      if (t == kTypeUnknown || t == kTypeControl || t == kTypeUserDefined) {
        spec.added.push_back({static_cast<int32_t>(i), spec.tokens[i], t != kTypeUserDefined});
      }
      if (t == kTypeByte && spec.kind == ModelKind::kSentencePiece) spec.byte_fallback = true;
    }
  }
  spec.bos_id = optional_id(f, "tokenizer.ggml.bos_token_id");
  spec.eos_id = optional_id(f, "tokenizer.ggml.eos_token_id");
  spec.unk_id = optional_id(f, "tokenizer.ggml.unknown_token_id");
  spec.pad_id = optional_id(f, "tokenizer.ggml.padding_token_id");
  spec.add_bos = optional_bool(f, "tokenizer.ggml.add_bos_token", false);
  spec.add_eos = optional_bool(f, "tokenizer.ggml.add_eos_token", false);
  if (const gguf::Value* t = f.find("tokenizer.chat_template"))
    spec.chat_template = t->as_string("tokenizer.chat_template");
  for (int32_t* id :
       {spec.bos_id ? &*spec.bos_id : nullptr, spec.eos_id ? &*spec.eos_id : nullptr}) {
    if (id != nullptr && (*id < 0 || static_cast<size_t>(*id) >= spec.tokens.size())) {
      throw_error(ErrorCode::kFormat,
                  f.path() + ": special token id " + std::to_string(*id) + " is out of range");
    }
  }
  return Tokenizer(std::move(spec));
}

void add_gguf_tokenizer_metadata(const std::string& tokenizer_json_text,
                                 const std::string& tokenizer_config_json_text, gguf::Writer& w) {
  VocabSpec spec = parse_tokenizer_json(tokenizer_json_text, tokenizer_config_json_text);
  if (spec.kind != ModelKind::kByteLevelBpe) {
    throw_error(
        ErrorCode::kUnsupported,
        "SentencePiece-style tokenizers cannot be written to GGUF yet (byte-level BPE only)");
  }
  if (spec.ignore_merges != (spec.pre_name == "llama-bpe")) {
    // llama.cpp derives ignore_merges from the pre-tokenizer name; a mismatch would tokenize
    // differently there.
    throw_error(
        ErrorCode::kUnsupported,
        "tokenizer.json: ignore_merges=" + std::string(spec.ignore_merges ? "true" : "false") +
            " does not match what llama.cpp assumes for '" + spec.pre_name + "'");
  }
  std::vector<int32_t> types(spec.tokens.size(), kTypeNormal);
  for (const AddedToken& t : spec.added)
    types[static_cast<size_t>(t.id)] = t.special ? kTypeControl : kTypeUserDefined;
  std::vector<std::string> merges;
  merges.reserve(spec.merges.size());
  for (const auto& [a, b] : spec.merges) merges.push_back(a + " " + b);
  w.set("tokenizer.ggml.model", gguf::Value("gpt2"));
  w.set("tokenizer.ggml.pre", gguf::Value(spec.pre_name));
  w.set("tokenizer.ggml.tokens", gguf::Value::string_array(spec.tokens));
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of(gguf::ValueType::kInt32, types));
  w.set("tokenizer.ggml.merges", gguf::Value::string_array(merges));
  set_id(w, "tokenizer.ggml.bos_token_id", spec.bos_id);
  set_id(w, "tokenizer.ggml.eos_token_id", spec.eos_id);
  set_id(w, "tokenizer.ggml.unknown_token_id", spec.unk_id);
  set_id(w, "tokenizer.ggml.padding_token_id", spec.pad_id);
  w.set("tokenizer.ggml.add_bos_token", gguf::Value(spec.add_bos));
  w.set("tokenizer.ggml.add_eos_token", gguf::Value(spec.add_eos));
  if (!spec.chat_template.empty())
    w.set("tokenizer.chat_template", gguf::Value(spec.chat_template));
}

}  // namespace afm::tokenizer
