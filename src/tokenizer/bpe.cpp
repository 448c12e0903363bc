#include "tokenizer/bpe.h"

#include <cstdio>
#include <limits>

#include "base/error.h"
#include "tokenizer/byte_level.h"

namespace afm::tokenizer {

namespace {
uint64_t merge_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}
}  // namespace

BpeModel::BpeModel(const VocabSpec& spec)
    : unk_id_(spec.unk_id), byte_fallback_(spec.byte_fallback) {
  vocab_.reserve(spec.tokens.size());
  for (size_t i = 0; i < spec.tokens.size(); ++i)
    vocab_.emplace(spec.tokens[i], static_cast<int32_t>(i));
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = vocab_.find(name);
    byte_tokens_[b] = it == vocab_.end() ? -1 : it->second;
  }
  merges_.reserve(spec.merges.size());
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [left, right] = spec.merges[rank];
    auto l = vocab_.find(left), r = vocab_.find(right), m = vocab_.find(left + right);
    if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end()) {
      throw_error(ErrorCode::kFormat, "merge " + std::to_string(rank) + " '" + left + " " + right +
                                          "' uses a token missing from the vocabulary");
    }
    merges_.emplace(merge_key(l->second, r->second), Merge{static_cast<int32_t>(rank), m->second});
  }
}

std::optional<int32_t> BpeModel::token_id(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::initial_symbols(std::string_view word, std::vector<int32_t>& symbols) const {
  std::string ch;
  for (size_t i = 0; i < word.size();) {
    size_t n = utf8_sequence_length(static_cast<uint8_t>(word[i]));
    if (i + n > word.size()) n = word.size() - i;
    ch.assign(word.substr(i, n));
    i += n;
    auto it = vocab_.find(ch);
    if (it != vocab_.end()) {
      symbols.push_back(it->second);
    } else if (byte_fallback_ && byte_tokens_[static_cast<uint8_t>(ch[0])] >= 0) {
      for (char c : ch) symbols.push_back(byte_tokens_[static_cast<uint8_t>(c)]);
    } else if (unk_id_) {
      symbols.push_back(*unk_id_);
    }
  }
}

void BpeModel::encode_uncached(std::string_view word, std::vector<int32_t>& out) const {
  std::vector<int32_t> symbols;
  initial_symbols(word, symbols);
  // Words are short after pre-tokenization, so a scan for the best pair per merge is cheap.
  while (symbols.size() > 1) {
    int32_t best_rank = std::numeric_limits<int32_t>::max();
    size_t best_pos = 0;
    int32_t best_id = -1;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = merges_.find(merge_key(symbols[i], symbols[i + 1]));
      if (it != merges_.end() && it->second.rank < best_rank) {
        best_rank = it->second.rank;
        best_pos = i;
        best_id = it->second.merged_id;
      }
    }
    if (best_id < 0) break;
    symbols[best_pos] = best_id;
    symbols.erase(symbols.begin() + static_cast<long>(best_pos) + 1);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
}

void BpeModel::encode(std::string_view word, std::vector<int32_t>& out) const {
  if (word.size() > kCacheMaxWordBytes) return encode_uncached(word, out);
  std::string key(word);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  encode_uncached(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheMaxEntries) cache_.clear();
  cache_.emplace(std::move(key), std::move(ids));
}

}  // namespace afm::tokenizer
