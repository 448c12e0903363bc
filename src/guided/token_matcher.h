// Token-level matcher: a ByteMatcher driven one vocabulary token at a time.
//
// A token is allowed iff the byte matcher accepts all of its bytes in sequence from the current
// state; special/control tokens are never allowed, except the vocabulary's EOS token, which is
// allowed exactly when the bytes so far form a complete sentence. Because the grammar has no
// dead ends (Grammar::build prunes them), a state that is not complete always allows at least
// one byte, though not necessarily a whole token of a given vocabulary.
//
// Mask computation (fill_next_token_mask) goes through a MaskCache (mask_cache.h): parse states
// are memoised with their byte successors and masks, and loops such as JSON string content are
// answered from a per-vocabulary bitmask. By default every matcher of one (grammar, vocabulary)
// pair in the process shares one cache (MaskCache::shared), so a compiled grammar that is kept
// and reused serves later sequences from the states and masks earlier ones computed.
// fill_next_token_mask_reference() is the plain walk over the vocabulary trie (one Earley step per
// trie edge) that the fast path must equal; tests and benchmarks compare the two.
//
// Grammars with unique arrays (uniqueItems) get a UniqueItemsGuard beside the byte matcher:
// accept_token() and both masks also refuse tokens that would repeat an element or leave only
// repeats to write (unique_items.h); the cached grammar mask is filtered after the cache.
//
// Ownership and threads: the Grammar and TokenVocabulary are immutable and may be shared by
// many matchers on many threads; so may the MaskCache (thread-safe). A TokenMatcher is one per
// sequence, single-threaded.
// Errors: ids outside the vocabulary are rejected (accept_token returns false), never UB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "guided/byte_matcher.h"
#include "guided/grammar.h"
#include "guided/mask_cache.h"
#include "guided/token_vocabulary.h"
#include "guided/unique_items.h"

namespace afm::guided {

class TokenMatcher {
 public:
  // `mask_cache`: a cache made for this grammar and vocabulary (null: MaskCache::shared()).
  TokenMatcher(std::shared_ptr<const Grammar> grammar,
               std::shared_ptr<const TokenVocabulary> vocabulary,
               std::shared_ptr<MaskCache> mask_cache = nullptr);

  // Consumes token `id` if allowed (see above); on false the state is unchanged. After EOS is
  // accepted the matcher is terminated: no further token is accepted until it is rolled back.
  bool accept_token(int32_t id);
  // Writes the allowed-token bitmask: bit (id % 32) of words[id / 32]. `words` must have
  // vocabulary().mask_words() entries; every bit is written (bits past the vocabulary are 0).
  void fill_next_token_mask(std::span<uint32_t> words);
  std::vector<uint32_t> next_token_mask();
  // The same mask by the reference walk (slow: one Earley step per trie edge).
  void fill_next_token_mask_reference(std::span<uint32_t> words);
  // Forgets the last n accepted tokens (EOS included); n <= num_tokens().
  void rollback(size_t n_tokens);

  // True when the bytes so far form a complete sentence (EOS would be allowed).
  bool is_complete() const { return bytes_.is_complete(); }
  bool is_terminated() const { return terminated_; }
  size_t num_tokens() const { return token_lengths_.size(); }
  size_t num_bytes() const { return bytes_.consumed(); }

  // Jump-forward: the longest byte string every continuation must start with — bytes are
  // appended while exactly one byte is allowed and the state is not complete (a complete
  // state could also end here). At most max_bytes. The state is unchanged; callers tokenize
  // the string (it need not be one token) and feed the tokens back through accept_token.
  std::string forced_bytes(size_t max_bytes = 4096);

  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  const ByteMatcher& byte_matcher() const { return bytes_; }
  const std::shared_ptr<MaskCache>& mask_cache() const { return masks_; }

 private:
  void walk_trie(std::span<uint32_t> words);
  void apply_unique_items(std::span<uint32_t> words);

  std::shared_ptr<const TokenVocabulary> vocabulary_;
  ByteMatcher bytes_;
  std::shared_ptr<MaskCache> masks_;
  std::optional<UniqueItemsGuard> unique_;  // only for grammars with unique arrays
  std::vector<uint32_t> token_lengths_;  // bytes consumed per accepted token (EOS: 0)
  bool terminated_ = false;
};

}  // namespace afm::guided
