// Speculative decoding (framework/speculator.h) on the shipped default model: with prompt
// lookup, a draft model (the model itself: nearly every draft accepted; the shipped 2-layer
// draft: many rejected), guided JSON and tool calls, every turn is token for token the turn plain decoding
// gives — at temperature 0 and, seed for seed, above it — and the sequence ends holding the
// same tokens. A chi-square test checks the sampled distribution at temperature 1 against the
// model's own probabilities. Also: prompt lookup itself, the adaptive pause, typed errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>

#include "base/error.h"
#include "framework/chat_service.h"
#include "framework/prompt_lookup.h"
#include "framework/response_decoder.h"
#include "framework/sequence.h"
#include "framework/speculator.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const LoadedModel> model() {
  static const auto m = LoadedModel::load("models/afm-device-21m.gguf");
  return m;
}

// The shipped draft of the default model (2 layers, about 73% greedy agreement on assistant
// tokens: often wrong, and several times cheaper than the model it drafts for).
std::shared_ptr<const LoadedModel> draft_model() {
  static const auto m = LoadedModel::load("models/afm-device-21m-draft.gguf");
  return m;
}

model::ContextOptions context(int64_t n_ctx = 512) {
  model::ContextOptions c;
  c.n_ctx = n_ctx;
  c.n_threads = 2;
  return c;
}

std::vector<int32_t> render(const std::string& user, const PromptExtras& extras = {}) {
  const ChatTemplate& tmpl = *model()->chat_template();
  const std::string text = tmpl.render({{"user", user}}, true, extras);
  return model()->tokenizer().encode(text, {.parse_special = true, .add_bos = false});
}

struct TurnOutcome {
  DecodeResult result;
  std::vector<int32_t> held;  // the sequence's tokens after the turn
};

// One turn on a fresh sequence, plain (speculator null) or speculative.
// On `reuse` when given (its cached prompt is reused), else on a fresh sequence.
TurnOutcome run_turn(const std::vector<int32_t>& prompt, DecodePlan plan,
                     const sample::SamplerConfig& sampling, Speculator* speculator,
                     int64_t n_ctx = 512, Sequence* reuse = nullptr) {
  std::optional<Sequence> fresh;
  if (!reuse) fresh.emplace(model()->weights(), context(n_ctx));
  Sequence& seq = reuse ? *reuse : *fresh;
  sample::Sampler sampler(sampling);
  plan.speculator = speculator;
  ResponseDecoder decoder(*model(), plan, sampler);
  const std::span<const float> logits = seq.prefill(prompt);
  TurnOutcome out{decoder.run(seq, logits, [](std::string_view) { return true; }), {}};
  out.held = seq.tokens();
  return out;
}

sample::SamplerConfig greedy() {
  sample::SamplerConfig c;
  c.temperature = 0;
  return c;
}

sample::SamplerConfig random_sampling(uint64_t seed, float temperature = 0.9f) {
  sample::SamplerConfig c;
  c.temperature = temperature;
  c.top_k = 40;
  c.top_p = 0.95f;
  c.min_p = 0.05f;
  c.repeat_penalty = 1.1f;  // the penalties see exactly plain decoding's history
  c.seed = seed;
  return c;
}

void expect_same_turn(const TurnOutcome& plain, const TurnOutcome& spec) {
  EXPECT_EQ(spec.result.tokens, plain.result.tokens);
  EXPECT_EQ(spec.result.text, plain.result.text);
  EXPECT_EQ(spec.result.finish_reason, plain.result.finish_reason);
  EXPECT_EQ(spec.held, plain.held);
}

SpeculationConfig lookup_config(int n = 3) {
  SpeculationConfig c;
  c.lookup = n;
  return c;
}

const char* kCopyPrompt =
    "Repeat this sentence exactly: the quick brown fox jumps over the lazy dog near the "
    "river bank on a sunny afternoon in early spring.";
// A request the shipped model answers at length (a sum worked column by column, ~35 tokens):
// the tests that need many drafted tokens or a turn longer than the context use it, whatever
// the model makes of a request to copy.
const char* kLongAnswerPrompt =
    "A class collected 47 cans on Monday and 38 cans on Tuesday. How many cans is that in all?";

