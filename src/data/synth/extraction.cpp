// (a) Structured extraction: prose about a person, event, payment, trip or order -> JSON.
#include <array>
#include <functional>

#include "data/synth/chat_format.h"
#include "data/synth/lexicon.h"
#include "data/synth/record_grammar.h"
#include "data/synth/tasks.h"
#include "data/synth/text_forms.h"

namespace afm::data::synth {
namespace {

struct Extraction {
  std::string name, description;
  Json schema;
  std::string text;
  Json answer;
};

// Draws happen in separate statements: the order in which operands of one expression are
// evaluated is unspecified, and the stream of draws must not depend on the compiler.
std::string full_name(SynthRng& rng) {
  const std::string first = draw_first_name(rng);
  const std::string last = draw_last_name(rng);
  return first + " " + last;
}

Json typed(std::string_view type, std::string_view description) {
  return Json{{"type", type}, {"description", description}};
}

Json plain(std::string_view type) { return Json{{"type", type}}; }

const Currency& random_currency(SynthRng& rng) {
  return rng.pick(std::span<const Currency>(kCurrencies));
}

Extraction person(SynthRng& rng) {
  const std::string name = full_name(rng);
  const int age = static_cast<int>(rng.range(19, 78));
  const std::string job = draw_occupation(rng);
  const City& city = rng.pick(cities());
  const std::string a = std::to_string(age);
  // An invented name keeps the picked city's country for the "based in C, Country" text.
  const std::string c = rng.invented_names_percent() > 0 ? draw_city_name(rng) : std::string(city.name);
  const std::array<std::string, 6> texts = {
      name + " is a " + a + "-year-old " + job + " who lives in " + c + ".",
      "Meet " + name + ", " + a + ", a " + job + " based in " + c + ", " +
          std::string(city.country) + ".",
      c + " resident " + name + " (" + a + ") has worked as a " + job + " for several years.",
      "At " + a + ", " + name + " still works full time as a " + job + " in " + c + ".",
      "Our new neighbour is " + name + ". " + name.substr(0, name.find(' ')) + " is " + a +
          ", works as a " + job + " and moved to " + c + " last spring.",
      "Profile: " + name + "; age " + a + "; occupation: " + job + "; home town: " + c + ".",
  };
  Json props = {{"name", typed("string", "full name")},
                {"age", typed("integer", "age in years")},
                {"city", typed("string", "city of residence")},
                {"occupation", typed("string", "job title")}};
  std::string text = texts[rng.below(texts.size())];
  if (rng.wide_phrasing()) text = person_text(rng, {name, job, c, age});
  return {"Person", "A person described in the text.", object_schema(props), text,
          Json{{"name", name}, {"age", age}, {"city", c}, {"occupation", job}}};
}

Extraction event(SynthRng& rng) {
  const std::string ev = draw_event_name(rng);
  const std::string c = draw_city_name(rng);
  const Date d = random_date(rng, 2023, 2027);
  const int people = static_cast<int>(rng.range(2, 400)) * 25;
  const std::string when = prose_date(d, static_cast<int>(rng.below(kDateStyles)));
  const std::string n = with_commas(people);
  const std::array<std::string, 5> texts = {
      "The " + ev + " will take place in " + c + " on " + when + ", with about " + n +
          " attendees expected.",
      "Organisers expect " + n + " visitors at this year's " + ev + ", held in " + c + " on " +
          when + ".",
      "Save the date: " + when + ". The " + ev + " returns to " + c + " and " + n +
          " tickets have already been sold.",
      c + " hosts the " + ev + " on " + when + "; roughly " + n + " people are registered.",
      "On " + when + ", " + n + " guests gathered in " + c + " for the annual " + ev + ".",
  };
  Json props = {{"event", typed("string", "name of the event")},
                {"city", plain("string")},
                {"date", typed("string", "ISO 8601 date, YYYY-MM-DD")},
                {"attendees", plain("integer")}};
  std::string text = texts[rng.below(texts.size())];
  if (rng.wide_phrasing()) text = event_text(rng, {ev, c, n, d});
  return {"Event", "An event mentioned in the text.", object_schema(props), text,
          Json{{"event", ev}, {"city", c}, {"date", iso_date(d)}, {"attendees", people}}};
}

Extraction payment(SynthRng& rng) {
  const std::string payer = full_name(rng);
  const std::string payee = draw_company(rng);
  const Currency& cur = random_currency(rng);
  // Half of the amounts are whole (5 to 5,000), half have cents (1.00 to 5,000.00).
  const int64_t cents = rng.percent(50) ? rng.range(5, 5000) * 100 : rng.range(100, 500000);
  const Date d = random_date(rng, 2022, 2026);
  const std::string amount = prose_money(cents, cur, static_cast<int>(rng.below(kMoneyStyles)));
  const std::string when = prose_date(d, static_cast<int>(rng.below(kDateStyles)));
  const std::array<std::string, 5> texts = {
      "On " + when + ", " + payer + " paid " + payee + " " + amount + ".",
      payee + " received a payment of " + amount + " from " + payer + " on " + when + ".",
      "Invoice settled: " + payer + " transferred " + amount + " to " + payee + " (" + when + ").",
      payer + " sent " + amount + " to " + payee + " on " + when +
          " to cover the outstanding balance.",
      "A transfer of " + amount + " from " + payer + " reached " + payee + " on " + when + ".",
  };
  Json currency = {{"type", "string"}, {"enum", Json::array()}};
  for (const Currency& c : kCurrencies) currency["enum"].push_back(c.code);
  Json props = {{"payer", typed("string", "who paid")},
                {"payee", typed("string", "who was paid")},
                {"amount", typed("number", "amount in the currency's main unit")},
                {"currency", currency},
                {"date", typed("string", "ISO 8601 date, YYYY-MM-DD")}};
  std::string text = texts[rng.below(texts.size())];
  if (rng.wide_phrasing()) text = payment_text(rng, {payer, payee, amount, d});
  return {"Payment", "A payment described in the text.", object_schema(props), text,
          Json{{"payer", payer},
               {"payee", payee},
               {"amount", to_number(cents)},
               {"currency", cur.code},
               {"date", iso_date(d)}}};
}

Extraction trip(SynthRng& rng) {
  const std::string who = full_name(rng);
  const std::vector<size_t> two = rng.distinct(cities().size(), 2);
  const std::string from(cities()[two[0]].name), to(cities()[two[1]].name);
  const Date d = random_date(rng, 2024, 2027);
  const int nights = static_cast<int>(rng.range(1, 21));
  const std::string when = prose_date(d, static_cast<int>(rng.below(kDateStyles)));
  const std::string n = std::to_string(nights) + (nights == 1 ? " night" : " nights");
  const std::array<std::string, 4> texts = {
      who + " flies from " + from + " to " + to + " on " + when + " and will stay " + n + ".",
      "Booking confirmed for " + who + ": " + from + " to " + to + ", departing " + when + ", " +
          n + " at the hotel.",
      "After " + n + " in " + to + ", " + who + " returns home to " + from +
          ". The outbound trip is on " + when + ".",
      "Travel request from " + who + ". Leaving " + from + " on " + when + " for " + to +
          "; accommodation needed for " + n + ".",
  };
  Json props = {{"traveler", plain("string")},
                {"origin", typed("string", "departure city")},
                {"destination", typed("string", "arrival city")},
                {"departure_date", typed("string", "ISO 8601 date, YYYY-MM-DD")},
                {"nights", typed("integer", "length of stay")}};
  return {"Trip", "A trip described in the text.", object_schema(props),
          texts[rng.below(texts.size())],
          Json{{"traveler", who},
               {"origin", from},
               {"destination", to},
               {"departure_date", iso_date(d)},
               {"nights", nights}}};
}

Extraction order(SynthRng& rng) {
  const std::string who = full_name(rng);
  const std::string item(rng.pick(shop_products()));
  const int qty = static_cast<int>(rng.range(1, 12));
  const int64_t whole = rng.range(2, 120);
  const int64_t unit = rng.percent(50) ? whole * 100 - 1 : whole * 100;  // $7.99 or $8
  const Currency& cur = kCurrencies[0];
  const std::string price = prose_money(unit, cur, 0);
  const std::string q = std::to_string(qty);
  const std::array<std::string, 4> texts = {
      who + " ordered " + q + " x " + item + " at " + price + " each.",
      "Order received from " + who + ": " + q + " units of the " + item + ", priced at " + price +
          " per unit.",
      "Please ship " + q + " of the " + item + " (" + price + " apiece) to " + who + ".",
      who + " would like " + q + " of the " + item + " for " + price + " each.",
  };
  Json props = {{"customer", plain("string")},
                {"item", plain("string")},
                {"quantity", plain("integer")},
                {"unit_price", typed("number", "price of one unit in USD")},
                {"total", typed("number", "quantity times unit price, in USD")}};
  return {"Order", "A purchase order described in the text.", object_schema(props),
          texts[rng.below(texts.size())],
          Json{{"customer", who},
               {"item", item},
               {"quantity", qty},
               {"unit_price", to_number(unit)},
               {"total", to_number(unit * qty)}}};
}

constexpr std::array<std::string_view, 4> kExtractionSystem = {
    "You are a careful assistant that extracts structured data from text.",
    "Extract information exactly as it is stated in the text. Answer with JSON only.",
    "You turn short texts into JSON records. Do not invent values.",
    "You are a data-entry assistant. Fill in every field from the text.",
};

constexpr std::array<std::string_view, 4> kAsk = {
    "Extract the details from the following text.\n\n",
    "Read this and fill in the fields:\n",
    "Turn the text below into a record.\n\nText: ",
    "",
};

}  // namespace

// The facts of a person record in shuffled order, each in one of several phrasings.
std::string person_facts(SynthRng& rng, const Json& answer) {
  const std::string name = answer["name"], job = answer["occupation"], city = answer["city"];
  const std::string age = std::to_string(answer["age"].get<int>());
  const std::array<std::array<std::string, 4>, 3> facts = {{
      {"aged " + age, age + " years old", "who is " + age, "age " + age},
      {"working as a " + job, "a " + job + " by trade", "employed as a " + job, "job: " + job},
      {"living in " + city, "from " + city, "based in " + city, "home town " + city},
  }};
  std::vector<size_t> order = rng.distinct(facts.size(), facts.size());
  std::string text = name;
  for (size_t i = 0; i < order.size(); ++i) {
    text += i == 0 ? ", " : (i + 1 == order.size() ? " and " : ", ");
    text += facts[order[i]][rng.below(4)];
  }
  return text + ".";
}

// A made-up label before the text or a distractor sentence after it: capitalised words that
// are not the answer, in places the fixed templates never put them.
// Real words that head a document; with the broad-variety knob they stand beside made-up
// labels, so a capitalised common word before a colon is not taken for a name either.
constexpr std::string_view kDocumentWords[] = {
    "Memo",     "Record",    "Entry",   "Summary",  "Report",     "Excerpt",  "Log",
    "Update",   "Notice",    "Message", "Clipping", "Transcript", "Bulletin", "Minutes",
    "Letter",   "Statement", "Draft",   "Snippet",  "Item",       "Case",     "Ticket",
    "Form",     "Archive",   "Journal", "Diary",    "Post",       "Email",    "Brief",
    "Digest",   "Column",    "Quote",   "Invoice",  "Profile",    "Listing",  "Announcement",
    "Reminder", "Dispatch"};
constexpr std::string_view kDepartments[] = {"Office",  "Branch", "Team",  "Desk",    "Accounts",
                                             "Records", "Travel", "Sales", "Payroll", "Events"};

std::string document_label(SynthRng& rng) {
  if (!rng.broad_variety()) return invented_word(rng);
  const std::string word(rng.pick(Words(kDocumentWords)));
  if (rng.percent(30)) return std::string(rng.pick(Words(kDepartments))) + " " + lower_case(word);
  return word;
}

std::string vary_text(SynthRng& rng, const Extraction& e) {
  std::string text = e.name == "Person" && rng.percent(50) ? person_facts(rng, e.answer) : e.text;
  const std::string label = document_label(rng);
  switch (rng.below(4)) {
    case 0:
      return label + ": " + text;
    case 1:
      return label + " file, entry " + std::to_string(rng.range(2, 999)) + ". " + text;
    case 2:
      return text + " (Source: " + label + ".)";
    default:
      return text;
  }
}

// Bounds and lengths on the schema's fields, always satisfied by the answer (the
// schema-constraints knob, synth_rng.h).
void add_constraints(SynthRng& rng, Extraction& e) {
  static constexpr int64_t kMaxima[] = {99,  100,  120,  130,   150,   200,    365,
                                        500, 1000, 9999, 10000, 50000, 100000, 1000000};
  for (auto& [key, property] : e.schema["properties"].items()) {
    const Json& value = e.answer[key];
    if (value.is_number() && rng.percent(70)) {
      std::vector<int64_t> fits;
      for (int64_t m : kMaxima) {
        if (value.get<double>() <= static_cast<double>(m)) fits.push_back(m);
      }
      if (rng.percent(60))
        property["minimum"] = rng.percent(50) ? 0 : (value.get<double>() >= 1 ? 1 : 0);
      if (!fits.empty()) property["maximum"] = fits[rng.below(fits.size())];
    } else if (value.is_string() && rng.percent(25)) {
      property["minLength"] = 1;
      if (rng.percent(50))
        property["maxLength"] = value.get<std::string>().size() + rng.range(20, 200);
    }
  }
}

// A subset of the fields (at least two) in shuffled order, the answer reordered to match;
// half of the time without descriptions (the schema-variation knob, synth_rng.h).
void vary_schema(SynthRng& rng, Extraction& e) {
  const Json& properties = e.schema["properties"];
  std::vector<std::string> keys;
  for (const auto& [key, value] : properties.items()) keys.push_back(key);
  const size_t keep = static_cast<size_t>(rng.range(2, static_cast<int64_t>(keys.size())));
  const bool plain_fields = rng.percent(50);
  Json kept = Json::object(), answer = Json::object();
  for (size_t i : rng.distinct(keys.size(), keep)) {
    Json field = properties[keys[i]];
    if (plain_fields) field.erase("description");
    kept[keys[i]] = field;
    answer[keys[i]] = e.answer[keys[i]];
  }
  e.schema = object_schema(kept);
  e.answer = answer;
}

Messages make_extraction(SynthRng& rng) {
  using Maker = Extraction (*)(SynthRng&);
  static constexpr std::array<Maker, 5> kMakers = {person, event, payment, trip, order};
  Extraction e = kMakers[rng.below(kMakers.size())](rng);
  const int vary = rng.varied_phrasing_percent();  // 0: no draw, the pretraining stream
  if (vary > 0 && rng.percent(vary)) e.text = vary_text(rng, e);
  if (rng.schema_variation()) vary_schema(rng, e);
  if (rng.schema_constraints()) add_constraints(rng, e);
  const std::string prompt = std::string(rng.pick(Words(kAsk))) + e.text;
  return {
      {"system", std::string(rng.pick(Words(kExtractionSystem)))},
      {"user", user_with_response_format(prompt, e.name, e.description, e.schema)},
      {"assistant", compact(e.answer)},
  };
}

}  // namespace afm::data::synth
