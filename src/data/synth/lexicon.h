// Word lists the synthetic generators draw from: names, places, jobs, products, events.
// Fixed order, so the same seed always picks the same words.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace afm::data::synth {

using Words = std::span<const std::string_view>;

struct City {
  std::string_view name, country;
};

Words first_names();
Words last_names();
std::span<const City> cities();
Words occupations();      // "nurse", "software engineer"
Words companies();        // "Northwind Traders"
Words event_names();      // "jazz festival"
Words countable_items();  // plural nouns: "apples", "marbles"
Words shop_products();    // singular nouns with a price: "notebook"

// Names for the generators. With rng.invented_names_percent() == 0 each is one pick from its
// list (the stream of draws is what it always was); otherwise that share of names is made up
// from syllables ("Velomir Tasko", "Brenvik", "Quorra Systems"), so a model trained on them
// must copy names from the text rather than recall them.
class SynthRng;
std::string draw_first_name(SynthRng& rng);
std::string draw_last_name(SynthRng& rng);
std::string draw_city_name(SynthRng& rng);
std::string draw_company(SynthRng& rng);
// A capitalised made-up word of 2-3 syllables ("Brenvik"), whatever the knobs say.
std::string invented_word(SynthRng& rng);
// ASCII letters lowered ("Payroll" -> "payroll"); other bytes as they are.
std::string lower_case(std::string s);
// Lower case, as the lists are: "krolvist", "brandel technician"; "modrik festival".
std::string draw_occupation(SynthRng& rng);
std::string draw_event_name(SynthRng& rng);

}  // namespace afm::data::synth