TEST(PromptLookup, ProposesWhatFollowedTheLongestRecurringSuffix) {
  const std::vector<int32_t> ctx{1, 2, 3, 4, 9, 2, 3, 7, 5, 2, 3};
  // Suffix "2 3" last occurred before 7 (the most recent match wins over the older "2 3 4").
  EXPECT_EQ(prompt_lookup_next(ctx, 2), 7);
  // With n up to 3, "5 2 3" never recurs; "2 3" does.
  EXPECT_EQ(prompt_lookup_next(ctx, 3), 7);
  EXPECT_EQ(prompt_lookup_next(std::vector<int32_t>{1, 2, 3, 1, 2}, 2), 3);
  EXPECT_EQ(prompt_lookup_next(std::vector<int32_t>{1, 2, 3}, 4), std::nullopt);
  EXPECT_EQ(prompt_lookup_next(std::vector<int32_t>{5}, 2), std::nullopt);
  EXPECT_EQ(prompt_lookup_next(std::vector<int32_t>{5, 5}, 0), std::nullopt);
  EXPECT_EQ(prompt_lookup_next(std::vector<int32_t>{5, 5}, 1), 5);
}

TEST(PromptLookup, ProposesTheBytesThatFollowedTheLongestRecurringByteSuffix) {
  const std::string output = "Stonegate Legal paid Rosa; Stonehill wrote. {\"payer\":\"St";
  // "St" recurs twice ("\"St" never does): the most recent occurrence wins, and its
  // continuation is cut at max_bytes.
  EXPECT_EQ(prompt_lookup_bytes(output, 2, 64, 9), "onehill w");
  EXPECT_EQ(prompt_lookup_bytes(output, 3, 64, 9), "");  // "\"St" never recurs
  // The longest recurring suffix beats a more recent shorter one.
  EXPECT_EQ(prompt_lookup_bytes("xab1 yb2 xab", 2, 8, 1), "1");  // "xab"
  EXPECT_EQ(prompt_lookup_bytes("xab1 yb2 xab", 1, 1, 1), "2");  // "b", most recently in "yb"
  // A repeating pattern continues into the suffix itself; the continuation stops at the end.
  EXPECT_EQ(prompt_lookup_bytes("abcabc", 2, 8, 10), "abc");
  EXPECT_EQ(prompt_lookup_bytes("ab", 2, 8, 10), "");
  EXPECT_EQ(prompt_lookup_bytes("", 2, 8, 10), "");
}

// A guide that allows every token, forces nothing and spells with the shipped tokenizer.
class SpellingGuide : public DraftGuide {
 public:
  std::string forced_bytes() override { return {}; }
  std::vector<int32_t> spell(std::string_view bytes) override {
    return tok().encode(bytes, {.parse_special = false, .add_bos = false});
  }
  std::string token_bytes(int32_t t) override { return tok().token_bytes(t); }
  bool allows(int32_t t) override { return t >= 0 && t < tok().vocab_size() && !ends(t); }
  bool ends(int32_t t) override { return t < 5; }  // the shipped vocabulary's specials
  void advance(int32_t) override {}

 private:
  static const tokenizer::Tokenizer& tok() { return model()->tokenizer(); }
};

std::string bytes_of(const std::vector<int32_t>& tokens) {
  std::string s;
  for (int32_t t : tokens) s += model()->tokenizer().token_bytes(t);
  return s;
}

TEST(PromptLookup, ByteLookupFindsACopyTheOutputSpellsWithOtherTokens) {
  // The passage says " Stonegate Legal"; the JSON value starts `"St`, so the output's last
  // tokens never occur in the passage's tokens, but its last bytes do.
  const tokenizer::Tokenizer& tok = model()->tokenizer();
  std::vector<int32_t> tokens = tok.encode("The bill came from Stonegate Legal; it was paid.",
                                            {.parse_special = false, .add_bos = false});
  const std::vector<int32_t> output =
      tok.encode("{\"payee\":\"St", {.parse_special = false, .add_bos = false});
  tokens.insert(tokens.end(), output.begin(), output.end());
  // The token n-gram lookup has nothing that continues the name.
  const std::optional<int32_t> by_tokens = prompt_lookup_next(tokens, 3);
  EXPECT_FALSE(by_tokens && bytes_of({*by_tokens}).starts_with("one"));

  SpeculationConfig config = lookup_config();
  config.max_draft = 8;
  Speculator speculator(config, context());
  SpellingGuide guide;
  const std::vector<int32_t> draft = speculator.propose(tokens, 16, guide);
  ASSERT_FALSE(draft.empty());
  // The continuation, spelt the way the tokenizer spells `"Stonegate Legal...` after `"St`
  // (whole words only), as far as the adaptive length allows.
  const std::string drafted = bytes_of(draft);
  EXPECT_TRUE(std::string("onegate Legal; it was").starts_with(drafted)) << drafted;
  EXPECT_GE(drafted.size(), std::string("onegate").size()) << drafted;
  std::vector<int32_t> whole = output;
  whole.insert(whole.end(), draft.begin(), draft.end());
  const std::vector<int32_t> spelt =
      tok.encode(bytes_of(whole), {.parse_special = false, .add_bos = false});
  EXPECT_EQ(whole, spelt) << "the draft continues the output the tokenizer's way";
}

