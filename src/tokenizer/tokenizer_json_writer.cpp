#include "tokenizer/tokenizer_json_writer.h"

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace afm::tokenizer {

namespace {

using ojson = nlohmann::ordered_json;

// JSON text of `j`; Error(kInvalidArgument) when a string in it is not UTF-8.
std::string dump(const ojson& j, int indent = -1) {
  try {
    return j.dump(indent);
  } catch (const ojson::exception& e) {
    throw_error(ErrorCode::kInvalidArgument, std::string("tokenizer.json: ") + e.what());
  }
}

ojson byte_level(bool add_prefix_space, bool trim_offsets, bool use_regex) {
  return ojson{{"type", "ByteLevel"},
               {"add_prefix_space", add_prefix_space},
               {"trim_offsets", trim_offsets},
               {"use_regex", use_regex}};
}

ojson added_token(const AddedToken& t) {
  return ojson{{"id", t.id},      {"content", t.content}, {"single_word", false}, {"lstrip", false},
               {"rstrip", false}, {"normalized", false},  {"special", t.special}};
}

// Joins `items` as the lines of a JSON array or object body at the given indent.
std::string block(const std::vector<std::string>& items, const std::string& indent) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n" : "\n") + indent + items[i];
  return out;
}

// The model object is written by hand: ordered_json finds keys by linear search, far too slow
// for a 150k vocabulary. Vocab entries are in id order, as HF writes them.
std::string model(const VocabSpec& spec) {
  ojson head{{"type", "BPE"},
             {"dropout", nullptr},
             {"unk_token", nullptr},
             {"continuing_subword_prefix", nullptr},
             {"end_of_word_suffix", nullptr},
             {"fuse_unk", false},
             {"byte_fallback", false},
             {"ignore_merges", spec.ignore_merges}};
  std::vector<std::string> fields, vocab, merges;
  for (const auto& item : head.items())
    fields.push_back(dump(item.key()) + ": " + dump(item.value()));
  vocab.reserve(spec.tokens.size());
  for (size_t id = 0; id < spec.tokens.size(); ++id)
    vocab.push_back(dump(spec.tokens[id]) + ": " + std::to_string(id));
  merges.reserve(spec.merges.size());
  for (const auto& [left, right] : spec.merges) merges.push_back(dump(left + " " + right));
  fields.push_back("\"vocab\": {" + block(vocab, "      ") + "\n    }");
  fields.push_back("\"merges\": [" + block(merges, "      ") + "\n    ]");
  return "{" + block(fields, "    ") + "\n  }";
}

ojson token_or_null(const VocabSpec& spec, const std::optional<int32_t>& id) {
  if (!id || *id < 0 || static_cast<size_t>(*id) >= spec.tokens.size()) return nullptr;
  return spec.tokens[static_cast<size_t>(*id)];
}

}  // namespace

std::string to_tokenizer_json(const VocabSpec& spec) {
  if (spec.kind != ModelKind::kByteLevelBpe || spec.pre_regex.empty() ||
      !spec.pre_regex_stages.empty()) {
    throw_error(ErrorCode::kUnsupported,
                "tokenizer.json writer: only byte-level BPE with one pre-tokenizer regex");
  }
  ojson split{{"type", "Split"},
              {"pattern", {{"Regex", spec.pre_regex}}},
              {"behavior", "Isolated"},
              {"invert", false}};
  ojson pre_tokenizer{{"type", "Sequence"},
                      {"pretokenizers", {split, byte_level(false, true, false)}}};
  std::vector<std::string> added;
  for (const AddedToken& t : spec.added) added.push_back(dump(added_token(t)));
  std::vector<std::string> fields = {
      "\"version\": \"1.0\"",
      "\"truncation\": null",
      "\"padding\": null",
      "\"added_tokens\": [" + block(added, "    ") + (added.empty() ? "]" : "\n  ]"),
      "\"normalizer\": null",
      "\"pre_tokenizer\": " + dump(pre_tokenizer),
      "\"post_processor\": null",
      "\"decoder\": " + dump(byte_level(true, true, true)),
      "\"model\": " + model(spec)};
  return "{" + block(fields, "  ") + "\n}\n";
}

std::string to_tokenizer_config_json(const VocabSpec& spec) {
  ojson decoder = ojson::object();
  for (const AddedToken& t : spec.added) {
    ojson entry = added_token(t);
    entry.erase("id");
    decoder[std::to_string(t.id)] = std::move(entry);
  }
  ojson j;
  j["add_bos_token"] = spec.add_bos;
  j["add_eos_token"] = spec.add_eos;
  j["added_tokens_decoder"] = std::move(decoder);
  j["bos_token"] = token_or_null(spec, spec.bos_id);
  j["eos_token"] = token_or_null(spec, spec.eos_id);
  j["pad_token"] = token_or_null(spec, spec.pad_id);
  j["unk_token"] = token_or_null(spec, spec.unk_id);
  j["clean_up_tokenization_spaces"] = false;
  j["tokenizer_class"] = "PreTrainedTokenizerFast";
  if (!spec.chat_template.empty()) j["chat_template"] = spec.chat_template;
  return dump(j, 2) + "\n";
}

}  // namespace afm::tokenizer
