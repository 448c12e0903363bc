#include "tokenizer/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace afm::tokenizer {

namespace {

using json = nlohmann::json;

[[noreturn]] void unsupported(const std::string& what, const std::string& pointer) {
  throw_error(ErrorCode::kUnsupported, "tokenizer.json: " + what + " at " + pointer);
}
[[noreturn]] void malformed(const std::string& what, const std::string& pointer) {
  throw_error(ErrorCode::kFormat, "tokenizer.json: " + what + " at " + pointer);
}

const json& field(const json& j, const char* key, const std::string& pointer) {
  if (!j.is_object() || !j.contains(key)) malformed(std::string("missing '") + key + "'", pointer);
  return j[key];
}

std::string type_of(const json& j, const std::string& pointer) {
  const json& t = field(j, "type", pointer);
  if (!t.is_string()) malformed("'type' is not a string", pointer + "/type");
  return t.get<std::string>();
}

void read_model(const json& model, VocabSpec& spec) {
  std::string type = type_of(model, "/model");
  if (type != "BPE") unsupported("model type '" + type + "' (only BPE)", "/model/type");
  const json& vocab = field(model, "vocab", "/model");
  if (!vocab.is_object()) malformed("vocab is not an object", "/model/vocab");
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > 10'000'000) {
      malformed("bad id for token '" + token + "'", "/model/vocab");
    }
    size_t i = id.get<size_t>();
    if (spec.tokens.size() <= i) spec.tokens.resize(i + 1);
    spec.tokens[i] = token;
  }
  const json& merges = field(model, "merges", "/model");
  if (!merges.is_array()) malformed("merges is not an array", "/model/merges");
  for (size_t r = 0; r < merges.size(); ++r) {
    const json& m = merges[r];
    std::string ptr = "/model/merges/" + std::to_string(r);
    if (m.is_string()) {
      std::string s = m.get<std::string>();
      size_t sp = s.find(' ', 1);
      if (sp == std::string::npos) malformed("merge without a space", ptr);
      spec.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      spec.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      malformed("merge is neither \"a b\" nor [a, b]", ptr);
    }
  }
  spec.byte_fallback = model.value("byte_fallback", false);
  spec.ignore_merges = model.value("ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    const std::string unk = model["unk_token"].get<std::string>();
    auto it = vocab.find(unk);
    if (it != vocab.end()) spec.unk_id = it->get<int32_t>();
  }
}

void read_byte_level(const json& p, const std::string& ptr, bool inside_split, VocabSpec& spec) {
  spec.add_prefix_space = p.value("add_prefix_space", false);
  if (p.value("use_regex", true)) {
    if (inside_split) unsupported("ByteLevel regex after a Split", ptr);
    spec.pre_regex = pre_regex_for_name("gpt-2");
  }
}

void read_metaspace(const json& p, const std::string& ptr, VocabSpec& spec) {
  if (p.value("replacement", std::string("\xe2\x96\x81")) != "\xe2\x96\x81") {
    unsupported("Metaspace replacement other than U+2581", ptr);
  }
  if (p.value("split", false)) unsupported("Metaspace with split=true", ptr);
  std::string scheme = p.value("prepend_scheme", std::string("always"));
  if (scheme == "never") unsupported("Metaspace prepend_scheme 'never'", ptr);
  spec.kind = ModelKind::kSentencePieceBpe;
  spec.add_prefix_space = true;
  spec.prepend_first_only = scheme == "first";
}

void read_pre_tokenizer(const json& p, VocabSpec& spec) {
  if (p.is_null()) return;
  std::string type = type_of(p, "/pre_tokenizer");
  if (type == "ByteLevel") return read_byte_level(p, "/pre_tokenizer", false, spec);
  if (type == "Metaspace") return read_metaspace(p, "/pre_tokenizer", spec);
  if (type != "Sequence") unsupported("pre-tokenizer '" + type + "'", "/pre_tokenizer/type");
  const json& items = field(p, "pretokenizers", "/pre_tokenizer");
  if (!items.is_array() || items.size() != 2)
    unsupported("pre-tokenizer sequence shape", "/pre_tokenizer");
  const json& split = items[0];
  if (type_of(split, "/pre_tokenizer/pretokenizers/0") != "Split" ||
      split.value("behavior", std::string()) != "Isolated" || split.value("invert", false) ||
      !split.contains("pattern") || !split["pattern"].contains("Regex")) {
    unsupported("first pre-tokenizer must be Split(Regex, Isolated)",
                "/pre_tokenizer/pretokenizers/0");
  }
  if (type_of(items[1], "/pre_tokenizer/pretokenizers/1") != "ByteLevel") {
    unsupported("second pre-tokenizer must be ByteLevel", "/pre_tokenizer/pretokenizers/1");
  }
  read_byte_level(items[1], "/pre_tokenizer/pretokenizers/1", true, spec);
  spec.pre_regex = split["pattern"]["Regex"].get<std::string>();
}

// Only the SentencePiece normalizer pair is accepted: Prepend("▁") then Replace(" ", "▁").
void read_normalizer(const json& n, VocabSpec& spec) {
  if (n.is_null()) return;
  std::string type = type_of(n, "/normalizer");
  bool ok = type == "Sequence" && n.contains("normalizers") && n["normalizers"].size() == 2 &&
            n["normalizers"][0].value("type", "") == "Prepend" &&
            n["normalizers"][0].value("prepend", "") == "\xe2\x96\x81" &&
            n["normalizers"][1].value("type", "") == "Replace" &&
            n["normalizers"][1].value("content", "") == "\xe2\x96\x81";
  if (!ok)
    unsupported("normalizer '" + type + "' (only SentencePiece's Prepend+Replace)", "/normalizer");
  spec.kind = ModelKind::kSentencePieceBpe;
  spec.add_prefix_space = true;
  spec.prepend_always = true;
}

