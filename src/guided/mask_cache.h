// Fast token masks: a lazily built automaton over parse states, with memoised masks.
//
// The slow way to compute a mask walks the vocabulary trie and runs one Earley step per trie
// edge. MaskCache runs the same walk over *state ids* instead:
//  - A state is ByteMatcher::state_key(): the part of the Earley chart that decides what is
//    accepted from here on. Equal keys accept equal byte strings, so a state's successor per
//    byte, and its whole token mask, can be memoised and reused at any position.
//  - Successors are computed a byte class at a time, when a walk first needs one:
//    ByteMatcher::byte_classes() groups the allowed bytes that lead to equal states, so a class
//    costs one Earley step, not one per byte, and classes no token steps into cost nothing.
//    After that a trie edge is two array lookups.
//  - Loops (loop_finder.h): nearby states on a cycle form a set S of at most 8 (string
//    content with the middle-of-character states of multi-byte UTF-8, digit runs), in a
//    canonical form, entered at the current state or at the member that agrees with it on
//    most bytes (the first character of a key continues as plain string content). Every token
//    whose bytes never leave S is allowed without looking at it: TokenVocabulary::loop_index()
//    has them as a ready bitmask. Tokens that leave S after one or more bytes are walked from
//    where they leave (their remainders, a small second trie); tokens whose first byte leaves
//    S go through the main trie; tokens whose first byte the current state takes differently
//    from the entry (a declared name's first letter) are walked beside the entry's loop state
//    and keep the index's answers wherever the two walks reach the same state.
// Masks are exactly those of the slow walk (tests compare them on random walks).
//
// Sharing: one MaskCache serves every matcher of one (grammar, vocabulary) pair; shared()
// hands out the process-wide instance, so requests that reuse a compiled grammar find the
// states and masks earlier requests computed. It holds state ids only, no charts: a miss
// replays the walk's bytes on the caller's ByteMatcher.
//
// Thread safety: fill() may run concurrently from many threads on one MaskCache. Lookups and
// inserts take a mutex briefly; the trie walk itself runs unlocked, reading class maps that are
// published once and never change (a per-state atomic flag) and successors that go from
// "unknown" to their final value once (atomics). Two threads missing the same successor may
// both compute it; they compute the same state id.
// Memory: bounded per cache (Limits: 16k states of about 300 bytes plus 5 per byte class, 32 MiB
// of masks by default):
// past either bound the next fill() starts a fresh generation, while fills in flight finish on
// the old one.
// shared() keeps at most kMaxShared caches (least recently used dropped first) and drops those
// whose grammar or vocabulary is gone.
// Lifetime: the cache does not own the vocabulary; callers of fill() keep it alive (a
// TokenMatcher holds it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "guided/byte_matcher.h"
#include "guided/counted_loop.h"
#include "guided/loop_finder.h"
#include "guided/token_vocabulary.h"

namespace afm::guided {

class MaskCache {
 public:
  // Bounds of one generation (see the file comment); small values are for tests.
  struct Limits {
    size_t max_states = size_t{1} << 14;
    size_t max_mask_bytes = size_t{32} << 20;
  };

  // A cache for matchers of `grammar` over `vocabulary`; both must outlive every fill() call.
  MaskCache(const Grammar& grammar, const TokenVocabulary& vocabulary, Limits limits);
  MaskCache(const Grammar& grammar, const TokenVocabulary& vocabulary)
      : MaskCache(grammar, vocabulary, Limits()) {}
  MaskCache(const MaskCache&) = delete;
  MaskCache& operator=(const MaskCache&) = delete;

  // The cache shared by every matcher of (grammar, vocabulary) in this process.
  static std::shared_ptr<MaskCache> shared(const std::shared_ptr<const Grammar>& grammar,
                                           const std::shared_ptr<const TokenVocabulary>& vocab);

  // Writes the mask of grammar tokens (EOS excluded) for `matcher`'s current state into
  // `words` (vocabulary().mask_words() entries, every bit written) and returns true. The
  // matcher must run the grammar this cache belongs to; it is used as scratch and left in the
  // state it had. Returns false (words unspecified) only if one walk needs more states than a
  // generation can hold; the caller then uses the reference walk.
  bool fill(ByteMatcher& matcher, std::span<uint32_t> words);

  // Masks computed through a counted loop (counted_loop.h), for tests.
  size_t num_counted_fills() const { return counted_fills_.load(std::memory_order_relaxed); }
  // States in the current generation, and generations started so far (for tests).
  size_t num_states() const;
  size_t num_generations() const;
  // Heap bytes the current generation holds (states, successor tables, state keys, masks): an
  // estimate from the allocation sizes, exact up to the allocator's and the hash map's overhead.
  size_t memory_bytes() const;

