// Token masks over memoised parse states; see mask_cache.h for the design.
#include "guided/mask_cache.h"

#include <algorithm>
#include <cstring>
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

size_t MaskCache::memory_bytes() const {
  std::lock_guard<std::mutex> lock(table_mutex_);
  return table_->mask_bytes.load() + table_->other_bytes.load() +
         table_->chunks.size() * sizeof(table_->chunks[0]);
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
  if (!chunk) {
    chunk = std::make_unique<State[]>(size_t{1} << kChunkBits);
    t.other_bytes.fetch_add(sizeof(State) << kChunkBits);
  }
  t.ids.emplace(*key, static_cast<int32_t>(id));
  // The key's words plus a hash node (the key vector, the id, the next pointer and the hash).
  t.other_bytes.fetch_add(key->size() * sizeof(uint32_t) + sizeof(*key) + 3 * sizeof(void*));
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
// `base_`. A state's chart is needed only to find its classes or a successor (a miss), and is
// then obtained by rolling the matcher back to the common prefix of live_ and path_ and
// replaying.
class MaskCache::Walk {
 public:
  Walk(Table& table, ByteMatcher& matcher, std::span<uint32_t> words, std::vector<uint32_t>* key)
      : t_(table), m_(matcher), words_(words), key_(key), base_(matcher.consumed()) {}
  ~Walk() { m_.rollback(m_.consumed() - base_); }

  // The successor of state `s` on `byte` (or kReject); s's chart is reached by the first `depth`
  // bytes of path_.
  int32_t successor(int32_t s, uint8_t byte, size_t depth) {
    State& state = classes(s, depth);
    const uint8_t c = state.class_of[byte];
    const int32_t t = state.next[c].load(std::memory_order_acquire);
    return t != kUnknown ? t : build_successor(state, c, depth);
  }

  // The whole successor row of `s` (reached by `path`), or null when s allows fewer than
  // `min_allowed` bytes (then no successor is computed). For the loop finder: the row stays
  // valid until the Walk ends.
  const StateRow* full_row(int32_t s, const std::string& path, int min_allowed) {
    path_ = path;
    State& state = classes(s, path.size());
    if (state.num_allowed < min_allowed) return nullptr;
    if (rows_used_ == row_pool().size()) row_pool().push_back(std::make_unique<StateRow>());
    StateRow& row = *row_pool()[rows_used_++];
    fill_row(state, path.size(), &row);
    return &row;
  }

  // The same row, valid only until the next call (the counted-loop check reads one row at a
  // time, hundreds of them: they are not kept).
  const StateRow* transient_row(int32_t s, const std::string& path, int min_allowed) {
    path_ = path;
    State& state = classes(s, path.size());
    if (state.num_allowed < min_allowed) return nullptr;
    fill_row(state, path.size(), &transient_row_);
    return &transient_row_;
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
      const int32_t next = successor(stack_[d - 1], node.byte, offset + d - 1);
      if (next == kReject) {
        i = node.subtree_end;
        continue;
      }
      set_range(ids, node.first_token, node.first_token + node.num_tokens, true);
      if (stack_.size() <= d) stack_.resize(d + 1);
      stack_[d] = next;
      ++i;
    }
  }

  // Sets the index's answers: the tokens that never leave the loop, and those whose remainder
  // is accepted from the loop state (states[q], reached by paths[q]) they leave from.
  void add_index_answers(const TokenVocabulary::LoopIndex& index,
                         std::span<const int32_t, TokenVocabulary::kMaxLoopStates> states,
                         std::span<const std::string, TokenVocabulary::kMaxLoopStates> paths) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= index.all_in_mask[w];
    for (uint32_t q = 0; q < index.spec.num_states; ++q) {
      if (index.rest_nodes[q].empty()) continue;
      path_ = paths[q];
      walk(index.rest_nodes[q], index.rest_ids[q], paths[q].size(), states[q], ByteSet());
    }
  }

  // Corrects the index's answers for the tokens under root node `root`, whose byte the loop
  // entry takes but the start state `start` does not take the same way (the first letter of a
  // declared name, where the entry is plain string content). The walk follows the start state
  // and, beside it, the loop state the entry reaches by the same bytes: where the two are the
  // same state the index's answers below are right and the subtree is skipped; where the start
  // state rejects, the subtree is cleared; where the loop is left, the subtree is cleared and
  // walked from the start state alone. The first letter of a key then costs the declared names'
  // prefixes, not the tokens that start with that letter.
  void walk_against_loop(const TokenVocabulary& vocab, size_t root, int32_t start,
                         const FoundLoop& loop) {
    const auto nodes = vocab.nodes();
    const auto ids = vocab.token_ids();
    const size_t end = nodes[root].subtree_end;
    stack_.assign(1, start);
    shadow_.assign(1, 0);  // the entry class
    size_t i = root;
    while (i < end) {
      const TokenVocabulary::Node& node = nodes[i];
      const size_t d = node.depth;
      if (path_.size() < d) path_.resize(d);
      path_[d - 1] = static_cast<char>(node.byte);
      const int32_t next = successor(stack_[d - 1], node.byte, d - 1);
      const uint8_t above = shadow_[d - 1];
      const uint8_t q = above == kOut ? kOut : loop.spec.next[above][node.byte];
      if (q != kOut && next != kReject && same_as_loop_state(next, q, loop, d)) {
        // the same state as the entry's, or one that accepts exactly what it does: answers stand
        i = node.subtree_end;
        continue;
      }
      if (next == kReject) {
        set_range(ids, node.first_token, vocab.subtree_first_token(node.subtree_end), false);
        i = node.subtree_end;
        continue;
      }
      if (q == kOut && above != kOut) {  // the index's answers below are the loop's, not ours
        set_range(ids, node.first_token, vocab.subtree_first_token(node.subtree_end), false);
      }
      set_range(ids, node.first_token, node.first_token + node.num_tokens, true);
      if (stack_.size() <= d) stack_.resize(d + 1);
      if (shadow_.size() <= d) shadow_.resize(d + 1);
      stack_[d] = next;
      shadow_[d] = q;
      ++i;
    }
  }

  std::string path_;

 private:
  // Whether state `x`, reached by path_[0, depth), accepts exactly the byte strings loop class
  // `q` accepts. By identity with the class's representative, or for a state whose allowed
  // bytes all lead to one successor (the middle of a UTF-8 character entered from outside the
  // loop: a key's first character is parsed by other rules than the characters after it, so
  // those states are not the loop's own, though they behave alike) by comparing its bytes with
  // the representative's and its successor, recursively, with the class those bytes lead to.
  // Without it, every token starting with a multi-byte character was walked at a key's start
  // (about 18k trie nodes per key start with Qwen2's vocabulary). Other states would need their
  // whole row to compare, so they compare by identity only (exact either way: false just means
  // the subtree is walked).
  bool same_as_loop_state(int32_t x, uint8_t q, const FoundLoop& loop, size_t depth,
                          int steps_left = kMaxUtf8Continuations + 1) {
    if (x == loop.states[q]) return true;
    for (const auto& [state, cls, same] : equivalent_) {
      if (state == x && cls == q) return same;
    }
    const bool same = steps_left > 0 && single_successor_matches(x, q, loop, depth, steps_left);
    equivalent_.push_back({x, q, same});
    return same;
  }

  bool single_successor_matches(int32_t x, uint8_t q, const FoundLoop& loop, size_t depth,
                                int steps_left) {
    State& sx = classes(x, depth);
    if (sx.num_groups != 1) return false;
    State& sm = t_.state(loop.states[q]);
    if (!sm.has_classes.load(std::memory_order_acquire)) return false;
    uint8_t next_class = kOut;  // the loop class x's bytes lead to from q
    for (size_t b = 0; b < 256; ++b) {
      const int32_t m_next = sm.next[sm.class_of[b]].load(std::memory_order_acquire);
      if (sx.class_of[b] != 0) {  // x rejects b: so must q
        if (m_next != kReject) return false;
        continue;
      }
      const uint8_t qb = loop.spec.next[q][b];
      if (m_next == kReject || m_next == kUnknown || qb == kOut) return false;
      if (next_class != kOut && next_class != qb) return false;
      next_class = qb;
    }
    if (next_class == kOut) return false;
    const uint8_t byte = sx.first_byte[0];
    if (path_.size() <= depth) path_.resize(depth + 1);
    path_[depth] = static_cast<char>(byte);
    const int32_t t = successor(x, byte, depth);
    return same_as_loop_state(t, next_class, loop, depth + 1, steps_left - 1);
  }

  void fill_row(State& state, size_t depth, StateRow* row) {
    std::array<int32_t, 256> of_class;  // successor per class (at most 256 classes)
    of_class.fill(kUnknown);
    for (size_t b = 0; b < 256; ++b) {
      const uint8_t c = state.class_of[b];
      if (of_class[c] == kUnknown) {
        const int32_t t = state.next[c].load(std::memory_order_acquire);
        of_class[c] = t != kUnknown ? t : build_successor(state, c, depth);
      }
      (*row)[b] = of_class[c];
    }
  }

  static constexpr uint8_t kOut = TokenVocabulary::LoopSpec::kOut;
  // same_as_loop_state() follows single-successor states at most this far: the middle of a
  // UTF-8 character is at most three continuation bytes from its end.
  static constexpr int kMaxUtf8Continuations = 3;

  // Full rows handed to the loop finder, reused across fills of this thread.
  static std::vector<std::unique_ptr<StateRow>>& row_pool() {
    thread_local std::vector<std::unique_ptr<StateRow>> pool;
    return pool;
  }

  // Sets (or clears) the bits of the tokens token_ids()[first, last).
  void set_range(std::span<const int32_t> ids, uint32_t first, uint32_t last, bool on) {
    for (uint32_t k = first; k < last; ++k) {
      const auto id = static_cast<size_t>(ids[k]);
      if (on) {
        words_[id >> 5] |= uint32_t{1} << (id & 31);
      } else {
        words_[id >> 5] &= ~(uint32_t{1} << (id & 31));
      }
    }
  }

  // Moves the matcher to path_[0, depth): rolls back to the common prefix with what it holds.
  void replay(size_t depth) {
    size_t common = 0;
    while (common < live_.size() && common < depth && live_[common] == path_[common]) ++common;
    m_.rollback(live_.size() - common);
    live_.resize(common);
    for (size_t i = common; i < depth; ++i) {
      // A path the cached rows lead along that the matcher refuses: the rows of some state on
      // it came from another position with an equal key that continues differently. Give up
      // this fill (the caller walks the trie exactly) rather than trust them.
      if (!m_.accept_byte(static_cast<uint8_t>(path_[i]))) throw GenerationFull{};
      live_.push_back(path_[i]);
    }
  }

  // State `s` with its classes found (reached by path_[0, depth)).
  State& classes(int32_t s, size_t depth) {
    State& state = t_.state(s);
    if (state.has_classes.load(std::memory_order_acquire)) return state;
    replay(depth);
    const std::vector<ByteSet> groups = m_.byte_classes();
    // Classes: the groups by lowest byte, then the rejected bytes (at most 256 in all).
    const size_t num_groups = groups.size();
    std::array<uint8_t, 256> class_of;
    class_of.fill(static_cast<uint8_t>(num_groups));  // rejected, unless a group has the byte
    int num_allowed = 0;
    for (size_t k = 0; k < num_groups; ++k) {
      num_allowed += groups[k].count();
      groups[k].for_each([&](uint8_t b) { class_of[b] = static_cast<uint8_t>(k); });
    }
    const size_t num_classes = num_groups + (num_allowed < 256 ? 1 : 0);
    auto next = std::make_unique<std::atomic<int32_t>[]>(num_classes);
    auto first_byte = std::make_unique<uint8_t[]>(num_classes);
    for (size_t k = 0; k < num_groups; ++k) {
      next[k].store(kUnknown, std::memory_order_relaxed);
      first_byte[k] = static_cast<uint8_t>(groups[k].lowest());
    }
    if (num_classes > num_groups) next[num_groups].store(kReject, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(t_.mutex);
    if (state.has_classes.load(std::memory_order_relaxed)) return state;  // another was first
    state.class_of = class_of;
    state.num_allowed = static_cast<uint16_t>(num_allowed);
    state.num_groups = static_cast<uint16_t>(num_groups);
    state.next = std::move(next);
    state.first_byte = std::move(first_byte);
    t_.other_bytes.fetch_add(num_classes * (sizeof(std::atomic<int32_t>) + 1));
    state.has_classes.store(true, std::memory_order_release);
    return state;
  }

  // Computes, stores and returns the successor of class `c` of `state` (reached by
  // path_[0, depth)): one Earley step on the class's first byte.
  int32_t build_successor(State& state, uint8_t c, size_t depth) {
    replay(depth);
    AFM_CHECK(m_.accept_byte(state.first_byte[c]));
    const int32_t t = intern(t_, m_, key_);
    m_.rollback(1);
    if (t == kReject) throw GenerationFull{};
    state.next[c].store(t, std::memory_order_release);  // racing threads store the same id
    return t;
  }

  Table& t_;
  ByteMatcher& m_;
  std::span<uint32_t> words_;
  std::vector<uint32_t>* key_;
  size_t base_;
  std::string live_;
  std::vector<int32_t> stack_;  // state per trie depth on the current path
  std::vector<uint8_t> shadow_;  // walk_against_loop: the entry's loop state per depth, or kOut
  struct Equivalence {
    int32_t state;
    uint8_t loop_class;
    bool same;
  };
  std::vector<Equivalence> equivalent_;  // same_as_loop_state() answers of this walk
  size_t rows_used_ = 0;         // full_row(): rows of row_pool() handed out by this walk
  StateRow transient_row_;       // transient_row()'s row
};

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
    FoundLoop loop;
    std::shared_ptr<const TokenVocabulary::LoopIndex> index;
    auto row_of = [&walk](int32_t state, const std::string& path, int min_allowed) {
      return walk.full_row(state, path, min_allowed);
    };
    // A state known to start a copy of a counted loop is on no plain loop: skip that search.
    const CountedVerdict known = counted_verdict(*table, s);
    const bool on_loop = known.kind == CountedCopies::kUnknown && find_loop(s, row_of, &loop);
    if (on_loop) index = vocabulary_.loop_index(loop.spec);
    // Tokens starting with an entry byte come from the index (all-in ones as a bitmask, the
    // others by their remainder from the state they leave from); the rest by the main trie.
    ByteSet answered;
    if (!on_loop) answered = answer_counted(*table, walk, s, row_of, known, words);
    if (index != nullptr) {
      answered = loop.entry_bytes;
      walk.add_index_answers(*index, loop.states, loop.paths);
      // Root bytes the entry keeps in the loop but the start state takes elsewhere.
      const auto nodes = vocabulary_.nodes();
      for (size_t i = 0; i < nodes.size(); i = nodes[i].subtree_end) {
        const uint8_t b = nodes[i].byte;
        if (loop.spec.next[0][b] == LoopSpec::kOut || answered.test(b)) continue;
        walk.path_.clear();
        walk.walk_against_loop(vocabulary_, i, s, loop);
        answered.set(b);
      }
    }
    walk.path_.clear();
    walk.walk(vocabulary_.nodes(), vocabulary_.token_ids(), 0, s, answered);
  } catch (const GenerationFull&) {
    return false;
  }
  store_mask(*table, state, words);
  return true;
}

