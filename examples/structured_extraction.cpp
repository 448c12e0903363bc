// Structured extraction with a Generable struct: the model fills a Person from a sentence.
// The output is guaranteed to parse into Person (the schema is enforced token by token).
//
//   build/examples/structured_extraction [MODEL.gguf] ["text to read"]
#include <cstdio>
#include <string>

#include "afm/afm.h"

struct Person {
  std::string name;
  int age = 0;
  std::string city;
  std::string occupation;
};

AFM_GENERABLE(Person, "A person described in the text.",
              AFM_FIELD(name, "full name"),
              AFM_FIELD(age, "age in years", afm::guide::range(0, 150)),
              AFM_FIELD(city, "city of residence"),
              AFM_FIELD(occupation, "job title"));

int main(int argc, char** argv) {
  const afm::SystemLanguageModel model =
      argc > 1 ? afm::SystemLanguageModel(argv[1]) : afm::SystemLanguageModel::default_model();
  if (!model.is_available()) {
    std::fprintf(stderr, "model unavailable: %s\n", model.availability().reason.c_str());
    return 1;
  }
  const std::string text = argc > 2 ? argv[2]
                                    : "Meet Ana Lima, 34, a nurse based in Lisbon, Portugal.";
  afm::LanguageModelSession session(
      model, {}, "You are a careful assistant that extracts structured data from text.");
  try {
    const afm::Response<Person> r = session.respond<Person>(text);
    const Person& p = r.content;
    std::printf("name: %s\nage: %d\ncity: %s\noccupation: %s\n", p.name.c_str(), p.age,
                p.city.c_str(), p.occupation.c_str());
  } catch (const afm::GenerationError& e) {
    std::fprintf(stderr, "%s: %s\n", afm::generation_error_kind_name(e.kind()), e.what());
    return 1;
  }
  return 0;
}
