// libFuzzer target, differential: the fast token masks (MaskCache: loops, counted loops, key
// entries) equal the reference trie walk on any schema the compiler accepts; a state that is
// not complete always allows a token (every byte is one: no dead ends, uniqueItems included);
// a finished text matches the grammar on its own (ByteMatcher::matches); and two positions
// with equal state keys (ByteMatcher::state_key, which the mask cache shares states by) allow
// the same bytes along seeded probe walks from both. Input: a JSON
// Schema, a zero byte, then one choice byte per step (which allowed token to take; a choice
// of 0xff rolls one token back). A difference aborts, so the fuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "guided/json_schema_compiler.h"
#include "guided/token_matcher.h"

namespace {

// Every single byte, plus tokens that cross JSON structure, run long inside strings (so they
// span many copies of a bounded repetition) or split UTF-8 characters.
std::shared_ptr<const afm::guided::TokenVocabulary> vocabulary() {
  static const auto vocab = [] {
    std::vector<std::string> bytes = {"<eos>"};
    for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
    for (const char* t : {"\":\"", "\",\"", "\"}", "\"]", "\":{\"", "\":[", "\":1", "12.5", "-0",
                          "e+", "true", "null", "\\\"", "\\n", "\\u00", "ab", "abc", "abcd",
                          "abcdefgh", "abcdefghijklmnop", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                          "user", "john.doe", "@example", ".com", "-a", "a-b", "\"a", "x\"",
                          "\xc3\xa9", "\xc3", "\xa9\"", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
                          "2024-01-", "T12:", "    ", "0000", "123456"}) {
      bytes.emplace_back(t);
    }
    std::vector<bool> special(bytes.size(), false);
    special[0] = true;
    return std::make_shared<const afm::guided::TokenVocabulary>(std::move(bytes),
                                                                std::move(special), 0);
  }();
  return vocab;
}

constexpr size_t kMaxSteps = 96;
// Key-contract checks per input (each replays two texts and walks a few probes).
constexpr int kMaxKeyChecks = 6;
constexpr int kProbes = 12;
constexpr int kProbeDepth = 16;

// Walks from texts `a` and `b` (positions with equal state keys) along kProbes seeded paths,
// each byte drawn from what `a`'s side allows; aborts where the two sides allow different
// bytes: equal keys must accept the same continuations (byte_matcher.h).
void check_equal_keys(const std::shared_ptr<const afm::guided::Grammar>& grammar,
                      const std::string& a, const std::string& b, uint32_t seed) {
  afm::guided::ByteMatcher ma(grammar), mb(grammar);
  if (!ma.accept_bytes(a) || !mb.accept_bytes(b)) std::abort();
  for (int probe = 0; probe < kProbes; ++probe) {
    for (int depth = 0; depth < kProbeDepth; ++depth) {
      const afm::guided::ByteSet allowed = ma.allowed_next_bytes();
      if (!(allowed == mb.allowed_next_bytes())) std::abort();
      if (allowed.empty()) break;
      seed = seed * 1664525u + 1013904223u;
      int pick = static_cast<int>((seed >> 8) % static_cast<uint32_t>(allowed.count()));
      uint8_t byte = 0;
      allowed.for_each([&](uint8_t c) {
        if (pick-- == 0) byte = c;
      });
      if (!ma.accept_byte(byte) || !mb.accept_byte(byte)) std::abort();
    }
    ma.rollback(ma.consumed() - a.size());
    mb.rollback(mb.consumed() - b.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  if (split == std::string_view::npos) return 0;
  std::shared_ptr<const afm::guided::Grammar> grammar;
  try {
    grammar = afm::guided::compile_json_schema_text(input.substr(0, split));
  } catch (const afm::Error&) {
    return 0;
  }
  const auto vocab = vocabulary();
  afm::guided::TokenMatcher matcher(grammar, vocab,
                                    std::make_shared<afm::guided::MaskCache>(*grammar, *vocab));
  std::vector<uint32_t> fast(vocab->mask_words()), slow(vocab->mask_words());
  const std::string_view choices = input.substr(split + 1);
  std::vector<std::string> texts;  // per accepted token
  std::map<std::vector<uint32_t>, std::string> text_of_key;  // the first text seen per key
  std::vector<uint32_t> key;
  int key_checks = 0;
  for (size_t step = 0; step < choices.size() && step < kMaxSteps; ++step) {
    if (matcher.is_terminated()) break;
    matcher.fill_next_token_mask(fast);
    matcher.fill_next_token_mask_reference(slow);
    if (fast != slow) std::abort();
    const auto choice = static_cast<uint8_t>(choices[step]);
    if (choice == 0xff && matcher.num_tokens() > 0) {
      matcher.rollback(1);
      texts.pop_back();
      continue;
    }
    std::vector<int32_t> allowed;
    for (size_t w = 0; w < fast.size(); ++w) {
      for (int b = 0; b < 32; ++b) {
        if ((fast[w] >> b) & 1) allowed.push_back(static_cast<int32_t>(w * 32 + b));
      }
    }
    if (allowed.empty()) {
      if (grammar->empty_language()) break;  // an unsatisfiable schema
      std::abort();                          // a dead end
    }
    const int32_t id = allowed[choice % allowed.size()];
    if (!matcher.accept_token(id)) std::abort();
    texts.push_back(vocab->is_special(id) ? "" : vocab->token_bytes(id));
    if (key_checks < kMaxKeyChecks && !matcher.is_terminated()) {
      std::string text;
      for (const std::string& t : texts) text += t;
      matcher.byte_matcher().state_key(&key);
      const auto [seen, fresh] = text_of_key.emplace(key, text);
      if (!fresh && seen->second != text) {
        check_equal_keys(grammar, seen->second, text, static_cast<uint32_t>(step));
        ++key_checks;
      }
    }
  }
  if (matcher.is_terminated()) {
    std::string text;
    for (const std::string& t : texts) text += t;
    if (!afm::guided::ByteMatcher::matches(grammar, text)) std::abort();
  }
  return 0;
}
