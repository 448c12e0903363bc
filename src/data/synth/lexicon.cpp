#include "data/synth/lexicon.h"

#include <array>
#include <vector>

#include "data/synth/synth_rng.h"
#include "data/synth/word_pieces.h"

namespace afm::data::synth {
namespace {

constexpr std::array<std::string_view, 48> kFirstNames = {
    "Olivia", "Liam",   "Amara",  "Noah",  "Sofia", "Mateo",  "Yuki",   "Arjun",  "Chloe", "Ethan",
    "Fatima", "Lucas",  "Mei",    "Omar",  "Priya", "Diego",  "Hannah", "Kwame",  "Elena", "Samuel",
    "Aisha",  "Jonas",  "Ingrid", "Tomás", "Leila", "Victor", "Nadia",  "Hugo",   "Zara",  "Felix",
    "Anika",  "Marcus", "Grace",  "Ravi",  "Clara", "Kenji",  "Lucia",  "Daniel", "Maya",  "Oscar",
    "Ruth",   "Emil",   "Selin",  "Andre", "Tara",  "Pablo",  "Nora",   "Idris"};

constexpr std::array<std::string_view, 40> kLastNames = {
    "Garcia",    "Smith",    "Okafor", "Tanaka",    "Müller", "Rossi",   "Novak",   "Haddad",
    "Johansson", "Patel",    "Kim",    "Moreau",    "Silva",  "Cohen",   "Ivanova", "Nguyen",
    "Brown",     "Kowalski", "Mensah", "Lindqvist", "Costa",  "Fischer", "Dubois",  "Yilmaz",
    "Andersen",  "Reyes",    "Wright", "Sato",      "Hughes", "Popescu", "Bianchi", "Clarke",
    "Adeyemi",   "Larsen",   "Romero", "Chen",      "Walsh",  "Horvat",  "Bakker",  "Ortiz"};

constexpr std::array<City, 40> kCities = {{
    {"Lyon", "France"},
    {"Oslo", "Norway"},
    {"Nairobi", "Kenya"},
    {"Osaka", "Japan"},
    {"Toronto", "Canada"},
    {"Lisbon", "Portugal"},
    {"Krakow", "Poland"},
    {"Austin", "United States"},
    {"Melbourne", "Australia"},
    {"Seville", "Spain"},
    {"Porto Alegre", "Brazil"},
    {"Edinburgh", "United Kingdom"},
    {"Munich", "Germany"},
    {"Bologna", "Italy"},
    {"Accra", "Ghana"},
    {"Pune", "India"},
    {"Busan", "South Korea"},
    {"Valparaíso", "Chile"},
    {"Tallinn", "Estonia"},
    {"Cork", "Ireland"},
    {"Gothenburg", "Sweden"},
    {"Utrecht", "Netherlands"},
    {"Quebec City", "Canada"},
    {"Marrakesh", "Morocco"},
    {"Hanoi", "Vietnam"},
    {"Auckland", "New Zealand"},
    {"Denver", "United States"},
    {"Izmir", "Turkey"},
    {"Bergen", "Norway"},
    {"Ghent", "Belgium"},
    {"Cusco", "Peru"},
    {"Zurich", "Switzerland"},
    {"Cape Town", "South Africa"},
    {"Kyoto", "Japan"},
    {"Montevideo", "Uruguay"},
    {"Dublin", "Ireland"},
    {"Seattle", "United States"},
    {"Vienna", "Austria"},
    {"Helsinki", "Finland"},
    {"Guadalajara", "Mexico"},
}};

constexpr std::array<std::string_view, 30> kOccupations = {
    "nurse",           "software engineer", "teacher",
    "architect",       "pharmacist",        "carpenter",
    "journalist",      "accountant",        "chef",
    "electrician",     "veterinarian",      "librarian",
    "pilot",           "photographer",      "dentist",
    "translator",      "civil engineer",    "baker",
    "economist",       "firefighter",       "data analyst",
    "physiotherapist", "graphic designer",  "lawyer",
    "mechanic",        "biologist",         "social worker",
    "musician",        "tour guide",        "florist"};

constexpr std::array<std::string_view, 20> kCompanies = {
    "Northwind Traders", "Bluefin Logistics", "Acorn Robotics",  "Harbor Health",
    "Juniper Foods",     "Summit Analytics",  "Redwood Energy",  "Pinecone Games",
    "Silverline Rail",   "Orchid Pharma",     "Granite Bank",    "Lumen Optics",
    "Maple Insurance",   "Cobalt Motors",     "Willow Textiles", "Falcon Airways",
    "Quartz Software",   "Meadow Dairy",      "Beacon Media",    "Atlas Construction"};

constexpr std::array<std::string_view, 20> kEvents = {
    "jazz festival",        "science fair",         "book launch",    "charity run",
    "film festival",        "robotics competition", "farmers market", "chess tournament",
    "photography workshop", "developer conference", "wine tasting",   "marathon",
    "art exhibition",       "startup pitch night",  "choir concert",  "food truck rally",
    "design summit",        "poetry reading",       "trade fair",     "open-air cinema night"};

constexpr std::array<std::string_view, 16> kItems = {
    "apples",    "marbles", "stickers", "pencils",  "books",   "cookies", "stamps", "coins",
    "seashells", "cards",   "balloons", "cupcakes", "buttons", "crayons", "eggs",   "oranges"};

constexpr std::array<std::string_view, 16> kProducts = {
    "notebook", "coffee mug", "T-shirt",  "water bottle", "backpack", "umbrella",
    "lamp",     "scarf",      "puzzle",   "board game",   "candle",   "phone charger",
    "teapot",   "desk plant", "cookbook", "pair of socks"};

}  // namespace

Words first_names() { return kFirstNames; }
Words last_names() { return kLastNames; }
std::span<const City> cities() { return kCities; }
Words occupations() { return kOccupations; }
Words companies() { return kCompanies; }
Words event_names() { return kEvents; }
Words countable_items() { return kItems; }
Words shop_products() { return kProducts; }

namespace {

constexpr std::string_view kOnsets[] = {"b", "br", "d", "dr", "f", "g", "k", "kl", "l", "m",
                                        "n", "p", "r", "s", "st", "t", "tr", "v", "z", "sh"};
constexpr std::string_view kVowels[] = {"a", "e", "i", "o", "u", "ai", "ia", "y"};
constexpr std::string_view kCodas[] = {"", "", "", "n", "r", "l", "s", "k", "m", "th"};
constexpr std::string_view kCompanySuffixes[] = {"Labs", "Systems", "Works", "Trading",
                                                 "Partners", "Supplies", "Studio", "Foods"};

struct SyllableTable {
  Words onsets, vowels, codas;
};

// lo..hi syllables of onset + vowel + coda, lower case (the draws: the count, then three per
// syllable).
std::string syllables(SynthRng& rng, const SyllableTable& t, int64_t lo, int64_t hi) {
  std::string w;
  const int64_t count = rng.range(lo, hi);
  for (int64_t i = 0; i < count; ++i) {
    w += rng.pick(t.onsets);
    w += rng.pick(t.vowels);
    w += rng.pick(t.codas);
  }
  return w;
}

std::string capitalised(std::string w) {
  if (!w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 'a' + 'A');
  return w;
}

std::string made_up_word(SynthRng& rng) {
  return capitalised(syllables(rng, {kOnsets, kVowels, kCodas}, 2, 3));
}

bool invent(SynthRng& rng) {
  return rng.invented_names_percent() > 0 && rng.percent(rng.invented_names_percent());
}

// The broader inventory: every letter, doubled consonants and clusters that the syllable
// table above never makes ("Quillbright", "Oxwenna").
constexpr std::string_view kWideOnsets[] = {
    "b",  "c", "ch", "d",  "f",  "g",  "gr", "h", "j",  "k", "kn", "l",  "m", "n", "p", "ph", "pl",
    "qu", "r", "s",  "sc", "sk", "sl", "sw", "t", "th", "v", "w",  "wr", "x", "y", "z", "",   ""};
constexpr std::string_view kWideVowels[] = {"a",  "e",  "i",  "o",  "u", "ae", "ea", "ee",
                                            "ei", "ie", "oo", "ou", "y", "au", "oe"};
constexpr std::string_view kWideCodas[] = {"",   "",   "b",  "ck", "d",  "ff", "g",
                                           "ll", "lt", "m",  "nd", "ng", "p",  "rn",
                                           "rt", "sz", "tz", "w",  "x",  "z"};

std::string wide_word(SynthRng& rng) {
  std::string w = syllables(rng, {kWideOnsets, kWideVowels, kWideCodas}, 1, 3);
  if (w.size() < 3) {  // too short to read as a name: pad it ("Ae" -> "Aeon")
    const bool empty_onset = rng.pick(Words(kWideOnsets)).empty();
    w += empty_onset ? "on" : "ek";
  }
  return capitalised(w);
}

// The start of one listed word joined to the end of another ("Marg" + "ulescu"): names that
// look real but that no list holds, so they can only be copied.
std::string spliced_word(SynthRng& rng, std::span<const std::string_view> list) {
  const std::string_view a = rng.pick(list), b = rng.pick(list);
  size_t head = static_cast<size_t>(rng.range(1, static_cast<int64_t>(a.size())));
  size_t from = b.size() - static_cast<size_t>(rng.range(1, static_cast<int64_t>(b.size())));
  // Cut between characters, never inside a UTF-8 sequence ("Tomás").
  const auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  while (head < a.size() && continuation(a[head])) ++head;
  while (from < b.size() && continuation(b[from])) ++from;
  std::string w = std::string(a.substr(0, head)) + std::string(b.substr(from));
  for (size_t i = 1; i < w.size(); ++i) {
    if (w[i] >= 'A' && w[i] <= 'Z') w[i] = static_cast<char>(w[i] - 'A' + 'a');
  }
  return w;
}

// An invented name: with the spelled-names knob a word of the tokenizer's pieces; else the
// syllable table, or with the broad-variety knob the wider inventory or a splice of two names
// from `list`. `proper`: a name (capitalised) rather than an occupation or event word.
std::string invented_name(SynthRng& rng, std::span<const std::string_view> list, bool proper) {
  if (rng.spelled_name()) return spelled_word(rng, proper);
  if (!rng.broad_variety()) return made_up_word(rng);
  return rng.percent(50) ? wide_word(rng) : spliced_word(rng, list);
}

}  // namespace

std::string invented_word(SynthRng& rng) { return made_up_word(rng); }

std::string draw_first_name(SynthRng& rng) {
  if (invent(rng)) return invented_name(rng, first_names(), true);
  return std::string(rng.pick(first_names()));
}

std::string draw_last_name(SynthRng& rng) {
  if (invent(rng)) return invented_name(rng, last_names(), true);
  return std::string(rng.pick(last_names()));
}

std::string draw_city_name(SynthRng& rng) {
  if (invent(rng)) {
    static const std::vector<std::string_view> kCityNames = [] {
      std::vector<std::string_view> names;
      for (const City& c : cities()) names.push_back(c.name);
      return names;
    }();
    return invented_name(rng, kCityNames, true);
  }
  return std::string(rng.pick(cities()).name);
}

namespace {

constexpr std::string_view kJobSuffixes[] = {"", "", "er", "ist", " technician", " assistant",
                                             " inspector", " operator"};
constexpr std::string_view kEventKinds[] = {"festival", "fair", "summit", "expo", "gala",
                                            "meetup", "workshop", "conference", "tournament"};

}  // namespace

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

std::string draw_occupation(SynthRng& rng) {
  if (invent(rng)) {
    return lower_case(invented_name(rng, occupations(), false)) + std::string(rng.pick(Words(kJobSuffixes)));
  }
  return std::string(rng.pick(occupations()));
}

std::string draw_event_name(SynthRng& rng) {
  if (invent(rng)) {
    return lower_case(invented_name(rng, last_names(), false)) + " " +
           std::string(rng.pick(Words(kEventKinds)));
  }
  return std::string(rng.pick(event_names()));
}

std::string draw_company(SynthRng& rng) {
  if (invent(rng)) {
    std::string name = invented_name(rng, last_names(), true);
    name += " ";
    name += rng.pick(Words(kCompanySuffixes));
    return name;
  }
  return std::string(rng.pick(companies()));
}

}  // namespace afm::data::synth
