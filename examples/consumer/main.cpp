// Uses the installed afm: the default model (found beside the installed library) fills a
// typed struct from a sentence, with the schema enforced token by token.
//
//   afm_consumer ["text to read"]
#include <afm/afm.h>

#include <cstdio>
#include <string>

struct Booking {
  std::string guest;
  int nights = 0;
  std::string city;
};

AFM_GENERABLE(Booking, "A hotel booking described in the text.",
              AFM_FIELD(guest, "the guest's full name"),
              AFM_FIELD(nights, "number of nights", afm::guide::range(1, 60)),
              AFM_FIELD(city, "city of the hotel"));

int main(int argc, char** argv) {
#ifdef AFM_PACKAGE_VERSION
  std::printf("afm %s (package %s)\n", afm::version(), AFM_PACKAGE_VERSION);
#else
  std::printf("afm %s\n", afm::version());
#endif
  const afm::SystemLanguageModel model = afm::SystemLanguageModel::default_model();
  if (!model.is_available()) {
    std::fprintf(stderr, "model unavailable: %s\n", model.availability().reason.c_str());
    return 1;
  }
  const std::string text =
      argc > 1 ? argv[1] : "Please book 3 nights in Porto for Maria Silva, arriving Friday.";
  afm::LanguageModelSession session(model, {}, "Extract the booking from the user's message.");
  try {
    const afm::Response<Booking> r = session.respond<Booking>(text);
    std::printf("guest: %s\nnights: %d\ncity: %s\n", r.content.guest.c_str(), r.content.nights,
                r.content.city.c_str());
  } catch (const afm::GenerationError& e) {
    std::fprintf(stderr, "%s: %s\n", afm::generation_error_kind_name(e.kind()), e.what());
    return 1;
  }
  return 0;
}