TEST(Speculation, FreeTextIsTheSameTurnAtTemperatureZeroAndSeedForSeedAbove) {
  const std::vector<int32_t> prompt = render(kLongAnswerPrompt);
  DecodePlan plan;
  plan.max_tokens = 48;
  Speculator lookup(lookup_config(), context());
  SpeculationConfig self;
  self.draft = model();
  Speculator drafted(self, context());
  const TurnOutcome plain = run_turn(prompt, plan, greedy(), nullptr);
  expect_same_turn(plain, run_turn(prompt, plan, greedy(), &lookup));
  const TurnOutcome by_draft = run_turn(prompt, plan, greedy(), &drafted);
  expect_same_turn(plain, by_draft);
  ASSERT_GT(by_draft.result.speculation.proposed, 10u);
  // The model drafting for itself reproduces its logits bit for bit: every draft is taken
  // whole except the one cut short where the turn ends.
  EXPECT_GE(by_draft.result.speculation.accepted + 8, by_draft.result.speculation.proposed);
  EXPECT_LT(by_draft.result.speculation.rounds, plain.result.tokens.size() / 2);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const TurnOutcome want = run_turn(prompt, plan, random_sampling(seed), nullptr);
    expect_same_turn(want, run_turn(prompt, plan, random_sampling(seed), &lookup));
    expect_same_turn(want, run_turn(prompt, plan, random_sampling(seed), &drafted));
  }
}

TEST(Speculation, ARealDraftIsOftenWrongAndTheTurnStaysTheSame) {
  SpeculationConfig config;
  config.draft = draft_model();
  check_speculation(config, *model());
  Speculator speculator(config, context());
  DecodePlan plan;
  plan.max_tokens = 40;
  SpeculationStats total;
  for (const char* user : {"Tell me about the sea.", kCopyPrompt, "What is 24 plus 18?"}) {
    const std::vector<int32_t> prompt = render(user);
    expect_same_turn(run_turn(prompt, plan, greedy(), nullptr),
                     run_turn(prompt, plan, greedy(), &speculator));
    for (uint64_t seed : {3u, 4u}) {
      const TurnOutcome spec = run_turn(prompt, plan, random_sampling(seed), &speculator);
      expect_same_turn(run_turn(prompt, plan, random_sampling(seed), nullptr), spec);
      total += spec.result.speculation;
    }
  }
  EXPECT_GT(total.proposed, 0u);
  EXPECT_LT(total.accepted, total.proposed);  // the test is meaningless if it never misses
}

// A guided extraction: the schema's keys are forced (jump-forward), values are copied from the
// prompt (lookup); the answer is the plain turn's, valid for the schema.
TEST(Speculation, GuidedJsonIsTheSameAnswerWithForcedAndLookupTokens) {
  const Json schema = Json::parse(R"({"type":"object","properties":{
      "name":{"type":"string","maxLength":40},"city":{"type":"string","maxLength":40},
      "age":{"type":"integer","minimum":0,"maximum":120}},
      "required":["name","city","age"],"additionalProperties":false})");
  PromptExtras extras;
  extras.response_schema = schema;
  const std::vector<int32_t> prompt = render(
      "Extract the person: Marta Kowalczyk, 41, moved from Gdansk to Porto last year.", extras);
  DecodePlan plan;
  plan.answer_grammar = guided::compile_json_schema(schema);
  plan.max_tokens = 80;
  Speculator speculator(lookup_config(), context());
  const TurnOutcome plain = run_turn(prompt, plan, greedy(), nullptr);
  const TurnOutcome spec = run_turn(prompt, plan, greedy(), &speculator);
  expect_same_turn(plain, spec);
  EXPECT_TRUE(spec.result.answer_complete);
  EXPECT_TRUE(guided::ByteMatcher::matches(plan.answer_grammar, spec.result.text)) << spec.result.text;
  EXPECT_GT(spec.result.speculation.forced, 5u);  // {"name": " and the other keys
  // The speculator learns how the model spells the forced bytes: the same request again
  // proposes fewer forced tokens that the model then writes differently.
  Speculator learner(lookup_config(), context());
  std::vector<SpeculationStats> runs;
  for (int i = 0; i < 3; ++i) {
    const TurnOutcome t = run_turn(prompt, plan, greedy(), &learner);
    expect_same_turn(plain, t);
    runs.push_back(t.result.speculation);
  }
  const auto rejected = [](const SpeculationStats& s) { return s.forced_proposed - s.forced; };
  EXPECT_GE(runs[2].forced, runs[0].forced);
  if (rejected(runs[0]) > 0) {
    EXPECT_LT(rejected(runs[2]), rejected(runs[0]));
  }
  std::printf("forced tokens accepted/proposed: first %llu/%llu, third %llu/%llu\n",
              static_cast<unsigned long long>(runs[0].forced),
              static_cast<unsigned long long>(runs[0].forced_proposed),
              static_cast<unsigned long long>(runs[2].forced),
              static_cast<unsigned long long>(runs[2].forced_proposed));
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const TurnOutcome s = run_turn(prompt, plan, random_sampling(seed), &speculator);
    expect_same_turn(run_turn(prompt, plan, random_sampling(seed), nullptr), s);
    EXPECT_TRUE(guided::ByteMatcher::matches(plan.answer_grammar, s.result.text)) << s.result.text;
  }
}

