// Speculative decoding's proposal side: drafts a few tokens that the target model then checks
// in one forward pass (ResponseDecoder verifies them; see docs/speculative.md).
//
// Sources, tried in this order at each drafted position:
//   1. the grammar (jump-forward): where the grammar forces the next bytes (the keys and
//      punctuation of a JSON object), their spelling in tokens is proposed without running
//      anything: the tokenizer's, corrected by how the model spelt the same bytes before;
//   2. prompt lookup (prompt_lookup.h), when SpeculationConfig::lookup > 0: first by bytes (the
//      output's last bytes found earlier in the context; the bytes that followed them, spelt
//      the way the tokenizer spells them after the output's last tokens), then by token n-grams;
//   3. a draft model (greedy, confined to the grammar's mask), when one is configured.
// A proposal ends at the first position no source fills, at a token the guide refuses, or at
// the adaptive length.
//
// Exactness: drafts are point proposals (one token, probability 1), so "sample the target's
// token with its own sampler and accept the draft while they agree" is rejection sampling with
// a deterministic proposal: the output is the target's distribution exactly, and with the same
// seed token for token what plain decoding gives (the verification rows are bit-identical to
// one-token passes, Sequence::extend).
//
// Adaptive length: the number of non-forced tokens proposed grows while whole drafts are
// accepted and falls to one more than the accepted count after a miss; after several rounds
// in a row with nothing accepted, drafting pauses for a growing number of tokens (8 .. 256), so
// a draft that never matches costs a few percent at most. Forced tokens are proposed whatever
// the length; rounds whose first rejected token was forced (the model spells those bytes with
// other tokens) pause them the same way. The learned length and pauses belong to the
// Speculator (one per server slot or session), so they carry over from turn to turn.
//
// Errors: check_speculation throws Error(kInvalidArgument) naming the problem (a draft model
// whose vocabulary differs from the target's, lookup or length out of range).
// Thread safety: one Speculator per sequence, single-threaded; it keeps the draft model's KV
// cache between turns (prefix reuse), like the target's Sequence.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/loaded_model.h"
#include "framework/sequence.h"
#include "model/context.h"

namespace afm {

struct SpeculationConfig {
  int lookup = 0;                            // longest n-gram prompt lookup matches (0: off)
  std::shared_ptr<const LoadedModel> draft;  // draft model (null: none)
  int max_draft = 8;                         // most non-forced tokens proposed per round
  bool enabled() const { return lookup > 0 || draft != nullptr; }
};

// Validates `config` for `target`: lookup in [0, 16], max_draft in [1, 32], and a draft model
// with exactly the target's vocabulary (same size and every token's bytes).
void check_speculation(const SpeculationConfig& config, const model::Model& target,
                       const tokenizer::Tokenizer& target_tokenizer);
void check_speculation(const SpeculationConfig& config, const LoadedModel& target);

// Counters over a Speculator's life (and, summed, over a server's).
struct SpeculationStats {
  uint64_t rounds = 0;    // verification passes that carried drafted or forced tokens
  uint64_t proposed = 0;  // tokens drafted by lookup or the draft model
  uint64_t accepted = 0;  // of those, tokens the target sampled too
  uint64_t forced = 0;    // tokens proposed from the grammar's forced bytes and accepted
  uint64_t forced_proposed = 0;  // tokens proposed from the grammar's forced bytes
  SpeculationStats& operator+=(const SpeculationStats& o);
  SpeculationStats operator-(const SpeculationStats& o) const;  // counts since `o`
};

// What the decoder knows about the next drafted position: which tokens its grammar allows.
// The Speculator calls forced_bytes()/allows()/ends() for a position, then advance() with the token
// it proposes there; end_proposal() (called by DraftVerifier, also on error) undoes the
// advances before verification.
class DraftGuide {
 public:
  virtual ~DraftGuide() = default;
  // The bytes the grammar forces next (jump-forward; empty: none forced).
  virtual std::string forced_bytes() = 0;
  // The tokenizer's spelling of `bytes`, and the bytes of one token.
  virtual std::vector<int32_t> spell(std::string_view bytes) = 0;
  virtual std::string token_bytes(int32_t token) = 0;
  // Whether `token` may be drafted next: allowed by the grammar and not ends().
  virtual bool allows(int32_t token) = 0;
  // Whether `token` ends the answer, a tool block or the turn: never drafted (those steps are
  // left to ordinary decoding); a draft model whose favourite it is stops drafting there.
  virtual bool ends(int32_t token) = 0;
  virtual void advance(int32_t token) = 0;
  virtual void end_proposal() {}
};

class Speculator {
 public:
  // draft_context: how the draft model's sequence runs (threads or a batch engine) and its
  // n_ctx, which must be the target's resolved context (> 0); ignored without a draft model.
  // Validates nothing: call check_speculation first.
  Speculator(SpeculationConfig config, const model::ContextOptions& draft_context);
  ~Speculator();