MaskCache::CountedVerdict MaskCache::counted_verdict(Table& t, int32_t s) {
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.counted.find(s);
  return it == t.counted.end() ? CountedVerdict() : it->second;
}

void MaskCache::store_verdicts(Table& t,
                               const std::shared_ptr<const TokenVocabulary::LoopIndex>& index,
                               const CountedCopies& copies, uint32_t enough) {
  std::lock_guard<std::mutex> lock(t.mutex);
  for (size_t k = 0; k < copies.first_states.size(); ++k) {
    const int32_t state = copies.first_states[k];
    if (state == kNoState) continue;
    const auto copy = static_cast<uint32_t>(k);
    CountedVerdict v{index, CountedCopies::kUnknown, 0};
    if (copies.kind == CountedCopies::kEnds && copy < copies.ends_at) {
      v.kind = CountedCopies::kEnds;  // the same bound, fewer copies left
      v.ends_at = copies.ends_at - copy;
    } else if (copies.kind == CountedCopies::kExact && copies.conforming - copy >= enough) {
      v.kind = CountedCopies::kExact;  // still `enough` conforming copies ahead
    }
    if (v.kind == CountedCopies::kUnknown) continue;
    t.counted.emplace(state, v);
    t.other_bytes.fetch_add(sizeof(v) + sizeof(state) + 3 * sizeof(void*));
  }
}

