#include "tokenizer/bpe_merger.h"

#include <algorithm>
#include <cstdint>

#include "base/error.h"

namespace afm::tokenizer {

namespace {

constexpr uint64_t kEmptyKey = ~uint64_t{0};  // no pair has it: ids are below 2^31

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}
int32_t left_of(uint64_t key) { return static_cast<int32_t>(key >> 32); }
int32_t right_of(uint64_t key) { return static_cast<int32_t>(key & 0xffffffffu); }

uint64_t slot_of(uint64_t key, uint64_t mask) { return (key * 0x9e3779b97f4a7c15ull >> 20) & mask; }

}  // namespace

// std heap functions keep the greatest element first: higher count, then smaller key.
bool BpeMerger::heap_less(const HeapEntry& x, const HeapEntry& y) {
  return x.count != y.count ? x.count < y.count : x.key > y.key;
}

BpeMerger::BpeMerger(std::vector<std::string> tokens, const int32_t (&byte_ids)[256],
                     std::span<const WordCount> words)
    : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i)
    token_ids_.emplace(tokens_[i], static_cast<int32_t>(i));
  uint64_t total_symbols = 0;
  for (const WordCount& w : words) total_symbols += w.word.size();
  symbols_.reserve(total_symbols);
  word_begin_.reserve(words.size());
  word_size_.reserve(words.size());
  word_count_.reserve(words.size());
  for (const WordCount& w : words) {
    AFM_CHECK(w.word.size() <= UINT32_MAX);
    word_begin_.push_back(symbols_.size());
    word_size_.push_back(static_cast<uint32_t>(w.word.size()));
    word_count_.push_back(static_cast<int64_t>(w.count));
    for (char c : w.word) symbols_.push_back(byte_ids[static_cast<uint8_t>(c)]);
  }
  word_seen_.assign(words.size(), 0);
  table_keys_.assign(size_t{1} << 16, kEmptyKey);
  table_values_.assign(size_t{1} << 16, 0);
  table_mask_ = (size_t{1} << 16) - 1;
  for (uint32_t w = 0; w < word_size_.size(); ++w) add_word_pairs(w);
  for (uint32_t p = 0; p < pair_key_.size(); ++p) {
    if (pair_count_[p] > 0) heap_.push_back({pair_count_[p], pair_key_[p]});
  }
  std::make_heap(heap_.begin(), heap_.end(), heap_less);
}

uint32_t BpeMerger::pair_index(uint64_t key) {
  for (uint64_t i = slot_of(key, table_mask_);; i = (i + 1) & table_mask_) {
    if (table_keys_[i] == key) return table_values_[i];
    if (table_keys_[i] != kEmptyKey) continue;
    auto index = static_cast<uint32_t>(pair_key_.size());
    table_keys_[i] = key;
    table_values_[i] = index;
    pair_key_.push_back(key);
    pair_count_.push_back(0);
    pair_words_.emplace_back();
    pair_grown_.push_back(0);
    if (pair_key_.size() * 2 > table_keys_.size()) grow_pair_table();
    return index;
  }
}

void BpeMerger::grow_pair_table() {
  size_t capacity = table_keys_.size() * 2;
  table_keys_.assign(capacity, kEmptyKey);
  table_values_.assign(capacity, 0);
  table_mask_ = capacity - 1;
  for (uint32_t p = 0; p < pair_key_.size(); ++p) {
    uint64_t i = slot_of(pair_key_[p], table_mask_);
    while (table_keys_[i] != kEmptyKey) i = (i + 1) & table_mask_;
    table_keys_[i] = pair_key_[p];
    table_values_[i] = p;
  }
}

void BpeMerger::add_word_pairs(uint32_t word) {
  const int32_t* s = symbols_.data() + word_begin_[word];
  for (uint32_t i = 0; i + 1 < word_size_[word]; ++i) {
    uint32_t p = pair_index(pair_key(s[i], s[i + 1]));
    pair_count_[p] += word_count_[word];
    std::vector<uint32_t>& where = pair_words_[p];
    if (where.empty() || where.back() != word) where.push_back(word);
  }
}

