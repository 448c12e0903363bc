// The merge loop of BPE training (bpe_trainer.h describes the algorithm and the tie-break).
//
// Words are stored as runs of token ids in one flat array; for every pair the merger keeps its
// weighted count and the words it has occurred in (a superset: stale entries are skipped).
// A max-heap holds (count, pair) entries that may be stale: a popped entry whose count is no
// longer the pair's count is pushed back with the current one, so the pair popped with a
// current count is always the true maximum. Each merge touches only the words that hold the
// pair. Not thread-safe; one merger per training run.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/word_counter.h"

namespace afm::tokenizer {

class BpeMerger {
 public:
  // `tokens`: the starting vocabulary by id (specials, then byte symbols); `byte_ids[b]`: the
  // id of byte b's symbol. Every word is turned into its byte ids.
  BpeMerger(std::vector<std::string> tokens, const int32_t (&byte_ids)[256],
            std::span<const WordCount> words);

  // Merges until the vocabulary has `vocab_size` tokens or the best pair occurs fewer than
  // `min_frequency` times; progress(tokens added, tokens wanted) after each merge.
  void run(int64_t vocab_size, int64_t min_frequency,
           const std::function<void(uint64_t, uint64_t)>& progress);

  const std::vector<std::string>& tokens() const { return tokens_; }
  const std::vector<std::pair<int32_t, int32_t>>& merges() const { return merges_; }

 private:
  struct HeapEntry {
    int64_t count;
    uint64_t key;
  };
  static bool heap_less(const HeapEntry& x, const HeapEntry& y);

  uint32_t pair_index(uint64_t key);  // inserts an empty pair when absent
  void grow_pair_table();
  void add_word_pairs(uint32_t word);
  void change(int32_t left, int32_t right, int64_t delta, uint32_t word);
  void merge_pair(uint32_t pair, int32_t left, int32_t right, int32_t merged);
  void merge_in_word(uint32_t word, int32_t left, int32_t right, int32_t merged);
  void push(uint32_t pair);
  int32_t token_for(int32_t left, int32_t right);

  // Vocabulary.
  std::vector<std::string> tokens_;
  std::vector<std::pair<int32_t, int32_t>> merges_;
  std::unordered_map<std::string, int32_t> token_ids_;

  // Words: symbols of word w are symbols_[word_begin_[w] .. + word_size_[w]).
  std::vector<int32_t> symbols_;
  std::vector<uint64_t> word_begin_;
  std::vector<uint32_t> word_size_;
  std::vector<int64_t> word_count_;
  std::vector<uint32_t> word_seen_;  // merge number that last visited the word

  // Pairs, by dense index; table_ maps pair keys (left << 32 | right) to indices.
  std::vector<uint64_t> pair_key_;
  std::vector<int64_t> pair_count_;
  std::vector<std::vector<uint32_t>> pair_words_;
  std::vector<uint32_t> pair_grown_;  // merge number in which the pair's count last grew
  std::vector<uint64_t> table_keys_;
  std::vector<uint32_t> table_values_;
  uint64_t table_mask_ = 0;

  std::vector<HeapEntry> heap_;
  std::vector<uint32_t> grown_;  // pairs whose count grew in the current merge
  uint32_t merge_number_ = 0;
};

}  // namespace afm::tokenizer