ByteSet MaskCache::answer_counted(Table& t, Walk& walk, int32_t s, const RowLookup& row_of,
                                  CountedVerdict verdict, std::span<uint32_t> words) {
  CountedLoop loop;
  if (!find_counted_loop(s, row_of, &loop)) return {};
  const std::shared_ptr<const TokenVocabulary::LoopIndex> index = vocabulary_.loop_index(loop.spec);
  if (index == nullptr) return {};
  // Copies are checked once per loop: far enough ahead that the next positions find their
  // verdict (each the first state of a copy seen here) instead of checking again.
  const uint32_t enough = index->max_copy + 1;
  if (verdict.index != index) {  // none kept for s, or one for another spec
    auto transient_row_of = [&walk](int32_t state, const std::string& path, int min_allowed) {
      return walk.transient_row(state, path, min_allowed);
    };
    const CountedCopies copies =
        check_counted_copies(loop, transient_row_of, enough, kCheckAhead * enough);
    store_verdicts(t, index, copies, enough);
    verdict = {index, copies.kind, copies.ends_at};
  }
  if (verdict.kind == CountedCopies::kUnknown) return {};
  // A token leaving the loop in a later copy leaves to the same state as from copy 0 (checked).
  walk.add_index_answers(*index, loop.states, loop.paths);
  if (verdict.kind == CountedCopies::kEnds) index->clear_counted_over(verdict.ends_at, words);
  counted_fills_.fetch_add(1, std::memory_order_relaxed);
  return loop.entry_bytes;
}

