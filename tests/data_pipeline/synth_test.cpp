// Synthetic data: determinism, and every JSON answer checked against what the prompt shows.
#include "data/synth/synth.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "base/error.h"
#include "data/document_io.h"
#include "data/file_digest.h"
#include "data/synth/chat_format.h"
#include "data/synth/lexicon.h"
#include "data/synth/word_pieces.h"
#include "data_pipeline/test_util.h"

namespace afm::data::synth {
namespace {

using nlohmann::json;

// The JSON after `marker` up to the end of `text` (or up to `end` when given).
json json_after(const std::string& text, std::string_view marker, std::string_view end = {}) {
  const size_t at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker << " missing in: " << text;
  if (at == std::string::npos) return json();
  const size_t begin = at + marker.size();
  const size_t stop = end.empty() ? text.size() : text.find(end, begin);
  return json::parse(text.substr(begin, stop - begin));
}

// The subset of JSON Schema the generators emit: object, string (enum), integer, number.
void expect_matches(const json& value, const json& schema, const std::string& where) {
  const std::string type = schema.at("type");
  if (type == "object") {
    ASSERT_TRUE(value.is_object()) << where;
    for (const auto& key : schema.at("required")) {
      EXPECT_TRUE(value.contains(key.get<std::string>())) << where << " lacks " << key;
    }
    for (const auto& [key, v] : value.items()) {
      ASSERT_TRUE(schema.at("properties").contains(key)) << where << " has extra " << key;
      expect_matches(v, schema["properties"][key], where + "/" + key);
    }
  } else if (type == "string") {
    ASSERT_TRUE(value.is_string()) << where;
    if (schema.contains("enum")) {
      const auto& e = schema["enum"];
      EXPECT_NE(std::find(e.begin(), e.end(), value), e.end()) << where << " = " << value;
    }
    const size_t length = value.get<std::string>().size();  // bytes >= code points
    if (schema.contains("minLength")) EXPECT_GE(length, schema["minLength"].get<size_t>()) << where;
    if (schema.contains("maxLength")) EXPECT_LE(length, schema["maxLength"].get<size_t>()) << where;
  } else if (type == "integer" || type == "number") {
    EXPECT_TRUE(type == "number" ? value.is_number() : value.is_number_integer()) << where;
    if (schema.contains("minimum"))
      EXPECT_GE(value.get<double>(), schema["minimum"].get<double>()) << where;
    if (schema.contains("maximum"))
      EXPECT_LE(value.get<double>(), schema["maximum"].get<double>()) << where;
  } else {
    ADD_FAILURE() << where << ": unexpected schema type " << type;
  }
}

void check_tool_calls(const std::vector<ChatMessage>& m, const std::string& where) {
  ASSERT_GE(m.size(), 5u) << where;
  const json tools = json_after(m[0].content, kToolsMarker);
  const std::string open = std::string(kToolCallStartToken) + std::string(kToolCallBodyOpen);
  const std::string close = std::string(kToolCallBodyClose) + std::string(kToolCallEndToken);
  const json calls = json_after(m[2].content, open, close);
  EXPECT_EQ(m[2].content.substr(m[2].content.size() - close.size()), close);
  ASSERT_TRUE(calls.is_array() && !calls.empty()) << where;
  EXPECT_EQ(m.size(), 4 + calls.size()) << where;  // one tool turn per call
  for (const json& call : calls) {
    const json* declared = nullptr;
    for (const json& t : tools) {
      if (t["name"] == call["name"]) declared = &t;
    }
    ASSERT_NE(declared, nullptr) << where << ": " << call["name"] << " is not declared";
    expect_matches(call["arguments"], (*declared)["parameters"], where + " call");
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(m[3 + i].role, "tool");
    EXPECT_TRUE(json::accept(m[3 + i].content)) << where;
  }
  EXPECT_EQ(m.back().role, "assistant");
}

void check_example(const Example& e, const std::string& where) {
  const auto& m = e.messages;
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[1].role, "user");
  const bool has_format = m[1].content.find(kResponseFormatMarker) != std::string::npos;
  switch (e.task) {
    case Task::kExtraction:
      ASSERT_TRUE(has_format) << where;
      expect_matches(json::parse(m[2].content), json_after(m[1].content, "\nschema: "), where);
      break;
    case Task::kTools:
      check_tool_calls(m, where);
      break;
    case Task::kArithmetic:
      EXPECT_NE(m[2].content.find("\nThe answer is "), std::string::npos) << where;
      break;
    case Task::kClassification:
      if (has_format) {
        expect_matches(json::parse(m[2].content), json_after(m[1].content, "\nschema: "), where);
      } else {
        EXPECT_NE(m[1].content.find(m[2].content), std::string::npos) << where;  // listed label
      }
      break;
    case Task::kSmallTalk:  // answered in text, never by a tool call
      EXPECT_EQ(m.size(), 3u) << where;
      EXPECT_EQ(m[2].content.find(kToolCallStartToken), std::string::npos) << where;
      break;
  }
  const std::string text = render_example(e);
  EXPECT_EQ(text.rfind("<turn_start> system\n", 0), 0u) << where;
  EXPECT_EQ(text.substr(text.size() - 10), "<turn_end>");
}

TEST(Synth, EveryAnswerMatchesWhatThePromptShows) {
  const std::vector<Task> tasks = canonical_tasks({});
  std::map<Task, int> seen;
  for (uint64_t i = 0; i < 3000; ++i) {
    const Example e = make_example(7, i, tasks);
    ++seen[e.task];
    check_example(e, "example " + std::to_string(i));
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (Task t : kAllTasks) EXPECT_GT(seen[t], 600) << task_name(t);
}

TEST(Synth, SameSeedSameBytesOtherSeedOtherBytes) {
  const auto dir = afm::data::testing::fresh_dir("synth");
  auto make = [&](uint64_t seed, const std::string& name, std::vector<Task> tasks = {}) {
    SynthOptions o{seed, 300, (dir / name).string(), std::move(tasks)};
    write_synthetic(o);
    return afm::data::testing::read_text(dir / name);
  };
  const std::string a = make(1, "a.txt");
  EXPECT_EQ(a, make(1, "b.txt"));
  EXPECT_NE(a, make(2, "c.txt"));
  EXPECT_EQ(split_documents(a).size(), 300u);
  // The task set is canonicalised: order and repeats do not matter.
  EXPECT_EQ(make(3, "d.txt", {Task::kTools, Task::kArithmetic}),
            make(3, "e.txt", {Task::kArithmetic, Task::kTools, Task::kTools}));
}

TEST(Synth, TaskSubsetAndNames) {
  for (uint64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(make_example(5, i, {Task::kTools}).task, Task::kTools);
  }
  EXPECT_EQ(parse_task("classification"), Task::kClassification);
  EXPECT_EQ(parse_task("chat"), Task::kSmallTalk);
  int with_tools = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    const Example e = make_example(5, i, {Task::kSmallTalk});
    check_example(e, "chat " + std::to_string(i));
    with_tools += e.messages[0].content.find(kToolsMarker) != std::string::npos;
  }
  EXPECT_GT(with_tools, 60);  // tools on offer and still a text answer
  EXPECT_LT(with_tools, 180);
  try {
    parse_task("poetry");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("extraction, tools"), std::string::npos);
  }
}

