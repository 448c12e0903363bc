// Word lists the synthetic generators draw from: names, places, jobs, products, events.
// Fixed order, so the same seed always picks the same words.
#pragma once

#include <span>
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

}  // namespace afm::data::synth