TEST(Speculation, ToolCallsThroughTheServiceAreTheSame) {
  ChatServiceOptions plain_options;
  plain_options.n_threads = 2;
  ChatServiceOptions spec_options = plain_options;
  spec_options.speculation.lookup = 3;
  spec_options.speculation.draft = model();
  ChatService plain(model(), plain_options), spec(model(), spec_options);
  ChatRequest r;
  r.messages = {{"user", "What is the weather in Reykjavik in celsius?"}};
  r.tools = {{"get_weather", "Current weather for a city.",
              Json::parse(R"({"type":"object","properties":{"city":{"type":"string"},
                "unit":{"type":"string","enum":["celsius","fahrenheit"]}},
                "required":["city","unit"],"additionalProperties":false})")}};
  r.tool_choice = ToolChoice::kRequired;
  r.sampling.temperature = 0;
  r.max_tokens = 64;
  for (int round = 0; round < 2; ++round) {  // the second reuses both caches
    const ChatResult want = plain.complete(r), got = spec.complete(r);
    ASSERT_EQ(got.tool_calls.size(), want.tool_calls.size());
    for (size_t i = 0; i < want.tool_calls.size(); ++i) {
      EXPECT_EQ(got.tool_calls[i].name, want.tool_calls[i].name);
      EXPECT_EQ(got.tool_calls[i].arguments, want.tool_calls[i].arguments);
    }
    EXPECT_EQ(got.finish_reason, want.finish_reason);
    EXPECT_EQ(got.completion_tokens, want.completion_tokens);
    EXPECT_GT(got.speculation.forced + got.speculation.accepted, 0u);
  }
  EXPECT_GT(spec.speculation_stats().rounds, 0u);
  EXPECT_EQ(plain.speculation_stats().rounds, 0u);
}

// Drafts never run past the context: the turn ends by length where plain decoding's does.
TEST(Speculation, AFullContextEndsTheTurnWherePlainDecodingDoes) {
  const std::vector<int32_t> prompt = render(kLongAnswerPrompt);
  const int64_t n_ctx = static_cast<int64_t>(prompt.size()) + 9;
  DecodePlan plan;
  SpeculationConfig self;
  self.draft = model();
  self.lookup = 2;
  Speculator speculator(self, context(n_ctx));
  const TurnOutcome plain = run_turn(prompt, plan, greedy(), nullptr, n_ctx);
  const TurnOutcome spec = run_turn(prompt, plan, greedy(), &speculator, n_ctx);
  EXPECT_EQ(plain.result.finish_reason, "length");
  expect_same_turn(plain, spec);
}