// The digest of a fixed stream, so that a change to any generator, to the PRNG or to the
// platform's arithmetic shows up here. Update it deliberately when the data are meant to change
// (datasets made before the change are then no longer reproducible from their seed).
TEST(Synth, GoldenStream) {
  std::string text;
  for (uint64_t i = 0; i < 500; ++i)
    text += render_example(make_example(42, i, canonical_tasks({})));
  EXPECT_EQ(sha256_hex(text), "b511aafed66eed4ce49080a14296af8aa0af8144ca585e0d0120442ef1860892");
}

// Every "x + y = z" / "x - y = z" line of a worked answer is true, and the answer is the
// question's two numbers added or subtracted.
void check_bare_arithmetic(const Example& e, const std::string& where) {
  static const std::regex kStep(R"((\d+) ([+-]) (\d+)(?: ([+-]) (\d+))? = (\d+))");
  static const std::regex kNumbers(R"((\d+)\D+(\d+))");
  const std::string& reply = e.messages[2].content;
  int steps = 0;
  for (auto it = std::sregex_iterator(reply.begin(), reply.end(), kStep);
       it != std::sregex_iterator(); ++it, ++steps) {
    const std::smatch& m = *it;
    int64_t v = std::stoll(m[1]);
    v = m[2] == "+" ? v + std::stoll(m[3]) : v - std::stoll(m[3]);
    if (m[4].matched) v = m[4] == "+" ? v + std::stoll(m[5]) : v - std::stoll(m[5]);
    EXPECT_EQ(v, std::stoll(m[6])) << where << ": " << m[0] << " in " << reply;
  }
  EXPECT_EQ(steps, 3) << where << ": " << reply;  // units, tens, the whole
  std::smatch q;
  const std::string& question = e.messages[1].content;
  ASSERT_TRUE(std::regex_search(question, q, kNumbers)) << question;
  const int64_t a = std::stoll(q[1]), b = std::stoll(q[2]);
  const bool sum = reply.find(" + ") != std::string::npos;
  const int64_t want = sum ? a + b : a - b;
  EXPECT_NE(reply.find("\nThe answer is " + std::to_string(want) + "."), std::string::npos)
      << where << ": " << question << " -> " << reply;
}

