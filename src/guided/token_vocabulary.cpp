// Token trie construction; see token_vocabulary.h.
#include "guided/token_vocabulary.h"

#include <algorithm>
#include <numeric>
#include <string_view>

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
}

// Sorting the grammar tokens by their bytes turns trie construction into one pass: a string
// shares its first lcp(prev, cur) bytes with the previous one, so only the bytes after that
// prefix open new nodes, and every open node deeper than the prefix is closed first.
void TokenVocabulary::build_trie() {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < size(); ++id) {
    if (is_grammar_token(id)) ids.push_back(id);
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return token_bytes(a) < token_bytes(b); });
  std::vector<uint32_t> open;  // node index per depth - 1 on the current path
  std::string_view prev;
  for (int32_t id : ids) {
    const std::string_view cur = token_bytes(id);
    size_t lcp = 0;
    while (lcp < prev.size() && lcp < cur.size() && prev[lcp] == cur[lcp]) ++lcp;
    while (open.size() > lcp) {
      nodes_[open.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
      open.pop_back();
    }
    for (size_t d = lcp; d < cur.size(); ++d) {
      Node node;
      node.byte = static_cast<uint8_t>(cur[d]);
      node.depth = static_cast<uint32_t>(d + 1);
      open.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(node);
    }
    Node& last = nodes_[open.back()];
    if (last.num_tokens == 0) last.first_token = static_cast<uint32_t>(token_ids_.size());
    token_ids_.push_back(id);  // equal strings are adjacent, so each node's ids are contiguous
    ++last.num_tokens;
    prev = cur;
  }
  for (uint32_t n : open) nodes_[n].subtree_end = static_cast<uint32_t>(nodes_.size());
}

}  // namespace afm::guided
