#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "base/mapped_file.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm.h"
#include "tokenizer/tokenizer_json.h"

namespace afm::tokenizer {

namespace {
constexpr std::string_view kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space

// `text` with every space as "▁", after `prefix`.
std::string escape_spaces(std::string_view prefix, std::string_view text) {
  std::string out(prefix);
  out.reserve(prefix.size() + text.size() + text.size() / 4);
  for (char c : text) {
    if (c == ' ')
      out += kSpace;
    else
      out.push_back(c);
  }
  return out;
}
}  // namespace

Tokenizer::Tokenizer(VocabSpec spec) : spec_(std::move(spec)) {
  if (spec_.kind == ModelKind::kSentencePiece)
    spm_ = std::make_unique<SpmModel>(spec_);
  else
    bpe_ = std::make_unique<BpeModel>(spec_);
  if (!spec_.pre_regex_stages.empty())
    pre_ = std::make_unique<PreTokenizer>(spec_.pre_regex_stages);
  else if (spec_.kind == ModelKind::kByteLevelBpe || !spec_.pre_regex.empty())
    pre_ = std::make_unique<PreTokenizer>(std::vector<std::string>{spec_.pre_regex});
  special_.assign(spec_.tokens.size(), 0);
  for (const AddedToken& t : spec_.added) {
    if (t.content.empty()) continue;
    if (t.special && static_cast<size_t>(t.id) < special_.size())
      special_[static_cast<size_t>(t.id)] = 1;
    if (spec_.prepend_always && t.normalized) {
      normalized_added_.emplace_back(escape_spaces(kSpace, t.content), t.id);
      continue;
    }
    added_by_length_.push_back(&t);
    added_first_byte_[0][static_cast<uint8_t>(t.content[0])] = true;
    if (!t.special) added_first_byte_[1][static_cast<uint8_t>(t.content[0])] = true;
  }
  std::stable_sort(added_by_length_.begin(), added_by_length_.end(),
                   [](const AddedToken* a, const AddedToken* b) {
                     return a->content.size() > b->content.size();
                   });
  std::stable_sort(normalized_added_.begin(), normalized_added_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Tokenizer Tokenizer::from_json(const std::string& tokenizer_json, const std::string& config_json) {
  return Tokenizer(parse_tokenizer_json(tokenizer_json, config_json));
}

Tokenizer Tokenizer::from_json_file(const std::string& path) {
  std::filesystem::path config =
      std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  std::string config_text =
      std::filesystem::exists(config) ? read_file_to_string(config.string()) : "";
  return from_json(read_file_to_string(path), config_text);
}

void Tokenizer::encode_segment(std::string_view text, bool at_start,
                               std::vector<int32_t>& out) const {
  if (spec_.kind == ModelKind::kSentencePiece) {
    // One word per segment, "▁" for spaces; llama.cpp prepends one to every segment.
    spm_->encode(escape_spaces(spec_.add_prefix_space ? kSpace : "", text), out);
    return;
  }
  if (spec_.kind == ModelKind::kSentencePieceBpe && spec_.newline_runs_whole) {
    // Gemma 4: "▁" for spaces, no prefix, pieces split at newlines.
    std::string escaped = escape_spaces("", text);
    std::vector<std::string_view> pieces;
    pre_->split(escaped, pieces);
    for (std::string_view piece : pieces) {
      if (piece.find_first_not_of('\n') == std::string_view::npos) {
        if (auto id = bpe_->token_id(piece)) {
          out.push_back(*id);
          continue;
        }
      }
      bpe_->encode(piece, out);
    }
    return;
  }
  if (spec_.kind == ModelKind::kSentencePieceBpe && spec_.prepend_always) {
    encode_normalized_segment(text, out);
    return;
  }
  if (spec_.kind == ModelKind::kSentencePieceBpe) {
    // One word per segment: spaces become "▁", and a "▁" is prepended: by HF's Prepend
    // normalizer to every segment, by its Metaspace pre-tokenizer unless one leads already.
    bool prefix = spec_.add_prefix_space && (!spec_.prepend_first_only || at_start) &&
                  (spec_.prepend_always || text.empty() || text[0] != ' ');
    bpe_->encode(escape_spaces(prefix ? kSpace : "", text), out);
    return;
  }
  std::string prefixed;
  if (spec_.add_prefix_space && !text.empty() && text[0] != ' ') {
    prefixed = " " + std::string(text);
    text = prefixed;
  }
  std::vector<std::string_view> pieces;
  pre_->split(text, pieces);
  std::string mapped;
  for (std::string_view piece : pieces) {
    mapped.clear();
    bytes_to_byte_level(piece, mapped);
    if (spec_.ignore_merges) {
      if (auto id = bpe_->token_id(mapped)) {
        out.push_back(*id);
        continue;
      }
    }
    bpe_->encode(mapped, out);
  }
}

void Tokenizer::encode_normalized_segment(std::string_view text,
                                          std::vector<int32_t>& out) const {
  // HF normalizes each segment between the raw-matched added tokens on its own: "▁" in front
  // even of one that starts with a space.
  const std::string normalized = escape_spaces(kSpace, text);
  const std::string_view s = normalized;
  size_t piece_start = 0, i = 0;
  while (i < s.size()) {
    const std::pair<std::string, int32_t>* match = nullptr;
    for (const auto& t : normalized_added_) {  // longest first
      if (s.compare(i, t.first.size(), t.first) == 0) {
        match = &t;
        break;
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    if (i > piece_start) bpe_->encode(s.substr(piece_start, i - piece_start), out);
    out.push_back(match->second);
    i += match->first.size();
    piece_start = i;
  }
  if (piece_start < s.size()) bpe_->encode(s.substr(piece_start), out);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, EncodeOptions options) const {
  std::vector<int32_t> out;
  if (options.add_bos && spec_.bos_id) out.push_back(*spec_.bos_id);
  size_t segment_start = 0, i = 0;
  while (i < text.size()) {
    const AddedToken* match = nullptr;
    if (added_first_byte_[options.parse_special ? 0 : 1][static_cast<uint8_t>(text[i])]) {
      for (const AddedToken* t : added_by_length_) {  // longest first
        if (t->special && !options.parse_special) continue;
        if (text.compare(i, t->content.size(), t->content) == 0) {
          match = t;
          break;
        }
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    if (i > segment_start)
      encode_segment(text.substr(segment_start, i - segment_start), segment_start == 0, out);
    out.push_back(match->id);
    i += match->content.size();
    segment_start = i;
  }
  if (segment_start < text.size())
    encode_segment(text.substr(segment_start), segment_start == 0, out);
  return out;
}

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < special_.size() && special_[static_cast<size_t>(id)];
}

std::optional<int32_t> Tokenizer::added_token_id(std::string_view content) const {
  for (const AddedToken& t : spec_.added) {
    if (t.content == content) return t.id;
  }
  return std::nullopt;
}

std::string Tokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return std::string();
  const std::string& token = spec_.tokens[static_cast<size_t>(id)];
  if (spec_.byte_fallback && token.size() == 6 && token.rfind("<0x", 0) == 0 && token[5] == '>') {
    return std::string(1, static_cast<char>(std::stoi(token.substr(3, 2), nullptr, 16)));
  }
  for (const AddedToken& t : spec_.added) {
    if (t.id == id) return t.content;
  }
  if (spec_.kind == ModelKind::kByteLevelBpe) {
    std::optional<std::string> bytes = byte_level_to_bytes(token);
    return bytes ? *bytes : token;
  }
  std::string out;
  for (size_t i = 0; i < token.size();) {
    if (token.compare(i, kSpace.size(), kSpace) == 0) {
      out.push_back(' ');
      i += kSpace.size();
    } else {
      out.push_back(token[i++]);
    }
  }
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (skip_special && is_special(ids[i])) continue;
    std::string piece = token_bytes(ids[i]);
    // As llama.cpp's detokenizer: only the very first token loses the space the encoder
    // prepended; text after a leading BOS (or any other first token) keeps it.
    if (i == 0 && spec_.kind == ModelKind::kSentencePiece && spec_.add_prefix_space &&
        !piece.empty() && piece[0] == ' ')
      piece.erase(0, 1);
    out += piece;
  }
  // Like HF's Metaspace decoder: strip one leading space (the one the encoder prepends), so
  // text that itself starts with a space, or follows an added token, does not round-trip.
  if (spec_.kind == ModelKind::kSentencePieceBpe && spec_.add_prefix_space && !out.empty() &&
      out[0] == ' ')
    out.erase(0, 1);
  return out;
}

std::string IncrementalDecoder::push(int32_t id) {
  pending_ += tokenizer_.token_bytes(id);
  // Emit everything up to the last complete UTF-8 character.
  size_t end = pending_.size();
  size_t start = end;
  while (start > 0 && end - start < 4 && (static_cast<uint8_t>(pending_[start - 1]) & 0xc0) == 0x80)
    --start;
  if (start > 0) {
    size_t lead = start - 1;
    size_t need = utf8_sequence_length(static_cast<uint8_t>(pending_[lead]));
    if (need > 1 && lead + need > end) end = lead;  // incomplete: hold it back
  }
  std::string ready = pending_.substr(0, end);
  pending_.erase(0, end);
  return ready;
}

std::string IncrementalDecoder::flush() {
  std::string rest = pending_.empty() ? "" : "\xef\xbf\xbd";
  pending_.clear();
  return rest;
}

}  // namespace afm::tokenizer
