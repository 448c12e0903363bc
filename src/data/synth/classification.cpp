// (d) Classification: review sentiment or headline topic, the label set given in the prompt.
#include <algorithm>
#include <array>

#include "data/synth/chat_format.h"
#include "data/synth/lexicon.h"
#include "data/synth/tasks.h"

namespace afm::data::synth {
namespace {

struct Labelled {
  std::string kind;  // "review" or "headline"
  std::string text;
  std::string label;
  std::vector<std::string> labels;  // the label set shown, in display order
};

constexpr std::array<std::string_view, 12> kReviewed = {
    "The headphones", "This blender",   "The hotel room",     "The phone case",
    "This novel",     "The pasta here", "The delivery",       "This vacuum cleaner",
    "The tour",       "The new update", "This pair of boots", "The coffee machine"};

// Phrases by sentiment: positive, negative, neutral.
constexpr std::array<std::array<std::string_view, 6>, 3> kVerdicts = {{
    {"works perfectly", "exceeded my expectations", "is worth every penny", "made my week",
     "is the best purchase I have made this year", "is simply excellent"},
    {"stopped working after two days", "is a complete waste of money", "arrived broken",
     "feels cheap and flimsy", "was a huge disappointment", "is far worse than advertised"},
    {"does what the description says", "arrived on Tuesday", "is about what I expected",
     "is fine, nothing special", "came in a plain box", "is average in most respects"},
}};

constexpr std::array<std::array<std::string_view, 3>, 3> kFollowUps = {{
    {"I would happily buy it again.", "Highly recommended.", "Five stars from me."},
    {"I want a refund.", "Avoid it.", "One star is generous."},
    {"It is neither great nor bad.", "No strong feelings either way.", "It will do."},
}};

constexpr std::array<std::string_view, 3> kSentiments = {"positive", "negative", "neutral"};

constexpr std::array<std::string_view, 8> kTopics = {
    "sports", "politics", "technology", "science", "business", "health", "travel", "food"};

std::string headline(SynthRng& rng, size_t topic) {
  const std::string city(rng.pick(cities()).name);
  const std::string company(rng.pick(companies()));
  const int64_t number = rng.range(2, 40);
  const std::string num = std::to_string(number);
  const std::array<std::array<std::string, 2>, 8> kHeadlines = {{
      {city + " FC wins the cup final " + num + "-" + std::to_string(number / 3),
       "Veteran sprinter from " + city + " sets a new national record"},
      {"Parliament debates new housing bill as " + city + " rents rise",
       "Mayor of " + city + " announces plan to cut council spending by " + num + "%"},
      {company + " unveils a laptop with a " + num + "-hour battery",
       "New open-source tool from " + company + " speeds up software builds"},
      {"Astronomers spot " + num + " new comets near Jupiter",
       "Researchers in " + city + " map the genome of an ancient wheat variety"},
      {company + " shares rise " + num + "% after strong quarterly results",
       company + " to open a new factory in " + city + ", creating " + num + "0 jobs"},
      {"Study links daily walks to better sleep in older adults",
       "Hospitals in " + city + " cut waiting times by " + num + "%"},
      {city + " named a top destination for autumn travel",
       "New direct flights connect " + city + " with " + num + " cities"},
      {"Chef in " + city + " opens a restaurant devoted to fermented vegetables",
       "Bakers in " + city + " revive a " + num + "0-year-old bread recipe"},
  }};
  return kHeadlines[topic][rng.below(2)];
}

Labelled sentiment(SynthRng& rng) {
  const size_t polarity = rng.below(3);
  const std::string subject(rng.pick(Words(kReviewed)));
  const std::string verdict(rng.pick(Words(kVerdicts[polarity])));
  Labelled l{"review", subject + " " + verdict + ".", std::string(kSentiments[polarity]), {}};
  if (rng.percent(50)) {
    l.text += ' ';
    l.text += rng.pick(Words(kFollowUps[polarity]));
  }
  for (std::string_view s : kSentiments) l.labels.emplace_back(s);
  return l;
}

// The correct topic and three others, in a random order.
Labelled topic(SynthRng& rng) {
  const std::vector<size_t> order = rng.distinct(kTopics.size(), kTopics.size());
  const size_t correct = order[0];
  Labelled l{"headline", headline(rng, correct), std::string(kTopics[correct]), {}};
  std::vector<size_t> shown(order.begin(), order.begin() + 4);
  std::sort(shown.begin(), shown.end());
  for (size_t i : shown) l.labels.emplace_back(kTopics[i]);
  return l;
}

std::string joined(const std::vector<std::string>& labels) {
  std::string out;
  for (size_t i = 0; i < labels.size(); ++i) out += (i ? ", " : "") + labels[i];
  return out;
}

}  // namespace

Messages make_classification(SynthRng& rng) {
  const bool is_review = rng.percent(50);
  const Labelled l = is_review ? sentiment(rng) : topic(rng);
  const std::string what =
      is_review ? "the sentiment of this review" : "the topic of this headline";
  const std::string prompt = "Classify " + what + ". Choose one of: " + joined(l.labels) + ".\n\n" +
                             (is_review ? "Review: " : "Headline: ") + l.text;
  const bool as_json = rng.percent(50);
  if (!as_json) {
    return {{"system", "You are a precise text classifier. Answer with the label only."},
            {"user", prompt},
            {"assistant", l.label}};
  }
  Json labels = Json::array();
  for (const std::string& s : l.labels) labels.push_back(s);
  const Json schema = object_schema({{"label", {{"type", "string"}, {"enum", labels}}}});
  return {{"system", "You are a precise text classifier."},
          {"user", user_with_response_format(prompt, "Classification",
                                             "The label that fits the text best.", schema)},
          {"assistant", compact(Json{{"label", l.label}})}};
}

}  // namespace afm::data::synth
