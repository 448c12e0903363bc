// The clause grammar of record_grammar.h: clause lists per fact, then one composer per record.
#include "data/synth/record_grammar.h"

#include <array>
#include <vector>

#include "data/synth/lexicon.h"
#include "data/synth/request_grammar.h"

namespace afm::data::synth {
namespace {

std::string with_article(const std::string& noun) {
  const char c = noun.empty() ? 'x' : noun[0];
  const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
  return (vowel ? "an " : "a ") + noun;
}

std::string first_word(const std::string& name) { return name.substr(0, name.find(' ')); }

// Clauses in shuffled order joined as "x, y and z".
std::string joined_clauses(SynthRng& rng, std::vector<std::string> clauses) {
  const std::vector<size_t> order = rng.distinct(clauses.size(), clauses.size());
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    out += i == 0 ? "" : i + 1 == order.size() ? " and " : ", ";
    out += clauses[order[i]];
  }
  return out;
}

// ---- person ----------------------------------------------------------------------------------
// {a} age, {j} job with its article, {c} city.
constexpr std::array<std::string_view, 7> kAgeClauses = {
    "is {a}", "is {a} years old", "turned {a} this year", "is aged {a}", "is now {a}",
    "recently turned {a}", "gives {a} as their age"};
constexpr std::array<std::string_view, 7> kJobClauses = {
    "works as {j}", "is {j}", "is employed as {j}", "trained as {j}", "has a post as {j}",
    "took a position as {j}", "earns money as {j}"};
constexpr std::array<std::string_view, 8> kCityClauses = {
    "lives in {c}", "is based in {c}", "moved to {c}", "has a flat in {c}", "resides in {c}",
    "calls {c} home", "settled in {c}", "rents a house in {c}"};
// Field names of a form-like record, one list per fact (name, age, job, city).
constexpr std::array<std::array<std::string_view, 3>, 4> kFormKeys = {{
    {"Name", "Full name", "Person"},
    {"Age", "Years", "Age (years)"},
    {"Job", "Occupation", "Profession"},
    {"City", "Town", "Residence"},
}};
constexpr std::array<std::string_view, 4> kFormSeparators = {". ", "; ", " | ", "\n"};

std::string person_form(SynthRng& rng, const PersonFacts& p) {
  const std::array<std::string, 4> values = {p.name, std::to_string(p.age), p.occupation, p.city};
  const std::string_view separator = rng.pick(Words(kFormSeparators));
  std::string out;
  for (size_t i : rng.distinct(4, 4)) {
    if (!out.empty()) out += separator;
    out += std::string(kFormKeys[i][rng.below(3)]) + ": " + values[i];
  }
  return out + (separator == ". " ? "." : "");
}

}  // namespace

std::string person_text(SynthRng& rng, const PersonFacts& p) {
  const std::string a = std::to_string(p.age), j = with_article(p.occupation);
  const auto clause = [&](Words list) {
    return fill_slots(rng.pick(list), {{"a", a}, {"j", j}, {"c", p.city}});
  };
  switch (rng.below(8)) {
    case 0: {
      const std::string age = clause(Words(kAgeClauses));
      const std::string job = clause(Words(kJobClauses));
      const std::string city = clause(Words(kCityClauses));
      return p.name + " " + joined_clauses(rng, {age, job, city}) + ".";
    }
    case 1: {
      const std::string age = clause(Words(kAgeClauses));
      const std::string job = clause(Words(kJobClauses));
      const std::string city = clause(Words(kCityClauses));
      return p.name + " " + age + ". " + first_word(p.name) + " " +
             joined_clauses(rng, {job, city}) + ".";
    }
    case 2: {
      const std::string job = clause(Words(kJobClauses));
      const std::string city = clause(Words(kCityClauses));
      return p.name + ", " + a + ", " + joined_clauses(rng, {job, city}) + ".";
    }
    case 3: {
      const std::string city = clause(Words(kCityClauses));
      return "Local " + p.occupation + " " + p.name + " (" + a + ") " + city + ".";
    }
    case 4: {
      const std::string job = clause(Words(kJobClauses));
      return "In " + p.city + ", " + p.name + ", aged " + a + ", " + job + ".";
    }
    case 5:
      return "\"My name is " + p.name + ",\" says the " + a + "-year-old " + p.occupation +
             " from " + p.city + ".";
    case 6: {
      const std::string age = clause(Words(kAgeClauses));
      return "The " + p.occupation + " we spoke to in " + p.city + " is " + p.name + ", who " +
             age + ".";
    }
    default:
      return person_form(rng, p);
  }
}

