// Token masks over memoised parse states; see mask_cache.h for the design.
#include "guided/mask_cache.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "base/error.h"

namespace afm::guided {

namespace {

// Thrown inside one fill() when its generation cannot take another state.
struct GenerationFull {};

using LoopSpec = TokenVocabulary::LoopSpec;

}  // namespace

size_t MaskCache::KeyHash::operator()(const std::vector<uint32_t>& key) const {
  uint64_t h = 0xcbf29ce484222325ull ^ key.size();
  for (uint32_t v : key) h = (h ^ v) * 0x100000001b3ull;
  return static_cast<size_t>(h ^ (h >> 32));
}

MaskCache::Table::Table(size_t hard_max)
    : chunks((hard_max >> kChunkBits) + 1), hard_max_states(hard_max) {}

MaskCache::MaskCache(const Grammar& grammar, const TokenVocabulary& vocabulary, Limits limits)
    : grammar_(grammar),
      vocabulary_(vocabulary),
      limits_(limits),
      table_(std::make_shared<Table>(limits.max_states * kHardFactor)) {}

std::shared_ptr<MaskCache::Table> MaskCache::table() {
  std::lock_guard<std::mutex> lock(table_mutex_);
  if (table_->num_states.load() >= limits_.max_states ||
      table_->mask_bytes.load() >= limits_.max_mask_bytes) {
    table_ = std::make_shared<Table>(limits_.max_states * kHardFactor);
    ++generations_;
  }
  return table_;
}

size_t MaskCache::num_states() const {
  std::lock_guard<std::mutex> lock(table_mutex_);
  return table_->num_states.load();
}

size_t MaskCache::num_generations() const {
  std::lock_guard<std::mutex> lock(table_mutex_);
  return generations_;
}

int32_t MaskCache::intern(Table& t, const ByteMatcher& matcher, std::vector<uint32_t>* key) {
  matcher.state_key(key);
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ids.find(*key);
  if (it != t.ids.end()) return it->second;
  const size_t id = t.num_states.load(std::memory_order_relaxed);
  if (id >= t.hard_max_states) return kReject;
  std::unique_ptr<State[]>& chunk = t.chunks[id >> kChunkBits];
  if (!chunk) chunk = std::make_unique<State[]>(size_t{1} << kChunkBits);
  t.ids.emplace(*key, static_cast<int32_t>(id));
  t.num_states.store(id + 1);
  return static_cast<int32_t>(id);
}

void MaskCache::store_mask(Table& t, State& state, std::span<const uint32_t> words) {
  std::lock_guard<std::mutex> lock(t.mutex);
  // A generation in flight past its bound stops storing masks (memory stays bounded).
  if (state.mask.load(std::memory_order_relaxed) != nullptr ||
      t.mask_bytes.load() >= limits_.max_mask_bytes * 2) {
    return;
  }
  auto owned = std::make_unique<uint32_t[]>(words.size());
  std::memcpy(owned.get(), words.data(), words.size() * sizeof(uint32_t));
  state.mask.store(owned.get(), std::memory_order_release);
  t.masks.push_back(std::move(owned));
  t.mask_bytes.fetch_add(words.size() * sizeof(uint32_t));
}

// One mask computation. The ByteMatcher is at `base_` bytes; `path_` holds the bytes from
// there to the trie node being visited, and `live_` the bytes actually accepted on top of
// `base_`. A state's chart is needed only to build its successor row (a miss), and is then
// obtained by rolling the matcher back to the common prefix of live_ and path_ and replaying.
class MaskCache::Walk {
 public:
  Walk(Table& table, ByteMatcher& matcher, std::span<uint32_t> words, std::vector<uint32_t>* key)
      : t_(table), m_(matcher), words_(words), key_(key), base_(matcher.consumed()) {}
  ~Walk() { m_.rollback(m_.consumed() - base_); }

  // Successor row of state `s`, whose chart is reached by the first `depth` bytes of path_.
  const std::array<int32_t, 256>& row(int32_t s, size_t depth) {
    State& state = t_.state(s);
    if (!state.has_row.load(std::memory_order_acquire)) build_row(state, depth);
    return state.next;
  }