// Adds `delta` occurrences (already weighted) of (left, right); a pair that grows remembers
// the word and gets a fresh heap entry once the current merge is done.
void BpeMerger::change(int32_t left, int32_t right, int64_t delta, uint32_t word) {
  uint32_t p = pair_index(pair_key(left, right));
  pair_count_[p] += delta;
  if (delta <= 0) return;
  std::vector<uint32_t>& where = pair_words_[p];
  if (where.empty() || where.back() != word) where.push_back(word);
  if (pair_grown_[p] != merge_number_) {
    pair_grown_[p] = merge_number_;
    grown_.push_back(p);
  }
}

void BpeMerger::merge_in_word(uint32_t word, int32_t left, int32_t right, int32_t merged) {
  int32_t* s = symbols_.data() + word_begin_[word];
  const uint32_t n = word_size_[word];
  const int64_t c = word_count_[word];
  uint32_t out = 0;
  for (uint32_t i = 0; i < n;) {
    if (i + 1 < n && s[i] == left && s[i + 1] == right) {
      if (out > 0) {  // the symbol before may itself be a fresh `merged` (pairs in a row)
        change(s[out - 1], left, -c, word);
        change(s[out - 1], merged, c, word);
      }
      if (i + 2 < n) {
        change(right, s[i + 2], -c, word);
        change(merged, s[i + 2], c, word);
      }
      s[out++] = merged;
      i += 2;
    } else {
      s[out++] = s[i++];
    }
  }
  word_size_[word] = out;
}

void BpeMerger::push(uint32_t pair) {
  heap_.push_back({pair_count_[pair], pair_key_[pair]});
  std::push_heap(heap_.begin(), heap_.end(), heap_less);
}

void BpeMerger::merge_pair(uint32_t pair, int32_t left, int32_t right, int32_t merged) {
  ++merge_number_;
  std::vector<uint32_t> where = std::move(pair_words_[pair]);
  pair_words_[pair] = {};
  for (uint32_t w : where) {
    if (word_seen_[w] == merge_number_) continue;
    word_seen_[w] = merge_number_;
    merge_in_word(w, left, right, merged);
  }
  pair_count_[pair] = 0;  // every occurrence is gone (changes above may have touched it)
  for (uint32_t p : grown_) {
    if (pair_count_[p] > 0) push(p);
  }
  grown_.clear();
}

int32_t BpeMerger::token_for(int32_t left, int32_t right) {
  std::string text = tokens_[static_cast<size_t>(left)] + tokens_[static_cast<size_t>(right)];
  auto [it, inserted] = token_ids_.emplace(text, static_cast<int32_t>(tokens_.size()));
  if (inserted) tokens_.push_back(std::move(text));
  return it->second;
}

void BpeMerger::run(int64_t vocab_size, int64_t min_frequency,
                    const std::function<void(uint64_t, uint64_t)>& progress) {
  const size_t start = tokens_.size();
  const uint64_t wanted = vocab_size > static_cast<int64_t>(start) ? vocab_size - start : 0;
  min_frequency = std::max<int64_t>(min_frequency, 1);
  while (static_cast<int64_t>(tokens_.size()) < vocab_size && !heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), heap_less);
    HeapEntry top = heap_.back();
    heap_.pop_back();
    uint32_t p = pair_index(top.key);
    if (pair_count_[p] != top.count) {  // stale: queue it again with its current count
      if (pair_count_[p] > 0) push(p);
      continue;
    }
    if (top.count < min_frequency) break;
    const int32_t left = left_of(top.key), right = right_of(top.key);
    const int32_t merged = token_for(left, right);
    merges_.emplace_back(left, right);
    merge_pair(p, left, right, merged);
    if (progress) progress(tokens_.size() - start, wanted);
  }
}

}  // namespace afm::tokenizer
