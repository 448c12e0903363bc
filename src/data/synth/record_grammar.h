// Extraction texts composed from clauses (the wide-phrasing knob, synth_rng.h).
//
// The fixed texts of extraction.cpp put each field in the same few places, so a model learned
// the places, not the roles: given "Receipt: A acknowledges B's payment" it copied the first
// name as the payer. Here each fact is a clause in one of several wordings (active or
// passive, the role word before or after the name), the clauses come in shuffled order, and
// dates, ages and amounts move between the front, the middle and a sentence of their own.
//
// Contract: pure functions of the rng's stream and the values; every value passed in appears
// in the text verbatim (the date and amount as spelled by the functions named below).
#pragma once

#include <string>

#include "data/synth/synth_rng.h"
#include "data/synth/text_forms.h"

namespace afm::data::synth {

struct PersonFacts {
  std::string name, occupation, city;
  int age = 0;
};
std::string person_text(SynthRng& rng, const PersonFacts& p);

// amount: already spelled (prose_money); the date is spelled by spelled_date.
struct PaymentFacts {
  std::string payer, payee, amount;
  Date date;
};
std::string payment_text(SynthRng& rng, const PaymentFacts& p);

// attendees: already spelled (with_commas); the date is spelled by spelled_date.
struct EventFacts {
  std::string event, city, attendees;
  Date date;
};
std::string event_text(SynthRng& rng, const EventFacts& e);

}  // namespace afm::data::synth