  // Proposes at most `room` tokens to follow `context` (every token the target holds plus the
  // one just sampled).
  std::vector<int32_t> propose(std::span<const int32_t> context, size_t room, DraftGuide& guide);
  // After verifying the last proposal: `accepted` of its first tokens were sampled too, and
  // `sampled` (when known) is the token sampled where the next one was proposed.
  void record(size_t accepted, std::optional<int32_t> sampled = std::nullopt);
  const SpeculationStats& stats() const { return stats_; }
  int draft_length() const { return length_; }
  // Called around the draft model's passes of one proposal (a batching server lets the
  // target's shared steps go on without waiting for a sequence busy drafting).
  void set_draft_hooks(std::function<void()> before, std::function<void()> after) {
    before_draft_ = std::move(before);
    after_draft_ = std::move(after);
  }

 private:
  std::optional<int32_t> draft_model_next(std::span<const int32_t> context, DraftGuide& guide);
  // The draft model's logits after `context` (its cache is brought to hold exactly it).
  std::span<const float> draft_logits(std::span<const int32_t> context);
  // Fills forced_ / forced_rest_ with a spelling of `bytes`: learnt first tokens while they
  // fit, then the tokenizer's spelling of the rest.
  void spell_forced(const std::string& bytes, DraftGuide& guide);
  // The next prompt-lookup token after scratch_: the byte-level run's next token, else a new
  // byte-level run, else the token n-gram match.
  std::optional<int32_t> lookup_next(DraftGuide& guide);
  // A byte-level lookup's continuation of scratch_ in tokens (empty: no match, or the guide
  // cannot spell).
  std::vector<int32_t> byte_lookup_run(DraftGuide& guide);
  // Brings bytes_ to hold the bytes of scratch_ (incrementally: scratch_ mostly grows).
  void sync_bytes(DraftGuide& guide);

  SpeculationConfig config_;
  std::unique_ptr<Sequence> draft_;        // the draft model's KV cache (null: no draft model)
  std::vector<int32_t> scratch_;           // context + the proposal so far
  std::vector<int32_t> last_;              // the last proposal; is_forced_ marks grammar tokens
  std::vector<bool> is_forced_;
  std::vector<int32_t> forced_;            // the grammar's forced tokens not yet proposed
  std::vector<std::string> forced_rest_;   // for each, the forced bytes from it on
  std::vector<std::string> last_rest_;     // forced_rest_ of the last proposal's tokens
  std::vector<int32_t> run_;               // the byte-level lookup's tokens not yet proposed
  size_t run_next_ = 0;
  std::string bytes_;                      // the bytes of bytes_tokens_
  std::vector<int32_t> bytes_tokens_;      // the tokens bytes_ spells
  std::vector<size_t> bytes_ends_;         // where each of them ends in bytes_
  // How the model spells forced bytes: the first token it sampled where the tokenizer's
  // spelling of these bytes was proposed and rejected (learnt per slot or session; bounded).
  std::unordered_map<std::string, int32_t> first_token_;
  int length_;                             // adaptive count of non-forced tokens per round
  int misses_ = 0;                         // rounds in a row with nothing accepted
  int pause_ = 0, next_pause_ = 8;         // proposals left before drafting again
  // The same for forced tokens, whose tokenization the model may not share.
  int forced_misses_ = 0, forced_pause_ = 0, next_forced_pause_ = 8;
  SpeculationStats stats_;
  std::function<void()> before_draft_, after_draft_;
};

}  // namespace afm
