// Streaming snapshots: after every token the callback receives the whole partially generated
// value (fields so far, the last string possibly unfinished), ready to show in a UI.
//
//   build/examples/streaming_snapshots [MODEL.gguf]
#include <cstdio>
#include <string>
#include <vector>

#include "afm/afm.h"

struct Event {
  std::string event;
  std::string city;
  std::string date;
  std::vector<std::string> attendees;
};

AFM_GENERABLE(Event, "An event mentioned in the text.",
              AFM_FIELD(event, "what happens"),
              AFM_FIELD(city, "where it happens"),
              AFM_FIELD(date, "date as YYYY-MM-DD", afm::guide::pattern("^\\d{4}-\\d{2}-\\d{2}$")),
              AFM_FIELD(attendees, "people attending", afm::guide::max_count(5)));

int main(int argc, char** argv) {
  const afm::SystemLanguageModel model =
      argc > 1 ? afm::SystemLanguageModel(argv[1]) : afm::SystemLanguageModel::default_model();
  if (!model.is_available()) {
    std::fprintf(stderr, "model unavailable: %s\n", model.availability().reason.c_str());
    return 1;
  }
  afm::LanguageModelSession session(model, {}, "You turn short texts into JSON records.");
  try {
    int n = 0;
    const afm::Response<Event> r = session.stream_response<Event>(
        "Ines Costa and Tom Berg will attend the book fair in Porto on 2025-05-14.",
        [&](const afm::PartiallyGenerated<Event>& snapshot) {
          std::printf("snapshot %3d: %s\n", ++n, snapshot.content.json_string().c_str());
        });
    std::printf("final: %s in %s on %s, %zu attendees\n", r.content.event.c_str(),
                r.content.city.c_str(), r.content.date.c_str(), r.content.attendees.size());
  } catch (const afm::GenerationError& e) {
    std::fprintf(stderr, "%s: %s\n", afm::generation_error_kind_name(e.kind()), e.what());
    return 1;
  }
  return 0;
}
