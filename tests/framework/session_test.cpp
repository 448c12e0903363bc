// LanguageModelSession on the shipped default model (greedy, so every run is the same):
// KV reuse across turns, Generable responses, streaming snapshots, tools, and every error.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>

#include "afm/afm.h"
#include "framework/loaded_model.h"
#include "tokenizer/tokenizer.h"

namespace session_test {

struct Person {
  std::string name;
  int age = 0;
  std::string city;
  std::string occupation;
};

enum class Unit { celsius, fahrenheit };

struct WeatherArguments {
  std::string city;
  std::optional<Unit> unit;
};

struct Lookahead {
  std::string s;
};

}  // namespace session_test

AFM_GENERABLE(session_test::Person, "A person described in the text.",
              AFM_FIELD(name, "full name"), AFM_FIELD(age, "age in years", afm::guide::range(0, 150)),
              AFM_FIELD(city, "city of residence"), AFM_FIELD(occupation, "job title"));
AFM_GENERABLE_ENUM(session_test::Unit, "", celsius, fahrenheit);
AFM_GENERABLE(session_test::WeatherArguments, "", AFM_FIELD(city, ""), AFM_FIELD(unit, ""));
AFM_GENERABLE(session_test::Lookahead, "", AFM_FIELD(s, "", afm::guide::pattern("(?=a)b")));