  // Walks a preorder trie from state `start`, which path_[0, offset) leads to, setting the
  // bits of the tokens it accepts. Root children whose byte is in `skip_root` are skipped.
  void walk(std::span<const TokenVocabulary::Node> nodes, std::span<const int32_t> ids,
            size_t offset, int32_t start, const ByteSet& skip_root) {
    stack_.assign(1, start);
    size_t i = 0;
    while (i < nodes.size()) {
      const TokenVocabulary::Node& node = nodes[i];
      const size_t d = node.depth;
      if (d == 1 && skip_root.test(node.byte)) {
        i = node.subtree_end;
        continue;
      }
      if (path_.size() < offset + d) path_.resize(offset + d);
      path_[offset + d - 1] = static_cast<char>(node.byte);
      const int32_t next = row(stack_[d - 1], offset + d - 1)[node.byte];
      if (next == kReject) {
        i = node.subtree_end;
        continue;
      }
      for (uint32_t k = 0; k < node.num_tokens; ++k) {
        const int32_t id = ids[node.first_token + k];
        words_[static_cast<size_t>(id) >> 5] |= uint32_t{1} << (id & 31);
      }
      if (stack_.size() <= d) stack_.resize(d + 1);
      stack_[d] = next;
      ++i;
    }
  }

  std::string path_;

 private:
  void build_row(State& state, size_t depth) {
    size_t common = 0;
    while (common < live_.size() && common < depth && live_[common] == path_[common]) ++common;
    m_.rollback(live_.size() - common);
    live_.resize(common);
    for (size_t i = common; i < depth; ++i) {
      AFM_CHECK(m_.accept_byte(static_cast<uint8_t>(path_[i])));  // the walk accepted it before
      live_.push_back(path_[i]);
    }
    std::array<int32_t, 256> next;
    next.fill(kReject);
    for (const ByteSet& group : m_.byte_classes()) {
      int b = 0;
      while (!group.test(static_cast<uint8_t>(b))) ++b;
      AFM_CHECK(m_.accept_byte(static_cast<uint8_t>(b)));
      const int32_t t = intern(t_, m_, key_);
      m_.rollback(1);
      if (t == kReject) throw GenerationFull{};
      for (int x = b; x < 256; ++x) {
        if (group.test(static_cast<uint8_t>(x))) next[static_cast<size_t>(x)] = t;
      }
    }
    std::lock_guard<std::mutex> lock(t_.mutex);
    if (state.has_row.load(std::memory_order_relaxed)) return;  // another thread was first
    state.next = next;
    state.has_row.store(true, std::memory_order_release);
  }