// ---- payment ---------------------------------------------------------------------------------

namespace {
// {p} payer, {q} payee, {m} amount. The payer is not always first: a model must read the verb.
constexpr std::array<std::string_view, 16> kPaymentClauses = {
    "{p} paid {q} {m}",
    "{p} paid {m} to {q}",
    "{p} sent {m} to {q}",
    "{p} transferred {m} to {q}",
    "{p} made a payment of {m} to {q}",
    "{p} settled an invoice from {q} for {m}",
    "{p} remitted {m} to {q}",
    "{p} handed over {m} to {q}",
    "{q} received {m} from {p}",
    "{q} got {m} from {p}",
    "{q} collected {m} from {p}",
    "{q} was sent {m} by {p}",
    "{q} took a payment of {m} from {p}",
    "{q} has been credited with {m} from {p}",
    "a payment of {m} went from {p} to {q}",
    "{m} was transferred by {p} to {q}"};
constexpr std::array<std::string_view, 6> kPaymentLeads = {
    "", "", "According to the ledger, ", "Records show that ", "Confirmed: ", "Bank statement: "};
}  // namespace

std::string payment_text(SynthRng& rng, const PaymentFacts& p) {
  const std::string core = fill_slots(rng.pick(Words(kPaymentClauses)),
                                      {{"p", p.payer}, {"q", p.payee}, {"m", p.amount}});
  const std::string lead(rng.pick(Words(kPaymentLeads)));
  const std::string when = spelled_date(rng, p.date);
  switch (rng.below(4)) {
    case 0:  // the lead, if any, before the date: "Records show that on 5 May, ..."
      return lead.empty() ? "On " + when + ", " + core + "."
                          : lead + "on " + when + ", " + core + ".";
    case 1: return capitalised(lead + core) + " on " + when + ".";
    case 2: return capitalised(lead + core) + ". The date was " + when + ".";
    default: return capitalised(lead + core) + " (" + when + ").";
  }
}

// ---- event -----------------------------------------------------------------------------------

namespace {
// {e} event, {c} city, {d} date, {k} count with its noun.
constexpr std::array<std::string_view, 12> kEventFrames = {
    "The {e} in {c} on {d} drew {k}.",
    "{k} attended the {e} in {c} on {d}.",
    "{c} will host the {e} on {d}; {k} have signed up.",
    "On {d}, the {e} opened in {c} with {k}.",
    "Around {k} are expected when the {e} comes to {c} on {d}.",
    "This year's {e} is set for {d} in {c}, and {k} have booked.",
    "The organisers of the {e} report {k} for {d} in {c}.",
    "Held in {c} on {d}, the {e} welcomed {k}.",
    "Event: {e}; {c}, {d}, {k}.",
    "Expect {k} in {c} for the {e} on {d}.",
    "The {e} moves to {c} this time. It starts on {d} and {k} are coming.",
    "Last count for the {e} ({d}, {c}): {k}."};
constexpr std::array<std::string_view, 7> kCrowdNouns = {
    "visitors", "guests", "people", "participants", "attendees", "spectators", "fans"};
}  // namespace

std::string event_text(SynthRng& rng, const EventFacts& e) {
  const std::string crowd = e.attendees + " " + std::string(rng.pick(Words(kCrowdNouns)));
  const std::string when = spelled_date(rng, e.date);
  // Frames that start with the count or the city start with a digit or a capital already; no
  // frame starts with the event's name, which is lower case and copied verbatim.
  return fill_slots(rng.pick(Words(kEventFrames)),
                    {{"e", e.event}, {"c", e.city}, {"d", when}, {"k", crowd}});
}

}  // namespace afm::data::synth