TEST(SynthKnobs, BareArithmeticIsWorkedColumnByColumnAndRight) {
  int bare = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    const Example e = make_example(9, i, {Task::kArithmetic}, {.bare_arithmetic_percent = 100});
    const std::string& q = e.messages[1].content;
    ASSERT_TRUE(q.size() < 60) << "a word problem at 100%: " << q;
    check_bare_arithmetic(e, "example " + std::to_string(i));
    ++bare;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(bare, 2000);
  int mixed = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    mixed += make_example(9, i, {Task::kArithmetic}, {.bare_arithmetic_percent = 30})
                 .messages[1].content.size() < 60;
  }
  EXPECT_GT(mixed, 200);
  EXPECT_LT(mixed, 450);  // 30% bare, plus the odd short word problem
}

// Restated items: the first line is the question's two numbers as "a + b." or "a - b." (the
// larger first for a difference, whatever order the question names them in), and the column
// steps that follow are the ones of that expression.
TEST(SynthKnobs, RestatedArithmeticNamesTheExpressionFirstAndIsRight) {
  static const std::regex kNumbers(R"((\d+)\D+(\d+))");
  std::set<std::string> questions;
  for (uint64_t i = 0; i < 2000; ++i) {
    const Example e = make_example(
        11, i, {Task::kArithmetic},
        {.bare_arithmetic_percent = 100, .restated_arithmetic_percent = 100});
    const std::string& q = e.messages[1].content;
    const std::string& reply = e.messages[2].content;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(q, m, kNumbers)) << q;
    const int64_t x = std::stoll(m[1]), y = std::stoll(m[2]);
    const bool sum = reply.find(" + ") != std::string::npos;
    const std::string want = sum ? "" : std::to_string(std::max(x, y)) + " - " +
                                            std::to_string(std::min(x, y)) + ".\n";
    const std::string first = reply.substr(0, reply.find('\n') + 1);
    if (sum) {
      EXPECT_TRUE(first == std::to_string(x) + " + " + std::to_string(y) + ".\n" ||
                  first == std::to_string(y) + " + " + std::to_string(x) + ".\n")
          << q << " -> " << reply;
    } else {
      EXPECT_EQ(first, want) << q << " -> " << reply;
    }
    Example worked = e;  // the steps after the restated line, checked like a bare item
    worked.messages[2].content = reply.substr(first.size());
    worked.messages[1].content = first;
    check_bare_arithmetic(worked, "example " + std::to_string(i));
    questions.insert(std::regex_replace(q, std::regex(R"(\d+)"), "#").substr(0, 16));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(questions.size(), 24u);  // many phrasings, not the eight bare ones
}