// Process-wide caches by (grammar, vocabulary). Entries hold weak references to both, so a
// dead grammar's cache is dropped at the next lookup (an address is only compared while its
// object is alive, so reuse of a freed address cannot alias).
namespace {

struct SharedEntry {
  std::weak_ptr<const Grammar> grammar;
  std::weak_ptr<const TokenVocabulary> vocab;
  std::shared_ptr<MaskCache> cache;
  uint64_t used = 0;
};

struct SharedRegistry {
  std::mutex mutex;
  std::vector<SharedEntry> entries;
  uint64_t clock = 0;

  void drop_expired() {
    std::erase_if(entries, [](const SharedEntry& e) {
      return e.grammar.expired() || e.vocab.expired();
    });
  }
};

SharedRegistry& shared_registry() {
  static SharedRegistry* registry = new SharedRegistry;  // never destroyed: usable at teardown
  return *registry;
}

}  // namespace

std::shared_ptr<MaskCache> MaskCache::shared(const std::shared_ptr<const Grammar>& grammar,
                                             const std::shared_ptr<const TokenVocabulary>& vocab) {
  AFM_CHECK(grammar != nullptr && vocab != nullptr);
  SharedRegistry& registry = shared_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.drop_expired();
  auto& entries = registry.entries;
  for (SharedEntry& e : entries) {
    if (e.grammar.lock() == grammar && e.vocab.lock() == vocab) {
      e.used = ++registry.clock;
      return e.cache;
    }
  }
  if (entries.size() >= kMaxShared) {
    entries.erase(std::min_element(entries.begin(), entries.end(),
                                   [](const auto& a, const auto& b) { return a.used < b.used; }));
  }
  auto cache = std::make_shared<MaskCache>(*grammar, *vocab);
  entries.push_back({grammar, vocab, cache, ++registry.clock});
  return cache;
}

MaskCache::SharedStats MaskCache::shared_stats() {
  SharedRegistry& registry = shared_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.drop_expired();
  SharedStats stats;
  for (const SharedEntry& e : registry.entries) {
    ++stats.caches;
    stats.states += e.cache->num_states();
    stats.bytes += e.cache->memory_bytes();
  }
  return stats;
}

}  // namespace afm::guided
