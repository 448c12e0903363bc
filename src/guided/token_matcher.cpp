// Token masks over a ByteMatcher; see token_matcher.h for the contract.
#include "guided/token_matcher.h"

#include <algorithm>

#include "base/error.h"

namespace afm::guided {

namespace {

void set_bit(std::span<uint32_t> words, int32_t id) {
  words[static_cast<size_t>(id) >> 5] |= uint32_t{1} << (id & 31);
}

}  // namespace

TokenMatcher::TokenMatcher(std::shared_ptr<const Grammar> grammar,
                           std::shared_ptr<const TokenVocabulary> vocabulary,
                           std::shared_ptr<MaskCache> mask_cache)
    : vocabulary_(std::move(vocabulary)),
      bytes_(grammar),
      masks_(mask_cache ? std::move(mask_cache) : MaskCache::shared(grammar, vocabulary_)) {
  if (grammar->has_unique_arrays()) unique_.emplace();
}

bool TokenMatcher::accept_token(int32_t id) {
  if (terminated_ || id < 0 || id >= vocabulary_->size()) return false;
  if (vocabulary_->eos_id() == id) {
    if (!bytes_.is_complete()) return false;
    token_lengths_.push_back(0);
    terminated_ = true;
    return true;
  }
  if (!vocabulary_->is_grammar_token(id)) return false;
  const std::string& text = vocabulary_->token_bytes(id);
  if (!bytes_.accept_bytes(text)) return false;
  if (unique_) {
    bytes_.rollback(text.size());
    if (!unique_->allows(bytes_, text)) return false;
    for (char c : text) {
      AFM_CHECK(bytes_.accept_byte(static_cast<uint8_t>(c)));
      AFM_CHECK(unique_->observe(bytes_, static_cast<uint8_t>(c)));
    }
  }
  token_lengths_.push_back(static_cast<uint32_t>(text.size()));
  return true;
}

void TokenMatcher::rollback(size_t n_tokens) {
  AFM_CHECK(n_tokens <= token_lengths_.size());
  for (size_t i = 0; i < n_tokens; ++i) {
    // Only the last token can be EOS, and it consumed no bytes.
    if (terminated_) terminated_ = false;
    bytes_.rollback(token_lengths_.back());
    if (unique_) unique_->rollback(token_lengths_.back());
    token_lengths_.pop_back();
  }
}

void TokenMatcher::fill_next_token_mask(std::span<uint32_t> words) {
  AFM_CHECK(words.size() == vocabulary_->mask_words());
  if (terminated_) {
    std::fill(words.begin(), words.end(), 0u);
    return;
  }
  if (!masks_->fill(bytes_, words)) {  // a walk too large for the cache: exact, just slower
    std::fill(words.begin(), words.end(), 0u);
    walk_trie(words);
  }
  apply_unique_items(words);
  const auto eos = vocabulary_->eos_id();
  if (eos && bytes_.is_complete()) set_bit(words, *eos);
}

void TokenMatcher::fill_next_token_mask_reference(std::span<uint32_t> words) {
  AFM_CHECK(words.size() == vocabulary_->mask_words());
  std::fill(words.begin(), words.end(), 0u);
  if (terminated_) return;
  walk_trie(words);
  apply_unique_items(words);
  const auto eos = vocabulary_->eos_id();
  if (eos && bytes_.is_complete()) set_bit(words, *eos);
}

void TokenMatcher::apply_unique_items(std::span<uint32_t> words) {
  if (unique_) unique_->filter_mask(bytes_, *vocabulary_, words);
}

std::vector<uint32_t> TokenMatcher::next_token_mask() {
  std::vector<uint32_t> words(vocabulary_->mask_words());
  fill_next_token_mask(words);
  return words;
}

// Preorder walk: before visiting node i at depth d the matcher is rolled back to depth d - 1
// (the parent's state); allowed[d - 1] caches the parent's allowed bytes so rejected children
// cost one bit test instead of a pass over the Earley set.
void TokenMatcher::walk_trie(std::span<uint32_t> words) {
  const auto nodes = vocabulary_->nodes();
  const auto ids = vocabulary_->token_ids();
  const size_t base = bytes_.consumed();
  std::vector<ByteSet> allowed{bytes_.allowed_next_bytes()};
  size_t i = 0;
  while (i < nodes.size()) {
    const TokenVocabulary::Node& node = nodes[i];
    const size_t depth = node.depth;
    bytes_.rollback(bytes_.consumed() - (base + depth - 1));
    allowed.resize(depth);
    if (!allowed[depth - 1].test(node.byte) || !bytes_.accept_byte(node.byte)) {
      i = node.subtree_end;
      continue;
    }
    for (uint32_t k = 0; k < node.num_tokens; ++k) set_bit(words, ids[node.first_token + k]);
    if (node.subtree_end > i + 1) allowed.push_back(bytes_.allowed_next_bytes());
    ++i;
  }
  bytes_.rollback(bytes_.consumed() - base);
}

std::string TokenMatcher::forced_bytes(size_t max_bytes) {
  std::string forced;
  while (forced.size() < max_bytes && !bytes_.is_complete()) {
    const ByteSet allowed = bytes_.allowed_next_bytes();
    if (allowed.count() != 1) break;
    int b = 0;
    while (!allowed.test(static_cast<uint8_t>(b))) ++b;
    if (!bytes_.accept_byte(static_cast<uint8_t>(b))) break;
    forced.push_back(static_cast<char>(b));
  }
  bytes_.rollback(forced.size());
  return forced;
}

}  // namespace afm::guided