  // The process-wide caches handed out by shared(), for a server's metrics.
  struct SharedStats {
    size_t caches = 0;
    size_t states = 0;
    size_t bytes = 0;  // sum of memory_bytes()
  };
  static SharedStats shared_stats();

  static constexpr size_t kMaxShared = 8;

 private:
  static constexpr int32_t kReject = -1;
  // A walk that started below max_states may still add states, up to this many times more.
  static constexpr size_t kHardFactor = 4;
  // States per storage chunk: small, so a new cache costs little memory to start.
  static constexpr size_t kChunkBits = 6;

  static constexpr int32_t kUnknown = -2;  // a successor not computed yet
  // A counted loop's copies are checked this many times further than the index needs, so
  // that most later positions in it find a verdict (answer_counted()).
  static constexpr uint32_t kCheckAhead = 4;

  // A state's successors are computed lazily, a byte class at a time: the classes (allowed bytes
  // scanned by the same items, plus one class of the rejected bytes) are found when the state
  // is first reached, a class's successor when a walk first takes one of its bytes. Tries under
  // a state use few of its classes (a key's declared-name prefixes rarely meet a multi-byte
  // character), so most classes of most states are never stepped into.
  struct State {
    std::atomic<bool> has_classes{false};
    uint16_t num_allowed = 0;                      // bytes not rejected (once has_classes)
    uint16_t num_groups = 0;                       // classes of allowed bytes (the first ones)
    std::array<uint8_t, 256> class_of{};           // per byte: its class (once has_classes)
    std::unique_ptr<std::atomic<int32_t>[]> next;  // per class: successor, kReject or kUnknown
    std::unique_ptr<uint8_t[]> first_byte;         // per class: the byte stepped to compute it
    std::atomic<const uint32_t*> mask{nullptr};    // memoised grammar-token mask, or null
  };
  struct KeyHash {
    size_t operator()(const std::vector<uint32_t>& key) const;
  };
  // What check_counted_copies() found for a state that is the first state of a copy of a
  // counted loop (the loop index identifies the spec): kExact or kEnds with the copies left.
  struct CountedVerdict {
    std::shared_ptr<const TokenVocabulary::LoopIndex> index;  // held: never a reused address
    CountedCopies::Kind kind = CountedCopies::kUnknown;
    uint32_t ends_at = 0;
  };
  // One generation: states are stored in fixed chunks so readers never see them move.
  struct Table {
    explicit Table(size_t hard_max_states);
    State& state(int32_t id) {
      return chunks[static_cast<size_t>(id) >> kChunkBits]
                   [static_cast<size_t>(id) & ((size_t{1} << kChunkBits) - 1)];
    }
    std::mutex mutex;  // guards ids, chunk allocation, class map and mask publication
    std::unordered_map<std::vector<uint32_t>, int32_t, KeyHash> ids;
    std::vector<std::unique_ptr<State[]>> chunks;    // fixed size: never reallocated
    std::vector<std::unique_ptr<uint32_t[]>> masks;  // owners of the published masks
    std::unordered_map<int32_t, CountedVerdict> counted;  // by state id
    size_t hard_max_states;
    std::atomic<size_t> num_states{0};
    std::atomic<size_t> mask_bytes{0};
    std::atomic<size_t> other_bytes{0};  // state keys, successor tables, chunks
  };
  class Walk;

  std::shared_ptr<Table> table();
  // The id of `matcher`'s state in `t`, or kReject when the generation is full.
  static int32_t intern(Table& t, const ByteMatcher& matcher, std::vector<uint32_t>* key);
  void store_mask(Table& t, State& state, std::span<const uint32_t> words);
  // Where state `s` is the first copy of a counted loop whose later copies check out, sets the
  // bits of the tokens starting with its loop bytes and returns those bytes; else returns none.
  // `verdict`: the one kept for s (counted_verdict()); the copies are checked when it has none.
  ByteSet answer_counted(Table& t, Walk& walk, int32_t s, const RowLookup& row_of,
                         CountedVerdict verdict, std::span<uint32_t> words);
  // The verdict for `s` (kUnknown: none), and the verdicts a check implies for the first
  // states of the copies it saw.
  static CountedVerdict counted_verdict(Table& t, int32_t s);
  static void store_verdicts(Table& t, const std::shared_ptr<const TokenVocabulary::LoopIndex>& index,
                             const CountedCopies& copies, uint32_t enough);

  const Grammar& grammar_;
  const TokenVocabulary& vocabulary_;
  Limits limits_;
  mutable std::mutex table_mutex_;  // guards table_ (the pointer, not the table), generations_
  std::shared_ptr<Table> table_;
  size_t generations_ = 1;
  std::atomic<size_t> counted_fills_{0};
};

}  // namespace afm::guided