  Table& t_;
  ByteMatcher& m_;
  std::span<uint32_t> words_;
  std::vector<uint32_t>* key_;
  size_t base_;
  std::string live_;
  std::vector<int32_t> stack_;  // state per trie depth on the current path
};

// A loop found around the start state: the spec the vocabulary indexes, and per loop state
// its id and the bytes that lead to it from the start state.
struct MaskCache::Loop {
  LoopSpec spec;
  std::array<int32_t, TokenVocabulary::kMaxLoopStates> states{};
  std::array<std::string, TokenVocabulary::kMaxLoopStates> paths;
};

// Explores the states near `s` breadth-first (only "wide" ones, which allow many bytes, are
// expanded) and takes s plus every explored state on a cycle as the loop. Any choice is
// correct (loop tokens are exactly those whose path through the rows never leaves the set);
// this one captures string content, UTF-8 continuation states and digit runs.
bool MaskCache::find_loop(Walk& walk, int32_t s, const std::array<int32_t, 256>& row, Loop* loop) {
  std::vector<int32_t> seen{s};
  std::vector<std::string> paths{std::string()};
  std::vector<const std::array<int32_t, 256>*> rows{&row};
  for (size_t i = 0; i < seen.size(); ++i) {
    if (i > 0) {
      walk.path_ = paths[i];
      const std::array<int32_t, 256>& r = walk.row(seen[i], paths[i].size());
      const int wide = static_cast<int>(256 - std::count(r.begin(), r.end(), kReject));
      rows.push_back(wide >= kMinWideBytes ? &r : nullptr);
    }
    if (rows[i] == nullptr) continue;
    for (int b = 0; b < 256 && seen.size() < kMaxExplore; ++b) {
      const int32_t t = (*rows[i])[static_cast<size_t>(b)];
      if (t == kReject || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
      seen.push_back(t);
      paths.push_back(paths[i] + static_cast<char>(b));
    }
  }
  // reach[i]: explored states reachable from i in one or more steps (transitive closure).
  const size_t n = seen.size();
  std::vector<uint32_t> reach(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (rows[i] == nullptr) continue;
    for (size_t j = 0; j < n; ++j) {
      if (std::find(rows[i]->begin(), rows[i]->end(), seen[j]) != rows[i]->end()) {
        reach[i] |= 1u << j;
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    for (size_t i = 0; i < n; ++i) {
      if ((reach[i] >> k) & 1) reach[i] |= reach[k];
    }
  }
  std::vector<size_t> members{0};
  for (size_t i = 1; i < n && members.size() < TokenVocabulary::kMaxLoopStates; ++i) {
    if (rows[i] != nullptr && ((reach[i] >> i) & 1)) members.push_back(i);
  }
  std::vector<const std::array<int32_t, 256>*> member_rows;
  std::vector<int32_t> member_ids;
  for (size_t i : members) {
    member_rows.push_back(rows[i]);
    member_ids.push_back(seen[i]);
  }
  canonical_loop(member_ids, member_rows, loop);
  for (uint32_t q = 0; q < loop->spec.num_states; ++q) {
    const size_t i = static_cast<size_t>(std::find(seen.begin(), seen.end(), loop->states[q]) -
                                         seen.begin());
    loop->paths[q] = paths[i];
  }
  int internal = 0;
  for (int b = 0; b < 256; ++b) internal += loop->spec.next[0][static_cast<size_t>(b)] != LoopSpec::kOut;
  return internal >= kMinLoopBytes;
}

// The loop's spec in a canonical form, so that the same loop met in another context (another
// schema, another position in the same string) finds the index already built:
//  - equivalent members merge: two members are equivalent when every byte takes them to the
//    same real state outside the loop (or both reject it) or to equivalent members (the
//    coarsest such partition, by refinement). Entering a repetition and being inside it are
//    different Earley states with the same future, for example;
//  - classes are numbered in breadth-first order from member 0's class over in-loop bytes,
//    and classes not reachable that way are dropped (no token can enter them from the start).
// Equivalent members accept exactly the same byte strings, so any one represents its class.
void MaskCache::canonical_loop(const std::vector<int32_t>& ids,
                               const std::vector<const std::array<int32_t, 256>*>& rows,
                               Loop* loop) {
  const size_t m = ids.size();
  auto member_of = [&](int32_t state) -> int {
    for (size_t k = 0; k < m; ++k) {
      if (ids[k] == state) return static_cast<int>(k);
    }
    return -1;
  };
  // target[k][b]: member index, or -2 - (out target id) for outside targets (kReject included).
  std::vector<std::array<int64_t, 256>> target(m);
  for (size_t k = 0; k < m; ++k) {
    for (size_t b = 0; b < 256; ++b) {
      const int32_t t = (*rows[k])[b];
      const int member = member_of(t);
      target[k][b] = member >= 0 ? member : -2 - static_cast<int64_t>(t);
    }
  }
  std::vector<uint32_t> cls(m, 0);
  for (size_t round = 0; round < m; ++round) {  // refine until stable (at most m rounds)
    std::vector<std::vector<int64_t>> signatures;
    std::vector<uint32_t> next(m);
    for (size_t k = 0; k < m; ++k) {
      std::vector<int64_t> sig{cls[k]};
      for (size_t b = 0; b < 256; ++b) {
        sig.push_back(target[k][b] >= 0 ? cls[static_cast<size_t>(target[k][b])] : target[k][b]);
      }
      auto it = std::find(signatures.begin(), signatures.end(), sig);
      next[k] = static_cast<uint32_t>(it - signatures.begin());
      if (it == signatures.end()) signatures.push_back(std::move(sig));
    }
    const bool stable = next == cls || std::set<uint32_t>(next.begin(), next.end()).size() ==
                                           std::set<uint32_t>(cls.begin(), cls.end()).size();
    cls = std::move(next);
    if (stable) break;
  }
  // Breadth-first numbering of the classes from member 0's.
  std::vector<int> number(m, -1);  // per class id
  std::vector<size_t> order{0};    // a representative member per canonical number
  number[cls[0]] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (size_t b = 0; b < 256; ++b) {
      const int64_t t = target[order[i]][b];
      if (t < 0 || number[cls[static_cast<size_t>(t)]] >= 0) continue;
      number[cls[static_cast<size_t>(t)]] = static_cast<int>(order.size());
      order.push_back(static_cast<size_t>(t));
    }
  }
  loop->spec = LoopSpec();
  loop->spec.num_states = static_cast<uint32_t>(order.size());
  for (size_t q = 0; q < order.size(); ++q) {
    loop->states[q] = ids[order[q]];
    for (size_t b = 0; b < 256; ++b) {
      const int64_t t = target[order[q]][b];
      loop->spec.next[q][b] =
          t < 0 ? LoopSpec::kOut : static_cast<uint8_t>(number[cls[static_cast<size_t>(t)]]);
    }
  }
}

bool MaskCache::fill(ByteMatcher& matcher, std::span<uint32_t> words) {
  AFM_CHECK(words.size() == vocabulary_.mask_words());
  AFM_CHECK(&matcher.grammar() == &grammar_);
  thread_local std::vector<uint32_t> key;
  const std::shared_ptr<Table> table = this->table();
  const int32_t s = intern(*table, matcher, &key);
  if (s == kReject) return false;
  State& state = table->state(s);
  if (const uint32_t* mask = state.mask.load(std::memory_order_acquire)) {
    std::memcpy(words.data(), mask, words.size() * sizeof(uint32_t));
    return true;
  }
  std::fill(words.begin(), words.end(), 0u);
  try {
    Walk walk(*table, matcher, words, &key);
    const std::array<int32_t, 256>& row = walk.row(s, 0);
    Loop loop;
    std::shared_ptr<const TokenVocabulary::LoopIndex> index;
    if (find_loop(walk, s, row, &loop)) index = vocabulary_.loop_index(loop.spec);
    // Tokens starting with a loop byte of s come from the index (all-in ones as a bitmask,
    // the others by their remainder from the state they leave from); the rest by the main trie.
    ByteSet in_loop;
    if (index != nullptr) {
      for (int b = 0; b < 256; ++b) {
        if (loop.spec.next[0][static_cast<size_t>(b)] != LoopSpec::kOut) {
          in_loop.set(static_cast<uint8_t>(b));
        }
      }
      for (size_t w = 0; w < words.size(); ++w) words[w] |= index->all_in_mask[w];
      for (uint32_t q = 0; q < loop.spec.num_states; ++q) {
        if (index->rest_nodes[q].empty()) continue;
        walk.path_ = loop.paths[q];
        walk.walk(index->rest_nodes[q], index->rest_ids[q], loop.paths[q].size(), loop.states[q],
                  ByteSet());
      }
    }
    walk.path_.clear();
    walk.walk(vocabulary_.nodes(), vocabulary_.token_ids(), 0, s, in_loop);
  } catch (const GenerationFull&) {
    return false;
  }
  store_mask(*table, state, words);
  return true;
}

// Process-wide caches by (grammar, vocabulary). Entries hold weak references to both, so a
// dead grammar's cache is dropped at the next lookup (an address is only compared while its
// object is alive, so reuse of a freed address cannot alias).
std::shared_ptr<MaskCache> MaskCache::shared(const std::shared_ptr<const Grammar>& grammar,
                                             const std::shared_ptr<const TokenVocabulary>& vocab) {
  struct Entry {
    std::weak_ptr<const Grammar> grammar;
    std::weak_ptr<const TokenVocabulary> vocab;
    std::shared_ptr<MaskCache> cache;
    uint64_t used = 0;
  };
  struct Registry {
    std::mutex mutex;
    std::vector<Entry> entries;
    uint64_t clock = 0;
  };
  static Registry* registry = new Registry;  // never destroyed: usable during static teardown
  AFM_CHECK(grammar != nullptr && vocab != nullptr);
  std::lock_guard<std::mutex> lock(registry->mutex);
  auto& entries = registry->entries;
  std::erase_if(entries, [](const Entry& e) { return e.grammar.expired() || e.vocab.expired(); });
  for (Entry& e : entries) {
    if (e.grammar.lock() == grammar && e.vocab.lock() == vocab) {
      e.used = ++registry->clock;
      return e.cache;
    }
  }
  if (entries.size() >= kMaxShared) {
    entries.erase(std::min_element(entries.begin(), entries.end(),
                                   [](const auto& a, const auto& b) { return a.used < b.used; }));
  }
  auto cache = std::make_shared<MaskCache>(*grammar, *vocab);
  entries.push_back({grammar, vocab, cache, ++registry->clock});
  return cache;
}

}  // namespace afm::guided
