#include "framework/speculator.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "framework/prompt_lookup.h"

namespace afm {
namespace {

constexpr int kMaxLookup = 16;
constexpr int kMaxDraft = 32;
constexpr size_t kMaxProposal = 32;  // forced runs included
constexpr int kMissesBeforePause = 3;
constexpr int kFirstPause = 8, kLongestPause = 256;
// Byte-level lookup: a match of at least 2 bytes (one byte recurs everywhere) and at most 64,
// and 48 bytes of continuation (more than a draft's tokens take).
constexpr size_t kMinByteMatch = 2, kMaxByteMatch = 64, kContinuationBytes = 48;
// Output tokens re-spelt with the continuation, so that a partly written word is completed
// the tokenizer's way (`"`+`St` + "onegate" -> `one`+`gate`).
constexpr size_t kRespeltTokens = 2;

void check_same_vocabulary(const model::Model& target, const tokenizer::Tokenizer& a,
                           const LoadedModel& draft) {
  const tokenizer::Tokenizer& b = draft.tokenizer();
  const int64_t na = target.hparams().n_vocab, nb = draft.weights()->hparams().n_vocab;
  if (a.vocab_size() != b.vocab_size() || na != nb) {
    throw_error(ErrorCode::kInvalidArgument,
                "the draft model " + draft.path() + " has another vocabulary: " +
                    std::to_string(b.vocab_size()) + " tokens (" + std::to_string(nb) +
                    " logits) against the target's " + std::to_string(a.vocab_size()) + " (" +
                    std::to_string(na) + ")");
  }
  for (int32_t id = 0; id < a.vocab_size(); ++id) {
    if (a.token_bytes(id) != b.token_bytes(id)) {
      throw_error(ErrorCode::kInvalidArgument,
                  "the draft model " + draft.path() + " has another vocabulary: token " +
                      std::to_string(id) + " differs from the target's");
    }
  }
}

}  // namespace

void check_speculation(const SpeculationConfig& config, const LoadedModel& target) {
  check_speculation(config, *target.weights(), target.tokenizer());
}

void check_speculation(const SpeculationConfig& config, const model::Model& target,
                       const tokenizer::Tokenizer& target_tokenizer) {
  if (config.lookup < 0 || config.lookup > kMaxLookup) {
    throw_error(ErrorCode::kInvalidArgument, "lookup must be in [0, " + std::to_string(kMaxLookup) +
                                                 "], got " + std::to_string(config.lookup));
  }
  if (config.max_draft < 1 || config.max_draft > kMaxDraft) {
    throw_error(ErrorCode::kInvalidArgument, "draft length must be in [1, " +
                                                 std::to_string(kMaxDraft) + "], got " +
                                                 std::to_string(config.max_draft));
  }
  if (config.draft) check_same_vocabulary(target, target_tokenizer, *config.draft);
}

SpeculationStats& SpeculationStats::operator+=(const SpeculationStats& o) {
  rounds += o.rounds;
  proposed += o.proposed;
  accepted += o.accepted;
  forced += o.forced;
  forced_proposed += o.forced_proposed;
  return *this;
}

SpeculationStats SpeculationStats::operator-(const SpeculationStats& o) const {
  return {rounds - o.rounds, proposed - o.proposed, accepted - o.accepted, forced - o.forced,
          forced_proposed - o.forced_proposed};
}

Speculator::Speculator(SpeculationConfig config, const model::ContextOptions& draft_context)
    : config_(std::move(config)), length_(std::min(4, config_.max_draft)) {
  if (config_.draft) {
    AFM_CHECK(draft_context.n_ctx > 0);  // the target's context, resolved by the caller
    model::ContextOptions o = draft_context;
    o.adapter = nullptr;  // adapters belong to the target
    draft_ = std::make_unique<Sequence>(config_.draft->weights(), o);
  }
}

Speculator::~Speculator() = default;

std::vector<int32_t> Speculator::propose(std::span<const int32_t> context, size_t room,
                                         DraftGuide& guide) {
  last_.clear();
  is_forced_.clear();
  last_rest_.clear();
  forced_.clear();
  forced_rest_.clear();
  const bool paused = pause_ > 0, forced_paused = forced_pause_ > 0;
  if (paused) --pause_;
  if (forced_paused) --forced_pause_;
  const int drafted_limit = paused ? 0 : length_;
  scratch_.assign(context.begin(), context.end());
  run_.clear();
  run_next_ = 0;
  // Hooks around the draft model's passes: `after` runs once, also when a pass throws.
  struct DraftHooks {
    const std::function<void()>& after;
    bool began = false;
    ~DraftHooks() {
      if (began && after) after();
    }
  } hooks{after_draft_};
  int drafted = 0;
  size_t next_forced = 0;
  while (last_.size() < std::min(room, kMaxProposal)) {
    if (next_forced == forced_.size() && !forced_paused) {
      spell_forced(guide.forced_bytes(), guide);
      next_forced = 0;
    }
    std::optional<int32_t> token;
    bool forced = false;
    std::string rest;
    if (next_forced < forced_.size() && guide.allows(forced_[next_forced])) {
      rest = forced_rest_[next_forced];
      token = forced_[next_forced++];
      forced = true;
    } else {
      forced_.clear();
      forced_rest_.clear();
      next_forced = 0;
      if (drafted >= drafted_limit) break;
      if (config_.lookup > 0) token = lookup_next(guide);
      if (!token && draft_) {
        if (!hooks.began && before_draft_) before_draft_();
        hooks.began = true;
        token = draft_model_next(scratch_, guide);
      }
      if (!token || !guide.allows(*token)) break;
      ++drafted;
    }
    guide.advance(*token);
    if (run_next_ < run_.size() && run_[run_next_] == *token) {
      ++run_next_;
    } else {
      run_.clear();
      run_next_ = 0;
    }
    last_.push_back(*token);
    is_forced_.push_back(forced);
    last_rest_.push_back(std::move(rest));
    scratch_.push_back(*token);
  }
  return last_;
}

void Speculator::spell_forced(const std::string& bytes, DraftGuide& guide) {
  forced_.clear();
  forced_rest_.clear();
  std::string rest = bytes;
  while (!rest.empty()) {
    const auto learnt = first_token_.find(rest);
    if (learnt == first_token_.end()) {
      for (int32_t t : guide.spell(rest)) {
        const std::string piece = guide.token_bytes(t);
        if (piece.empty() || rest.compare(0, piece.size(), piece) != 0) break;
        forced_.push_back(t);
        forced_rest_.push_back(rest);
        rest.erase(0, piece.size());
      }
      return;
    }
    // The model's own first token: it may end inside the forced bytes or run past them.
    const std::string piece = guide.token_bytes(learnt->second);
    forced_.push_back(learnt->second);
    forced_rest_.push_back(rest);
    if (piece.empty() || piece.size() >= rest.size()) return;
    if (rest.compare(0, piece.size(), piece) != 0) {  // stale: forget it
      forced_.pop_back();
      forced_rest_.pop_back();
      first_token_.erase(learnt);
      continue;
    }
    rest.erase(0, piece.size());
  }
}

std::optional<int32_t> Speculator::lookup_next(DraftGuide& guide) {
  if (run_next_ == run_.size()) {
    run_ = byte_lookup_run(guide);
    run_next_ = 0;
  }
  if (run_next_ < run_.size()) return run_[run_next_];
  return prompt_lookup_next(scratch_, config_.lookup);
}

void Speculator::sync_bytes(DraftGuide& guide) {
  size_t keep = 0;
  const size_t common = std::min(bytes_tokens_.size(), scratch_.size());
  while (keep < common && bytes_tokens_[keep] == scratch_[keep]) ++keep;
  bytes_tokens_.resize(keep);
  bytes_ends_.resize(keep);
  bytes_.resize(keep ? bytes_ends_.back() : 0);
  for (size_t i = keep; i < scratch_.size(); ++i) {
    bytes_ += guide.token_bytes(scratch_[i]);
    bytes_tokens_.push_back(scratch_[i]);
    bytes_ends_.push_back(bytes_.size());
  }
}

std::vector<int32_t> Speculator::byte_lookup_run(DraftGuide& guide) {
  sync_bytes(guide);
  std::string_view next =
      prompt_lookup_bytes(bytes_, kMinByteMatch, kMaxByteMatch, kContinuationBytes);
  if (next.empty()) return {};
  // Whole words only: the last word may be cut short, and a cut word is spelt otherwise. A
  // continuation that ends where the context does is whole already.
  const bool cut = next.data() + next.size() != bytes_.data() + bytes_.size();
  if (cut) {
    const size_t space = next.find_last_of(" \n");
    if (space == std::string_view::npos || space == 0) return {};
    next = next.substr(0, space);
  }
  // Spell the last output tokens and the continuation together; where the spelling starts
  // with those very tokens, the rest is how the tokenizer continues them.
  const size_t n = bytes_tokens_.size();
  for (size_t j = std::min(kRespeltTokens, n); j >= 1; --j) {
    const size_t from = n - j == 0 ? 0 : bytes_ends_[n - j - 1];
    std::string text = bytes_.substr(from);
    text.append(next);
    std::vector<int32_t> spelt = guide.spell(text);
    if (spelt.size() > j && std::equal(spelt.begin(), spelt.begin() + static_cast<ptrdiff_t>(j),
                                       bytes_tokens_.end() - static_cast<ptrdiff_t>(j))) {
      spelt.erase(spelt.begin(), spelt.begin() + static_cast<ptrdiff_t>(j));
      return spelt;
    }
  }
  return guide.spell(next);
}

std::span<const float> Speculator::draft_logits(std::span<const int32_t> context) {
  // A few new tokens (the usual case between rounds) are evaluated as single-token passes
  // would evaluate them (Sequence::extend), so a draft sharing the target's weights reproduces
  // its logits bit for bit; a long new stretch (a new prompt) is prefilled like the target's.
  constexpr size_t kExactCatchUp = 16;
  size_t keep = std::min(draft_->shared_prefix(context), context.size() - 1);
  if (context.size() - keep > kExactCatchUp) {
    // The target prefilled everything but the token just sampled; mirror it.
    draft_->prefill(context.first(context.size() - 1));
    keep = context.size() - 1;
  }
  draft_->truncate(keep);
  const std::span<const float> rows = draft_->extend(context.subspan(keep));
  const size_t n_vocab = static_cast<size_t>(config_.draft->weights()->hparams().n_vocab);
  return rows.last(n_vocab);
}

std::optional<int32_t> Speculator::draft_model_next(std::span<const int32_t> context,
                                                    DraftGuide& guide) {
  if (context.empty() || static_cast<int64_t>(context.size()) >= draft_->n_ctx()) {
    return std::nullopt;
  }
  const std::span<const float> logits = draft_logits(context);
  const auto best = std::max_element(logits.begin(), logits.end());
  const auto argmax = static_cast<int32_t>(best - logits.begin());
  if (guide.allows(argmax)) return argmax;
  if (guide.ends(argmax)) return std::nullopt;  // it expects the answer or turn to end here
  // The grammar forbids the draft's favourite: its best allowed token instead.
  std::optional<int32_t> pick;
  for (size_t t = 0; t < logits.size(); ++t) {
    const auto id = static_cast<int32_t>(t);
    if ((!pick || logits[t] > logits[static_cast<size_t>(*pick)]) && guide.allows(id)) pick = id;
  }
  return pick;
}

void Speculator::record(size_t accepted, std::optional<int32_t> sampled) {
  accepted = std::min(accepted, last_.size());
  if (last_.empty()) return;
  ++stats_.rounds;
  if (accepted < last_.size() && is_forced_[accepted] && sampled) {
    constexpr size_t kMaxSpellings = 4096;
    if (first_token_.size() >= kMaxSpellings) first_token_.clear();
    first_token_[last_rest_[accepted]] = *sampled;
  }
  if (accepted < last_.size() && is_forced_[accepted]) {
    if (++forced_misses_ >= kMissesBeforePause) {
      forced_misses_ = 0;
      forced_pause_ = next_forced_pause_;
      next_forced_pause_ = std::min(next_forced_pause_ * 2, kLongestPause);
    }
  } else if (accepted > 0 && is_forced_[accepted - 1]) {
    forced_misses_ = 0;
    next_forced_pause_ = kFirstPause;
  }
  size_t drafted = 0, drafted_ok = 0;
  for (size_t i = 0; i < last_.size(); ++i) {
    if (is_forced_[i]) {
      stats_.forced += i < accepted ? 1 : 0;
      ++stats_.forced_proposed;
      continue;
    }
    ++drafted;
    drafted_ok += i < accepted ? 1 : 0;
  }
  stats_.proposed += drafted;
  stats_.accepted += drafted_ok;
  last_.clear();
  is_forced_.clear();
  last_rest_.clear();
  if (drafted == 0) return;
  if (drafted_ok == drafted) {
    length_ = std::min(length_ + 2, config_.max_draft);
  } else {
    length_ = std::max(1, static_cast<int>(drafted_ok) + 1);
  }
  if (drafted_ok > 0) {
    misses_ = 0;
    next_pause_ = kFirstPause;
  } else if (++misses_ >= kMissesBeforePause) {
    misses_ = 0;
    pause_ = next_pause_;
    next_pause_ = std::min(next_pause_ * 2, kLongestPause);
  }
}

}  // namespace afm