TEST(SynthKnobs, InventedOccupationsAndEventsAreCopiedIntoTheRecords) {
  const std::set<std::string> jobs(occupations().begin(), occupations().end());
  const std::set<std::string> events(event_names().begin(), event_names().end());
  int invented_jobs = 0, invented_events = 0;
  for (uint64_t i = 0; i < 1500; ++i) {
    const Example e = make_example(4, i, {Task::kExtraction}, {.invented_names_percent = 100});
    check_example(e, "example " + std::to_string(i));
    const json record = json::parse(e.messages[2].content);
    for (const char* key : {"occupation", "event"}) {
      if (!record.contains(key)) continue;
      const std::string v = record[key];
      EXPECT_NE(e.messages[1].content.find(v), std::string::npos) << v << " not in the text";
      if (std::string(key) == "occupation") invented_jobs += !jobs.count(v);
      else invented_events += !events.count(v);
    }
  }
  EXPECT_GT(invented_jobs, 100);
  EXPECT_GT(invented_events, 100);
}

TEST(SynthKnobs, VariedPhrasingKeepsEveryCopiedValueInTheText) {
  static const std::regex kIsoDate(R"(\d{4}-\d{2}-\d{2})");
  static const std::regex kCode(R"([A-Z]{3})");
  int varied = 0;
  for (uint64_t i = 0; i < 1500; ++i) {
    const Example e = make_example(
        6, i, {Task::kExtraction},
        {.invented_names_percent = 100, .varied_phrasing_percent = 100});
    check_example(e, "example " + std::to_string(i));
    const std::string& text = e.messages[1].content;
    varied += text.find(" file, entry ") != std::string::npos ||
              text.find("(Source: ") != std::string::npos;
    const json answer = json::parse(e.messages[2].content);
    for (const auto& [key, v] : answer.items()) {
      if (!v.is_string()) continue;
      const std::string s = v;
      if (std::regex_match(s, kIsoDate) || std::regex_match(s, kCode)) continue;  // reformatted
      EXPECT_NE(text.find(s), std::string::npos) << key << " = " << s << " not in: " << text;
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(varied, 500);
}

TEST(SynthKnobs, BroadVarietyNamesAreCopiedWholeCharactersAndNotSyllablesOnly) {
  static const std::regex kIsoDate(R"(\d{4}-\d{2}-\d{2})");
  static const std::regex kCode(R"([A-Z]{3})");
  std::set<std::string> names;
  int labelled = 0, bounded = 0;
  for (uint64_t i = 0; i < 1500; ++i) {
    const Example e = make_example(7, i, {Task::kExtraction},
                                   {.invented_names_percent = 100,
                                    .varied_phrasing_percent = 100,
                                    .broad_variety_percent = 100,
                                    .schema_constraints_percent = 100});
    check_example(e, "example " + std::to_string(i));
    const std::string& text = e.messages[1].content;
    // Serialising throws on a name cut inside a UTF-8 sequence.
    EXPECT_NO_THROW((void)json(text).dump());
    bounded += text.find("\"maximum\":") != std::string::npos;
    labelled += text.find("Memo: ") != std::string::npos ||
                text.find("Report: ") != std::string::npos ||
                text.find(" file, entry ") != std::string::npos;
    const json answer = json::parse(e.messages[2].content);
    for (const auto& [key, v] : answer.items()) {
      if (!v.is_string()) continue;
      const std::string s = v;
      if (std::regex_match(s, kIsoDate) || std::regex_match(s, kCode)) continue;
      EXPECT_NE(text.find(s), std::string::npos) << key << " = " << s << " not in: " << text;
      if (key == "name") names.insert(s);
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(labelled, 50);
  EXPECT_GT(bounded, 300);  // check_example validated each answer against its bounds
  // Letters the syllable table never makes show up in the invented names.
  int wide = 0;
  for (const std::string& n : names) {
    wide += n.find_first_of("cjqwxh") != std::string::npos;
  }
  EXPECT_GT(wide, 100);
}

TEST(SynthKnobs, BroadVarietyToolRequestsVaryAndStillNameTheirArguments) {
  std::set<std::string> openings;
  for (uint64_t i = 0; i < 1000; ++i) {
    const Example e = make_example(8, i, {Task::kTools}, {.broad_variety_percent = 100});
    check_example(e, "example " + std::to_string(i));
    const std::string& request = e.messages[1].content;
    openings.insert(request.substr(0, request.find(' ')));
    static const std::regex kCity(R"re("city":"([^"]+)")re");
    const std::string& calls = e.messages[2].content;
    for (std::sregex_iterator m(calls.begin(), calls.end(), kCity), end; m != end; ++m) {
      EXPECT_NE(request.find((*m)[1].str()), std::string::npos) << request;
    }
  }
  EXPECT_GT(openings.size(), 25u);
}

// Wide phrasing (request_grammar.h): composed sums and differences restate the expression
// with the minuend first whatever the sentence's word order, and the steps are right.
TEST(SynthKnobs, WidePhrasingArithmeticRestatesTheExpressionAndIsRight) {
  static const std::regex kNumbers(R"((\d+)\D+(\d+))");
  std::set<std::string> shapes;
  for (uint64_t i = 0; i < 2000; ++i) {
    const Example e = make_example(
        12, i, {Task::kArithmetic}, {.bare_arithmetic_percent = 100, .wide_phrasing_percent = 100});
    const std::string& q = e.messages[1].content;
    const std::string& reply = e.messages[2].content;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(q, m, kNumbers)) << q;
    const int64_t x = std::stoll(m[1]), y = std::stoll(m[2]);
    const std::string first = reply.substr(0, reply.find('\n') + 1);
    const bool sum = first.find(" + ") != std::string::npos;
    const std::string big = std::to_string(std::max(x, y)), small = std::to_string(std::min(x, y));
    if (sum) {
      EXPECT_TRUE(first == std::to_string(x) + " + " + std::to_string(y) + ".\n" ||
                  first == std::to_string(y) + " + " + std::to_string(x) + ".\n")
          << q << " -> " << reply;
    } else {
      EXPECT_EQ(first, big + " - " + small + ".\n") << q << " -> " << reply;
    }
    Example worked = e;
    worked.messages[2].content = reply.substr(first.size());
    worked.messages[1].content = first;
    check_bare_arithmetic(worked, "example " + std::to_string(i));
    shapes.insert(std::regex_replace(q, std::regex(R"(\d+)"), "#"));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(shapes.size(), 500u);  // composed, not a list of a few dozen sentences
}

// Composed tool requests name every argument the call carries: the city, the calculation's
// operands, the date's day and year, the amount's currency and the conversion's value.
TEST(SynthKnobs, WidePhrasingToolRequestsNameTheirArguments) {
  std::set<std::string> shapes;
  for (uint64_t i = 0; i < 3000; ++i) {
    const Example e = make_example(13, i, {Task::kTools}, {.wide_phrasing_percent = 100});
    const std::string where = "example " + std::to_string(i);
    check_example(e, where);
    if (::testing::Test::HasFatalFailure()) return;
    const std::string& request = e.messages[1].content;
    const std::string open = std::string(kToolCallStartToken) + std::string(kToolCallBodyOpen);
    const std::string close = std::string(kToolCallBodyClose) + std::string(kToolCallEndToken);
    const json call = json_after(e.messages[2].content, open, close)[0];
    const json& args = call["arguments"];
    const std::string name = call["name"];
    std::string digits_of_request;
    for (char c : request) {
      if (c >= '0' && c <= '9') digits_of_request += c;
    }
    if (name == "get_weather") {
      EXPECT_NE(request.find(args["city"].get<std::string>()), std::string::npos) << request;
    } else if (name == "calculate") {
      static const std::regex kOperands(R"((\d+) [-+*/] (\d+))");
      const std::string expr = args["expression"];
      std::smatch m;
      ASSERT_TRUE(std::regex_match(expr, m, kOperands)) << expr;
      EXPECT_NE(digits_of_request.find(m[1].str()), std::string::npos) << request << " " << expr;
      EXPECT_NE(digits_of_request.find(m[2].str()), std::string::npos) << request << " " << expr;
    } else if (name == "get_calendar_events") {
      const std::string date = args["date"];  // YYYY-MM-DD
      EXPECT_NE(request.find(date.substr(0, 4)), std::string::npos) << request;
      EXPECT_NE(request.find(std::to_string(std::stoi(date.substr(8)))), std::string::npos)
          << request;
    } else if (name == "get_exchange_rate") {
      EXPECT_NE(args["base"], args["quote"]);
    } else if (name == "convert_units") {
      const std::string value = args["value"].dump();
      EXPECT_NE(request.find(value), std::string::npos) << request << " " << value;
    }
    shapes.insert(name + ":" + std::regex_replace(request, std::regex(R"(\d+)"), "#"));
  }
  EXPECT_GT(shapes.size(), 1000u);
}

// Composed extraction texts (record_grammar.h) carry every copied value verbatim, the day and
// year of the date, and the number fields with or without thousands separators.
TEST(SynthKnobs, WidePhrasingRecordsKeepEveryValueInTheText) {
  static const std::regex kIsoDate(R"((\d{4})-(\d{2})-(\d{2}))");
  static const std::regex kCode(R"([A-Z]{3})");
  std::set<std::string> shapes;
  for (uint64_t i = 0; i < 3000; ++i) {
    const Example e = make_example(14, i, {Task::kExtraction},
                                   {.invented_names_percent = 70, .wide_phrasing_percent = 100});
    check_example(e, "example " + std::to_string(i));
    const std::string& text = e.messages[1].content;
    std::string digits;
    for (char c : text) {
      if (c >= '0' && c <= '9') digits += c;
    }
    const json answer = json::parse(e.messages[2].content);
    for (const auto& [key, v] : answer.items()) {
      std::smatch date;
      if (key == "total") continue;  // an order's total is computed, not stated
      if (v.is_number_integer()) {
        EXPECT_NE(digits.find(std::to_string(v.get<int64_t>())), std::string::npos)
            << key << " not in: " << text;
      } else if (!v.is_string() || std::regex_match(v.get_ref<const std::string&>(), kCode)) {
        continue;
      } else if (const std::string& s = v; std::regex_match(s, date, kIsoDate)) {
        EXPECT_NE(text.find(date[1].str()), std::string::npos) << s << " not in: " << text;
        EXPECT_NE(text.find(std::to_string(std::stoi(date[3].str()))), std::string::npos)
            << s << " not in: " << text;
      } else {
        EXPECT_NE(text.find(s), std::string::npos) << key << " = " << s << " not in: " << text;
      }
    }
    shapes.insert(text.substr(0, text.find(' ')));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(shapes.size(), 200u);  // first words vary: names, leads, dates, counts
}

// Varied schemas ask for a subset of the fields in shuffled order; the answer has exactly the
// schema's fields in the schema's order.
TEST(SynthKnobs, SchemaVariationAnswersFollowTheSchemasFieldsAndOrder) {
  std::set<std::string> orders;
  for (uint64_t i = 0; i < 2000; ++i) {
    const Example e = make_example(15, i, {Task::kExtraction}, {.schema_variation_percent = 100});
    check_example(e, "example " + std::to_string(i));
    const json schema = json_after(e.messages[1].content, "\nschema: ");
    const nlohmann::ordered_json answer = nlohmann::ordered_json::parse(e.messages[2].content);
    std::vector<std::string> wanted, got;
    for (const auto& key : schema["required"]) wanted.push_back(key);
    for (const auto& [key, value] : answer.items()) got.push_back(key);
    EXPECT_EQ(got, wanted) << e.messages[2].content;
    EXPECT_GE(got.size(), 2u);
    std::string order;
    for (const std::string& k : got) order += k + ",";
    orders.insert(order);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(orders.size(), 100u);
}

// A vocabulary of the shape of a byte-level BPE one: space-led word starts, bare pieces, and
// tokens that are neither (digits, capitals inside, punctuation, one letter).
std::vector<std::string> toy_vocabulary() {
  std::vector<std::string> v = {" USA", " x",       " 12",      "Way",     "ab1",
                                " McK", "\"",      " extraordinarily", " Because", " because",
                                " Abraham"};
  for (char a = 'a'; a <= 'z'; ++a) {
    for (char b = 'a'; b <= 'z'; ++b) {
      v.push_back(std::string(" ") + a + b);                                       // " pe"
      v.push_back(std::string(" ") + static_cast<char>(a - 'a' + 'A') + b + "o");  // " Peo"
      v.push_back(std::string() + a + b);                                          // "pe"
    }
  }
  return v;
}

TEST(SpelledNames, WordPiecesKeepSpaceLedWordStartsAndBareLowerCasePieces) {
  const std::vector<std::string> vocab = toy_vocabulary();
  const WordPieces p = word_pieces_from_tokens(vocab);
  EXPECT_EQ(p.capitalised_starts.size(), 26u * 26u + 1);  // + "Abraham"
  EXPECT_EQ(p.lower_starts.size(), 26u * 26u + 1);        // + "because"
  EXPECT_EQ(p.continuations.size(), 26u * 26u);
  const auto has = [](const std::vector<std::string>& list, const std::string& s) {
    return std::binary_search(list.begin(), list.end(), s);
  };
  EXPECT_TRUE(has(p.lower_starts, "pe"));
  EXPECT_TRUE(has(p.capitalised_starts, "Peo"));
  EXPECT_TRUE(has(p.capitalised_starts, "Abraham"));
  EXPECT_FALSE(has(p.capitalised_starts, "Because"));  // an English word at a sentence start
  for (const char* no : {"USA", "x", "12", "McK", "extraordinarily"}) {
    EXPECT_FALSE(has(p.capitalised_starts, no) || has(p.lower_starts, no)) << no;
  }
  for (const char* no : {"Way", "ab1", "\""}) EXPECT_FALSE(has(p.continuations, no));
  EXPECT_TRUE(std::is_sorted(p.capitalised_starts.begin(), p.capitalised_starts.end()));
}

TEST(SpelledNames, AVocabularyWithoutWordsIsATypedError) {
  const std::vector<std::string> bytes = {" a", "b", "\x01"};
  try {
    (void)word_pieces_from_tokens(bytes);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("word starts"), std::string::npos) << e.what();
  }
}

// The longest start in `starts` that `word` begins with (empty when none).
std::string start_of(const std::string& word, const std::vector<std::string>& starts) {
  for (size_t n = std::min<size_t>(word.size(), 12); n >= 2; --n) {
    if (word.size() >= n && std::binary_search(starts.begin(), starts.end(), word.substr(0, n))) {
      return word.substr(0, n);
    }
  }
  return {};
}

TEST(SpelledNames, NamesAndJobsBeginWithEveryWordStartOfTheirCaseAndAreCopied) {
  auto pieces = std::make_shared<const WordPieces>(word_pieces_from_tokens(toy_vocabulary()));
  SynthKnobs knobs{.invented_names_percent = 100, .spelled_names_percent = 100};
  knobs.word_pieces = pieces;
  std::set<std::string> names_seen, jobs_seen;
  for (uint64_t i = 0; i < 3000; ++i) {
    const Example e = make_example(9, i, {Task::kExtraction}, knobs);
    check_example(e, "example " + std::to_string(i));
    const std::string& text = e.messages[1].content;
    const json answer = json::parse(e.messages[2].content);
    for (const auto& [key, v] : answer.items()) {
      static const std::set<std::string> kNamed = {"name", "city", "payer", "payee", "occupation", "event"};
      if (!v.is_string() || !kNamed.count(key)) continue;
      const std::string s = v;
      EXPECT_NE(text.find(s), std::string::npos) << key << " = " << s << " not in: " << text;
      const std::string word = s.substr(0, s.find(' '));
      EXPECT_GE(word.size(), 4u) << s;
      const bool job = key == "occupation" || key == "event";
      const std::string start = start_of(word, job ? pieces->lower_starts : pieces->capitalised_starts);
      EXPECT_FALSE(start.empty()) << key << " = " << s;
      (job ? jobs_seen : names_seen).insert(start);
    }
    if (::testing::Test::HasFailure()) return;
  }
  // Uniform picks: most of the 676 starts of each case begin some value in 3,000 records.
  EXPECT_GT(names_seen.size(), 600u);
  EXPECT_GT(jobs_seen.size(), 400u);
}

TEST(SpelledNames, TheKnobAtZeroLeavesTheStreamAsItWas) {
  auto pieces = std::make_shared<const WordPieces>(word_pieces_from_tokens(toy_vocabulary()));
  SynthKnobs with{.invented_names_percent = 70, .broad_variety_percent = 60};
  with.word_pieces = pieces;
  const SynthKnobs without{.invented_names_percent = 70, .broad_variety_percent = 60};
  for (uint64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(make_example(3, i, {Task::kExtraction}, with).messages[2].content,
              make_example(3, i, {Task::kExtraction}, without).messages[2].content);
  }
}

}  // namespace
}  // namespace afm::data::synth
