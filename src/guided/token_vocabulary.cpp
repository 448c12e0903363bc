// Token trie construction; see token_vocabulary.h.
#include "guided/token_vocabulary.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string_view>
#include <utility>

#include "base/error.h"

namespace afm::guided {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes, std::vector<bool> special,
                                 std::optional<int32_t> eos_id)
    : bytes_(std::move(token_bytes)), special_(std::move(special)), eos_id_(eos_id) {
  if (special_.size() != bytes_.size()) {
    throw_error(ErrorCode::kInvalidArgument, "token vocabulary: " + std::to_string(bytes_.size()) +
                                                 " tokens but " + std::to_string(special_.size()) +
                                                 " flags");
  }
  if (eos_id_ && (*eos_id_ < 0 || *eos_id_ >= size())) {
    throw_error(ErrorCode::kInvalidArgument,
                "token vocabulary: eos id " + std::to_string(*eos_id_) + " is out of range");
  }
  build_trie();
  for (int32_t id = 0; id < size(); ++id) {
    if (!is_grammar_token(id)) continue;
    const std::string& text = bytes_[static_cast<size_t>(id)];
    if (text.find_first_of(",[]") == std::string::npos) continue;
    array_syntax_.push_back(id);
    const size_t quote = text.find('"');
    if (quote != std::string::npos && text.find_first_of(",[]", quote) != std::string::npos) {
      quote_then_array_syntax_.push_back(id);
    }
  }
}

// Sorting the grammar tokens by their bytes turns trie construction into one pass: a string
// shares its first lcp(prev, cur) bytes with the previous one, so only the bytes after that
// prefix open new nodes, and every open node deeper than the prefix is closed first.
void TokenVocabulary::build_trie(std::span<const std::pair<std::string_view, int32_t>> entries,
                                 std::vector<Node>* nodes, std::vector<int32_t>* ids) {
  std::vector<uint32_t> open;  // node index per depth - 1 on the current path
  std::string_view prev;
  for (const auto& [cur, id] : entries) {
    size_t lcp = 0;
    while (lcp < prev.size() && lcp < cur.size() && prev[lcp] == cur[lcp]) ++lcp;
    while (open.size() > lcp) {
      (*nodes)[open.back()].subtree_end = static_cast<uint32_t>(nodes->size());
      open.pop_back();
    }
    for (size_t d = lcp; d < cur.size(); ++d) {
      Node node;
      node.byte = static_cast<uint8_t>(cur[d]);
      node.depth = static_cast<uint32_t>(d + 1);
      node.first_token = static_cast<uint32_t>(ids->size());  // where its subtree's ids start
      open.push_back(static_cast<uint32_t>(nodes->size()));
      nodes->push_back(node);
    }
    Node& last = (*nodes)[open.back()];
    ids->push_back(id);  // equal strings are adjacent, so each node's ids are contiguous
    ++last.num_tokens;
    prev = cur;
  }
  for (uint32_t n : open) (*nodes)[n].subtree_end = static_cast<uint32_t>(nodes->size());
}