void read_added_tokens(const json& added, VocabSpec& spec) {
  if (added.is_null()) return;
  if (!added.is_array()) malformed("added_tokens is not an array", "/added_tokens");
  for (size_t i = 0; i < added.size(); ++i) {
    const json& a = added[i];
    std::string ptr = "/added_tokens/" + std::to_string(i);
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_unsigned() ||
        !a.contains("content") || !a["content"].is_string() ||
        a["content"].get<std::string>().empty()) {
      malformed("added token needs an id and non-empty content", ptr);
    }
    if (a.value("lstrip", false) || a.value("rstrip", false) || a.value("single_word", false)) {
      unsupported("added token with lstrip/rstrip/single_word", ptr);
    }
    const bool special = a.value("special", false);
    AddedToken t{a["id"].get<int32_t>(), a["content"].get<std::string>(), special,
                 a.value("normalized", !special)};  // HF's default: normalized unless special
    if (t.id < 0 || t.id > 10'000'000) malformed("added token id out of range", ptr);
    if (spec.tokens.size() <= static_cast<size_t>(t.id))
      spec.tokens.resize(static_cast<size_t>(t.id) + 1);
    spec.tokens[static_cast<size_t>(t.id)] = t.content;
    spec.added.push_back(std::move(t));
  }
}

std::optional<int32_t> id_of(const VocabSpec& spec, const std::string& content) {
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    if (spec.tokens[i] == content) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

// tokenizer_config.json token fields are strings or {"content": ...} objects.
std::optional<int32_t> config_token(const json& cfg, const char* key, const VocabSpec& spec) {
  if (!cfg.contains(key)) return std::nullopt;
  const json& v = cfg[key];
  if (v.is_string()) return id_of(spec, v.get<std::string>());
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return id_of(spec, v["content"].get<std::string>());
  }
  return std::nullopt;
}

void read_post_processor(const json& p, VocabSpec& spec) {
  if (!p.is_object() || p.value("type", "") != "TemplateProcessing") return;
  const json& single = p.value("single", json::array());
  if (single.is_array() && !single.empty() && single[0].contains("SpecialToken")) {
    spec.add_bos = true;
    spec.bos_id = id_of(spec, single[0]["SpecialToken"].value("id", ""));
  }
}

void read_config(const std::string& text, VocabSpec& spec) {
  if (text.empty()) return;
  json cfg = json::parse(text, nullptr, false);
  if (cfg.is_discarded() || !cfg.is_object()) {
    throw_error(ErrorCode::kFormat, "tokenizer_config.json: not a valid JSON object");
  }
  if (auto id = config_token(cfg, "bos_token", spec)) spec.bos_id = id;
  if (auto id = config_token(cfg, "eos_token", spec)) spec.eos_id = id;
  if (auto id = config_token(cfg, "pad_token", spec)) spec.pad_id = id;
  if (auto id = config_token(cfg, "unk_token", spec)) spec.unk_id = id;
  if (cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean())
    spec.add_bos = cfg["add_bos_token"];
  if (cfg.contains("add_eos_token") && cfg["add_eos_token"].is_boolean())
    spec.add_eos = cfg["add_eos_token"];
  const json& tmpl = cfg.value("chat_template", json());
  if (tmpl.is_string()) {
    spec.chat_template = tmpl.get<std::string>();
  } else if (tmpl.is_array()) {  // [{"name": "default", "template": "..."}, ...]
    for (const json& t : tmpl) {
      if (t.value("name", "") == "default" && t.contains("template"))
        spec.chat_template = t["template"];
    }
  }
}

}  // namespace

VocabSpec parse_tokenizer_json(const std::string& tokenizer_json,
                               const std::string& tokenizer_config_json) {
  json j = json::parse(tokenizer_json, nullptr, false);
  if (j.is_discarded()) throw_error(ErrorCode::kFormat, "tokenizer.json: not valid JSON");
  if (!j.is_object()) malformed("top level is not an object", "/");
  VocabSpec spec;
  try {
    read_model(field(j, "model", ""), spec);
    read_normalizer(j.value("normalizer", json()), spec);
    read_pre_tokenizer(j.value("pre_tokenizer", json()), spec);
    read_added_tokens(j.value("added_tokens", json()), spec);
    read_post_processor(j.value("post_processor", json()), spec);
  } catch (const json::exception& e) {  // a value of the wrong JSON type somewhere
    throw_error(ErrorCode::kFormat, std::string("tokenizer.json: ") + e.what());
  }
  if (spec.kind == ModelKind::kByteLevelBpe) {
    if (spec.pre_regex.empty())
      unsupported("byte-level BPE needs a ByteLevel pre-tokenizer", "/pre_tokenizer");
    spec.pre_name = pre_name_for_regex(spec.pre_regex);
  }
  for (size_t i = 0; i < spec.tokens.size(); ++i) {
    if (spec.tokens[i].empty())
      malformed("token id " + std::to_string(i) + " has no token", "/model/vocab");
  }
  try {
    read_config(tokenizer_config_json, spec);
  } catch (const json::exception& e) {
    throw_error(ErrorCode::kFormat, std::string("tokenizer_config.json: ") + e.what());
  }
  return spec;
}

}  // namespace afm::tokenizer