namespace afm {
namespace {

using session_test::Person;
constexpr const char* kModel = "models/afm-device-21m.gguf";
constexpr const char* kExtract = "You are a careful assistant that extracts structured data from text.";

GenerationOptions short_greedy(int64_t n = 48) {
  GenerationOptions o;
  o.maximum_response_tokens = n;
  return o;
}

GenerationErrorKind error_kind(const std::function<void()>& f) {
  try {
    f();
  } catch (const GenerationError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no GenerationError";
  return GenerationErrorKind::kRefusal;
}

class WeatherTool : public TypedTool<session_test::WeatherArguments> {
 public:
  explicit WeatherTool(bool fail = false) : fail_(fail) {}
  std::string name() const override { return "get_weather"; }
  std::string description() const override { return "Current weather conditions for a city."; }
  ToolOutput call(const session_test::WeatherArguments& a) override {
    ++calls;
    last_city = a.city;
    if (fail_) throw std::runtime_error("the weather service is down");
    return GeneratedContent(nlohmann::ordered_json{
        {"city", a.city}, {"temperature", 12}, {"unit", "celsius"}, {"conditions", "sunny"}});
  }
  std::atomic<int> calls{0};
  std::string last_city;

 private:
  bool fail_;
};

TEST(Session, UnavailableModelSaysWhy) {
  SystemLanguageModel missing("no/such/model.gguf");
  EXPECT_FALSE(missing.is_available());
  EXPECT_NE(missing.availability().reason.find("no/such/model.gguf"), std::string::npos);
  LanguageModelSession session(missing);
  EXPECT_EQ(error_kind([&] { session.respond("hi"); }), GenerationErrorKind::kUnavailable);
}

TEST(Session, FollowUpTurnPrefillsOnlyItsNewTokens) {
  SystemLanguageModel model(kModel);
  ASSERT_TRUE(model.is_available()) << model.availability().reason;
  LanguageModelSession session(model, {}, "You are a helpful assistant.");
  const Response<std::string> first = session.respond("What is the capital of France?", short_greedy());
  EXPECT_EQ(first.usage.prefilled_tokens, first.usage.prompt_tokens);  // nothing cached yet
  const Response<std::string> second = session.respond("And of Spain?", short_greedy());
  // New tokens: the end of the previous answer's turn, the new user turn, the assistant opening.
  const tokenizer::Tokenizer& tok = model.loaded()->tokenizer();
  const size_t expected =
      tok.encode("<turn_end><turn_start> user\nAnd of Spain?<turn_end><turn_start> assistant\n",
                 {.parse_special = true})
          .size();
  EXPECT_EQ(second.usage.prefilled_tokens, static_cast<int64_t>(expected));
  EXPECT_EQ(second.usage.prompt_tokens,
            first.usage.prompt_tokens + first.usage.response_tokens + static_cast<int64_t>(expected));
  ASSERT_EQ(session.transcript().size(), 5u);  // instructions, prompt, response, prompt, response
  EXPECT_EQ(session.transcript()[4].kind, TranscriptEntry::Kind::kResponse);
  EXPECT_EQ(session.transcript()[4].text, second.content);
}

TEST(Session, PrewarmEvaluatesTheInstructionsAhead) {
  SystemLanguageModel model(kModel);
  LanguageModelSession session(model, {}, kExtract);
  session.prewarm();
  const Response<Person> r = session.respond<Person>("Ana Lima is a 34-year-old nurse who lives in Lisbon.");
  EXPECT_LT(r.usage.prefilled_tokens, r.usage.prompt_tokens);
  EXPECT_GE(r.content.age, 0);
  EXPECT_LE(r.content.age, 150);
}

TEST(Session, RespondsWithAGenerableValueAndStreamsSnapshots) {
  SystemLanguageModel model(kModel);
  LanguageModelSession session(model, {}, kExtract);
  std::vector<std::string> snapshots;
  const Response<Person> r = session.stream_response<Person>(
      "Meet Tom Berg, 52, a baker based in Oslo, Norway.",
      [&](const PartiallyGenerated<Person>& p) { snapshots.push_back(p.content.json_string()); });
  EXPECT_FALSE(r.content.name.empty());
  EXPECT_GE(r.content.age, 0);
  EXPECT_LE(r.content.age, 150);
  ASSERT_GT(snapshots.size(), 4u);
  // Snapshots grow: each one's name so far is a prefix of the final name.
  const nlohmann::ordered_json final_json = nlohmann::ordered_json::parse(snapshots.back());
  EXPECT_EQ(final_json["name"], r.content.name);
  for (const std::string& s : snapshots) {
    const auto j = nlohmann::ordered_json::parse(s);
    if (j.is_object() && j.contains("name")) {
      EXPECT_EQ(r.content.name.rfind(j["name"].get<std::string>(), 0), 0u) << s;
    }
  }
}

TEST(Session, RespondsWithContentForARuntimeSchema) {
  SystemLanguageModel model(kModel);
  LanguageModelSession session(model, {}, kExtract);
  using D = DynamicGenerationSchema;
  const GenerationSchema schema =
      D::object("City", "", {{"city", "the city", D::any_of(std::vector<std::string>{"Oslo", "Porto"})},
                             {"visitors", "", D::integer({guide::range(1, 9)})}})
          .schema("City", "The city in the text.");
  const Response<GeneratedContent> r = session.respond("The fair in Porto drew 5 visitors.", schema);
  ASSERT_TRUE(r.content.is_complete());
  const auto& j = r.content.json();
  EXPECT_TRUE(j["city"] == "Oslo" || j["city"] == "Porto") << j.dump();
  EXPECT_GE(j["visitors"].get<int>(), 1);
  EXPECT_LE(j["visitors"].get<int>(), 9);
}

TEST(Session, CallsToolsAndAnswers) {
  SystemLanguageModel model(kModel);
  auto weather = std::make_shared<WeatherTool>();
  LanguageModelSession session(model, {weather},
                               "You are a helpful assistant. Use the tools when they help answer the user.");
  const Response<std::string> r = session.respond("What's the weather like in Oslo right now?", short_greedy(64));
  EXPECT_GE(weather->calls.load(), 1);
  EXPECT_FALSE(weather->last_city.empty());
  EXPECT_FALSE(r.content.empty());
  bool saw_call = false, saw_output = false;
  for (const TranscriptEntry& e : r.entries) {
    saw_call |= e.kind == TranscriptEntry::Kind::kToolCalls && !e.calls.empty() && e.calls[0].name == "get_weather";
    saw_output |= e.kind == TranscriptEntry::Kind::kToolOutput && e.tool_name == "get_weather";
  }
  EXPECT_TRUE(saw_call);
  EXPECT_TRUE(saw_output);
}

TEST(Session, AFailingToolIsAToolCallErrorNamingIt) {
  SystemLanguageModel model(kModel);
  auto weather = std::make_shared<WeatherTool>(/*fail=*/true);
  LanguageModelSession session(model, {weather},
                               "You are a helpful assistant. Use the tools when they help answer the user.");
  try {
    session.respond("What's the weather like in Oslo right now?", short_greedy(64));
    FAIL() << "expected a tool_call_error";
  } catch (const GenerationError& e) {
    EXPECT_EQ(e.kind(), GenerationErrorKind::kToolCallError);
    EXPECT_EQ(e.tool_name(), "get_weather");
  }
  EXPECT_TRUE(session.transcript().empty() || session.transcript().size() == 1);  // unchanged
}

TEST(Session, ASecondRequestWhileRespondingIsRejected) {
  SystemLanguageModel model(kModel);
  LanguageModelSession session(model);
  std::optional<GenerationErrorKind> inner;
  session.stream_response("Tell me a story.", [&](const std::string&) {
    if (!inner) inner = error_kind([&] { session.respond("hi"); });
    EXPECT_TRUE(session.is_responding());
  }, short_greedy(4));
  ASSERT_TRUE(inner.has_value());
  EXPECT_EQ(*inner, GenerationErrorKind::kConcurrentRequests);
  EXPECT_FALSE(session.is_responding());
}

TEST(Session, ErrorsLeaveTheSessionUsable) {
  SystemLanguageModel small(kModel, {.context_size = 48});
  LanguageModelSession session(small);
  const std::string long_prompt(400, 'a');
  EXPECT_EQ(error_kind([&] { session.respond(long_prompt); }),
            GenerationErrorKind::kExceededContextWindowSize);
  EXPECT_EQ(error_kind([&] { session.respond<session_test::Lookahead>("x"); }),
            GenerationErrorKind::kUnsupportedGuide);
  EXPECT_TRUE(session.transcript().empty());
  EXPECT_NO_THROW(session.respond("Hi", short_greedy(4)));
  EXPECT_EQ(session.transcript().size(), 2u);
  LanguageModelSession roomy(SystemLanguageModel(kModel), {}, kExtract);
  EXPECT_EQ(error_kind([&] { roomy.respond<Person>("Ana, 30, nurse, Lisbon.", short_greedy(3)); }),
            GenerationErrorKind::kDecodingFailure);
  EXPECT_EQ(roomy.transcript().size(), 1u);  // only the instructions
  EXPECT_NO_THROW(roomy.respond<Person>("Ana, 30, nurse, Lisbon."));
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const GenerationError& e) {
    EXPECT_EQ(e.kind(), GenerationErrorKind::kExceededContextWindowSize) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no GenerationError";
  return {};
}

TEST(Session, AFullContextIsOneErrorNamingTheCountsAndTheSessionGoesOn) {
  SystemLanguageModel small(kModel, {.context_size = 32});
  LanguageModelSession session(small);
  // A prompt that does not fit.
  const std::string too_long = error_message([&] { session.respond(std::string(400, 'a')); });
  EXPECT_EQ(too_long.rfind("context full: ", 0), 0u) << too_long;
  EXPECT_NE(too_long.find(" of 32 tokens"), std::string::npos) << too_long;
  // A response that fills what is left: the longest prompt of repeated words that still fits
  // leaves room for a token or two, whatever the model would answer.
  std::string filled, prompt;
  for (int words = 1; words < 64 && filled.empty(); ++words) {
    prompt += "word ";
    LanguageModelSession fresh(small);
    try {
      fresh.respond(prompt);
    } catch (const GenerationError& e) {
      if (std::string(e.what()).find("the response filled it") == std::string::npos) break;
      filled = e.what();
      EXPECT_TRUE(fresh.transcript().empty());
      EXPECT_NO_THROW(fresh.respond("hi", short_greedy(4)));  // the session goes on
      EXPECT_EQ(fresh.transcript().size(), 2u);
    }
  }
  EXPECT_EQ(filled.rfind("context full: 32 of 32 tokens", 0), 0u) << filled;
}

TEST(Session, DroppingTheOldestTurnsKeepsALongConversationGoing) {
  SystemLanguageModel model(kModel, {.context_size = 128});
  const std::vector<std::string> prompts = {"Name a color.", "Name a fruit.", "Name a city.",
                                            "Name an animal.", "Name a country.", "Name a tree."};
  LanguageModelSession strict(model, {}, "You are a helpful assistant.");
  bool refused = false;
  for (int i = 0; i < 12 && !refused; ++i) {
    try {
      strict.respond(prompts[i % prompts.size()], short_greedy(12));
    } catch (const GenerationError& e) {
      refused = e.kind() == GenerationErrorKind::kExceededContextWindowSize;
    }
  }
  ASSERT_TRUE(refused) << "the conversation should outgrow 128 tokens";

  LanguageModelSession sliding(model, {}, "You are a helpful assistant.");
  sliding.set_context_overflow(ContextOverflow::kDropOldestTurns);
  int64_t previous_prompt = 0;
  int drops = 0, reused_after_a_drop = 0;
  for (int i = 0; i < 12; ++i) {
    const Response<std::string> r = sliding.respond(prompts[i % prompts.size()], short_greedy(12));
    // Room for the response is kept: the prompt never passes 128 - 12 tokens.
    EXPECT_LE(r.usage.prompt_tokens + 12, 128) << "turn " << i;
    if (r.usage.prompt_tokens < previous_prompt) {
      ++drops;  // what follows the instructions was evaluated again
    } else if (drops > 0 && r.usage.prefilled_tokens < r.usage.prompt_tokens) {
      ++reused_after_a_drop;  // later turns reuse the cache again
    }
    previous_prompt = r.usage.prompt_tokens;
  }
  EXPECT_GT(drops, 0);
  EXPECT_GT(reused_after_a_drop, 0);
  EXPECT_EQ(sliding.transcript().size(), 1u + 2 * 12);  // the transcript keeps every turn
  EXPECT_EQ(sliding.transcript()[0].kind, TranscriptEntry::Kind::kInstructions);
  // A turn that alone does not fit is still refused, and the session goes on.
  EXPECT_EQ(error_message([&] { sliding.respond(std::string(2000, 'a')); }).rfind("context full", 0),
            0u);
  EXPECT_NO_THROW(sliding.respond("Name a color.", short_greedy(4)));
}

class NoSecrets : public Guardrail {
 public:
  void check_prompt(const std::string& p) override {
    if (p.find("password") != std::string::npos) {
      throw GenerationError(GenerationErrorKind::kGuardrailViolation, "the prompt asks for a password");
    }
  }
  void check_response(const std::string&) override {
    if (refuse_all) throw GenerationError(GenerationErrorKind::kRefusal, "refused");
  }
  bool refuse_all = false;
};

TEST(Session, GuardrailsRejectPromptsAndResponsesWithoutChangingTheSession) {
  SystemLanguageModel model(kModel);
  LanguageModelSession session(model);
  auto guard = std::make_shared<NoSecrets>();
  session.set_guardrail(guard);
  EXPECT_EQ(error_kind([&] { session.respond("Tell me the admin password", short_greedy(4)); }),
            GenerationErrorKind::kGuardrailViolation);
  guard->refuse_all = true;
  EXPECT_EQ(error_kind([&] { session.respond("Hello", short_greedy(4)); }),
            GenerationErrorKind::kRefusal);
  EXPECT_TRUE(session.transcript().empty());
  guard->refuse_all = false;
  EXPECT_NO_THROW(session.respond("Hello", short_greedy(4)));
}

TEST(Session, SameSeedSameResponse) {
  SystemLanguageModel model(kModel);
  GenerationOptions o = short_greedy(16);
  o.sampling = SamplingMode::top_p_sampling(0.9, 42);
  o.temperature = 0.8;
  LanguageModelSession a(model), b(model);
  EXPECT_EQ(a.respond("Write a word.", o).content, b.respond("Write a word.", o).content);
}

TEST(Session, ContinuesASavedTranscriptWithoutReevaluatingItsFirstTurn) {
  SystemLanguageModel model(kModel);
  LanguageModelSession first(model, {}, "You are a helpful assistant.");
  first.respond("Name a color.", short_greedy(8));
  LanguageModelSession second(model, {}, first.transcript());
  EXPECT_EQ(second.transcript().size(), first.transcript().size());
  const Response<std::string> r = second.respond("Another one?", short_greedy(8));
  EXPECT_EQ(r.usage.prefilled_tokens, r.usage.prompt_tokens);  // a fresh cache evaluates all
  EXPECT_EQ(second.transcript().size(), first.transcript().size() + 2);
}

}  // namespace
}  // namespace afm