// Chi-square: the token after each of the three likeliest first tokens, sampled at temperature
// 1 by the speculative loop with an often-wrong draft over many seeds (it comes from a
// verification row), follows the model's softmax after that first token.
double chi_square_p001(int df) {  // critical value at p = 0.001, Wilson-Hilferty approximation
  const double k = df, z = 3.0902;
  return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

std::vector<double> softmax(std::span<const float> logits) {
  std::vector<double> p(logits.size());
  const float top = *std::max_element(logits.begin(), logits.end());
  double z = 0;
  for (size_t i = 0; i < p.size(); ++i) z += p[i] = std::exp(static_cast<double>(logits[i] - top));
  for (double& v : p) v /= z;
  return p;
}

// Adds the chi-square terms of `counts` (n samples) against p: categories expected >= 5 times,
// the rest pooled. Returns the degrees of freedom added.
int add_chi_square(const std::vector<double>& p, const std::map<int32_t, int>& counts, int n,
                   double& chi2) {
  int cells = 0, rest_observed = n;
  double rest_expected = n;
  for (size_t id = 0; id < p.size(); ++id) {
    const double expected = p[id] * n;
    if (expected < 5) continue;
    const auto it = counts.find(static_cast<int32_t>(id));
    const int observed = it == counts.end() ? 0 : it->second;
    chi2 += (observed - expected) * (observed - expected) / expected;
    rest_observed -= observed;
    rest_expected -= expected;
    ++cells;
  }
  if (rest_expected >= 5) {
    chi2 += (rest_observed - rest_expected) * (rest_observed - rest_expected) / rest_expected;
    ++cells;
  }
  return cells - 1;
}

TEST(Speculation, SamplesFollowTheModelsDistribution) {
  const std::vector<int32_t> prompt = render("Write one word about the weather.");
  Sequence probe(model()->weights(), context());
  const std::vector<double> first = softmax(probe.prefill(prompt));
  std::vector<int32_t> top(first.size());
  std::iota(top.begin(), top.end(), 0);
  std::partial_sort(top.begin(), top.begin() + 3, top.end(),
                    [&](int32_t a, int32_t b) { return first[a] > first[b]; });
  top.resize(3);
  std::map<int32_t, std::vector<double>> second;  // the model's p(. | prompt, t1)
  for (int32_t t1 : top) {
    probe.prefill(prompt);
    second[t1] = softmax(probe.append(t1));
  }

  SpeculationConfig config;
  config.draft = draft_model();
  Speculator speculator(config, context());
  DecodePlan plan;
  plan.max_tokens = 2;
  sample::SamplerConfig s;
  s.temperature = 1.0f;
  s.top_k = 0;
  s.top_p = 1.0f;
  s.min_p = 0.0f;
  std::map<int32_t, std::map<int32_t, int>> counts;
  std::map<int32_t, int> n;
  Sequence seq(model()->weights(), context());
  for (uint64_t seed = 1; seed <= 1200; ++seed) {
    s.seed = seed;
    const TurnOutcome t = run_turn(prompt, plan, s, &speculator, 512, &seq);
    if (t.result.tokens.size() == 2 && second.count(t.result.tokens[0])) {
      ++counts[t.result.tokens[0]][t.result.tokens[1]];
      ++n[t.result.tokens[0]];
    }
  }
  double chi2 = 0;
  int df = 0, total = 0;
  for (int32_t t1 : top) {
    if (n[t1] < 30) continue;
    df += add_chi_square(second[t1], counts[t1], n[t1], chi2);
    total += n[t1];
  }
  ASSERT_GT(total, 200);
  ASSERT_GE(df, 3);
  EXPECT_LT(chi2, chi_square_p001(df)) << total << " samples, " << df << " degrees of freedom";
  EXPECT_GT(speculator.stats().proposed, 0u);
}

// Lookup that is never right: after a few misses drafting pauses, then tries again.
TEST(Speculation, RepeatedMissesPauseDrafting) {
  struct AnyToken : DraftGuide {
    std::string forced_bytes() override { return {}; }
    std::vector<int32_t> spell(std::string_view) override { return {}; }
    std::string token_bytes(int32_t) override { return {}; }
    bool allows(int32_t) override { return true; }
    bool ends(int32_t) override { return false; }
    void advance(int32_t) override {}
  } guide;
  Speculator speculator(lookup_config(2), context());
  const std::vector<int32_t> ctx{4, 5, 6, 4, 5};  // lookup proposes 6, 4, 5, ...
  int empty_rounds = 0;
  for (int round = 0; round < 40; ++round) {
    const std::vector<int32_t> d = speculator.propose(ctx, 16, guide);
    if (d.empty()) {
      ++empty_rounds;
    } else {
      EXPECT_EQ(d.front(), 6);
      speculator.record(0);
    }
  }
  EXPECT_GE(empty_rounds, 8 + 16);  // two pauses so far: 8 then 16 tokens
  EXPECT_EQ(speculator.draft_length(), 1);
  EXPECT_EQ(speculator.stats().accepted, 0u);
}

TEST(Speculation, BadConfigurationsAreTypedErrors) {
  auto expect_error = [](const SpeculationConfig& c, const std::string& words) {
    try {
      check_speculation(c, *model());
      ADD_FAILURE() << "accepted: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  SpeculationConfig c;
  c.lookup = 17;
  expect_error(c, "lookup must be in [0, 16]");
  c.lookup = 2;
  c.max_draft = 0;
  expect_error(c, "draft length must be in [1, 32]");
}

}  // namespace
}  // namespace afm