void TokenVocabulary::build_trie() {
  std::vector<std::pair<std::string_view, int32_t>> entries;
  for (int32_t id = 0; id < size(); ++id) {
    if (is_grammar_token(id)) entries.emplace_back(token_bytes(id), id);
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  build_trie(entries, &nodes_, &token_ids_);
  // Tokens are appended in preorder, so a root child's subtree owns a contiguous id range.
  for (size_t i = 0; i < nodes_.size(); i = nodes_[i].subtree_end) {
    root_ranges_[nodes_[i].byte] = {nodes_[i].first_token, subtree_first_token(nodes_[i].subtree_end)};
  }
}

bool TokenVocabulary::LoopSpec::counted() const {
  for (uint32_t q = 0; q < num_states; ++q) {
    for (uint8_t v : next[q]) {
      if (counts(v)) return true;
    }
  }
  return false;
}

void TokenVocabulary::LoopIndex::clear_counted_over(uint32_t copies,
                                                    std::span<uint32_t> words) const {
  if (copies < over_masks.size()) {
    const std::vector<uint32_t>& over = over_masks[copies];
    for (size_t w = 0; w < words.size(); ++w) words[w] &= ~over[w];
    return;
  }
  for (const auto& [copy, id] : last_copy) {  // largest first
    if (copy < copies) break;
    words[static_cast<size_t>(id) >> 5] &= ~(uint32_t{1} << (id & 31));
  }
}

size_t TokenVocabulary::LoopSpec::hash() const {
  uint64_t h = 0xcbf29ce484222325ull ^ num_states;
  for (uint32_t q = 0; q < num_states; ++q) {
    for (uint8_t v : next[q]) h = (h ^ v) * 0x100000001b3ull;
  }
  return static_cast<size_t>(h ^ (h >> 32));
}

std::shared_ptr<const TokenVocabulary::LoopIndex> TokenVocabulary::loop_index(
    const LoopSpec& spec) const {
  // Few distinct specs occur (string content, digits, pattern classes). Building one costs a
  // pass over the vocabulary, so past the bound none is built: callers walk the trie instead.
  const size_t hash = spec.hash();
  {
    std::lock_guard<std::mutex> lock(loop_cache_->mutex);
    for (const auto& index : loop_cache_->indexes) {
      if (index->hash == hash && index->spec == spec) return index;
    }
    if (loop_cache_->indexes.size() >= kMaxLoopIndexes) return nullptr;
  }
  std::shared_ptr<const LoopIndex> index = make_loop_index(spec, hash);
  std::lock_guard<std::mutex> lock(loop_cache_->mutex);
  for (const auto& other : loop_cache_->indexes) {  // another thread may have built it
    if (other->hash == hash && other->spec == spec) return other;
  }
  if (loop_cache_->indexes.size() < kMaxLoopIndexes) loop_cache_->indexes.push_back(index);
  return index;
}

size_t TokenVocabulary::num_loop_indexes() const {
  std::lock_guard<std::mutex> lock(loop_cache_->mutex);
  return loop_cache_->indexes.size();
}

size_t TokenVocabulary::loop_index_bytes() const {
  std::lock_guard<std::mutex> lock(loop_cache_->mutex);
  size_t bytes = 0;
  for (const auto& index : loop_cache_->indexes) {
    bytes += sizeof(LoopIndex) + index->all_in_mask.size() * sizeof(uint32_t) +
             index->last_copy.size() * sizeof(index->last_copy[0]);
    for (const auto& over : index->over_masks) bytes += over.size() * sizeof(uint32_t);
    for (size_t q = 0; q < kMaxLoopStates; ++q) {
      bytes += index->rest_nodes[q].size() * sizeof(Node) +
               index->rest_ids[q].size() * sizeof(int32_t);
    }
  }
  return bytes;
}

std::shared_ptr<const TokenVocabulary::LoopIndex> TokenVocabulary::make_loop_index(
    const LoopSpec& spec, size_t hash) const {
  auto index = std::make_shared<LoopIndex>();
  index->spec = spec;
  index->hash = hash;
  index->all_in_mask.assign(mask_words(), 0u);
  std::array<std::vector<std::pair<std::string_view, int32_t>>, kMaxLoopStates> rest;
  const bool counted = spec.counted();
  if (counted) index->over_masks.assign(kOverMasks, std::vector<uint32_t>(mask_words(), 0u));
  // token_ids_ is sorted by bytes, so each rest list comes out sorted as well.
  for (int32_t id : token_ids_) {
    const std::string_view t = token_bytes(id);
    uint32_t q = 0;
    uint32_t copy = 0;            // kCount transitions taken so far
    uint32_t last_loop_copy = 0;  // the copy of the last loop byte read
    size_t p = 0;
    for (; p < t.size(); ++p) {
      const uint8_t n = spec.next[q][static_cast<uint8_t>(t[p])];
      if (n == LoopSpec::kOut) break;
      last_loop_copy = copy;
      if (LoopSpec::counts(n)) ++copy;
      q = LoopSpec::target(n);
    }
    if (p == 0) continue;  // first byte out: not indexed
    if (p == t.size()) {
      index->all_in_mask[static_cast<size_t>(id) >> 5] |= uint32_t{1} << (id & 31);
    } else {
      rest[q].emplace_back(t.substr(p), id);
    }
    if (!counted) continue;
    index->max_copy = std::max(index->max_copy, p == t.size() ? last_loop_copy : copy);
    if (last_loop_copy > 0) index->last_copy.emplace_back(last_loop_copy, id);
    for (uint32_t k = 0; k <= last_loop_copy && k < kOverMasks; ++k) {
      index->over_masks[k][static_cast<size_t>(id) >> 5] |= uint32_t{1} << (id & 31);
    }
  }
  std::sort(index->last_copy.begin(), index->last_copy.end(), std::greater<>());
  for (size_t q = 0; q < spec.num_states; ++q) {
    std::stable_sort(rest[q].begin(), rest[q].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    build_trie(rest[q], &index->rest_nodes[q], &index->rest_ids[q]);
  }
  return index;
}

}  // namespace afm::guided
