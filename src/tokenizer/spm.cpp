#include "tokenizer/spm.h"

#include <cstdio>
#include <queue>

#include "tokenizer/byte_level.h"

namespace afm::tokenizer {

namespace {

struct Symbol {
  uint32_t start;  // byte offset into the text
  uint32_t size;   // 0 once joined into the symbol on its left
  int32_t prev, next;
};

struct Candidate {
  float score;
  int32_t left, right;
  uint32_t size;  // bytes of left + right when pushed; a mismatch later means it is stale
};

// Highest score first; among equal scores the leftmost pair.
struct Lower {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmModel::SpmModel(const VocabSpec& spec) : unk_id_(spec.unk_id) {
  vocab_.reserve(spec.tokens.size());
  for (size_t i = 0; i < spec.tokens.size(); ++i)
    vocab_[spec.tokens[i]] = static_cast<int32_t>(i);  // the later id wins, as in llama.cpp
  scores_.assign(spec.tokens.size(), 0.0f);
  for (size_t i = 0; i < spec.scores.size() && i < scores_.size(); ++i) scores_[i] = spec.scores[i];
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = vocab_.find(std::string_view(name));
    byte_tokens_[b] = it == vocab_.end() ? -1 : it->second;
  }
}

std::optional<int32_t> SpmModel::token_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void SpmModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<Symbol> symbols;
  for (size_t i = 0; i < text.size();) {
    size_t n = std::min(utf8_sequence_length(static_cast<uint8_t>(text[i])), text.size() - i);
    int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(n), index - 1,
                       i + n == text.size() ? -1 : index + 1});
    i += n;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, Lower> queue;
  auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    uint32_t size = l.size + symbols[static_cast<size_t>(right)].size;
    auto it = vocab_.find(text.substr(l.start, size));  // right follows left in the text
    if (it == vocab_.end()) return;
    queue.push({scores_[static_cast<size_t>(it->second)], left, right, size});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(c.left)];
    Symbol& r = symbols[static_cast<size_t>(c.right)];
    // Symbols only grow, so an unchanged total size means neither side has changed.
    if (l.size == 0 || r.size == 0 || l.size + r.size != c.size) continue;
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = c.left;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }

  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    std::string_view piece = text.substr(s.start, s.size);
    auto it = vocab_.find(piece);
    if (it != vocab_.end()) {
      out.push_back(it->second);
      continue;
    }
    for (char ch : piece) {  // a character that is no token: its bytes
      int32_t id = byte_tokens_[static_cast<uint8_t>(ch)];
      if (id >= 0)
        out.push_back(id);
      else if (unk_id_)
        out.push_back(*unk_id_);
    }
  }
}

}  // namespace afm::tokenizer
