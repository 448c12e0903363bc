// Tool calling: the model may call get_weather (arguments constrained to the tool's schema);
// the session runs the tool, shows the model its output, and returns the model's answer.
//
//   build/examples/tool_calling [MODEL.gguf] ["question"]
#include <cstdio>
#include <optional>
#include <string>

#include "afm/afm.h"

enum class Unit { celsius, fahrenheit };
AFM_GENERABLE_ENUM(Unit, "temperature unit", celsius, fahrenheit);

struct WeatherArguments {
  std::string city;
  std::optional<Unit> unit;
};
AFM_GENERABLE(WeatherArguments, "", AFM_FIELD(city, ""), AFM_FIELD(unit, ""));

// A stand-in for a real weather service: deterministic conditions per city.
class WeatherTool : public afm::TypedTool<WeatherArguments> {
 public:
  std::string name() const override { return "get_weather"; }
  std::string description() const override { return "Current weather conditions for a city."; }
  afm::ToolOutput call(const WeatherArguments& args) override {
    const bool f = args.unit == Unit::fahrenheit;
    const int celsius = 5 + static_cast<int>(args.city.size() % 20);
    std::printf("[tool] get_weather(city=%s)\n", args.city.c_str());
    return afm::GeneratedContent(nlohmann::ordered_json{
        {"city", args.city},
        {"temperature", f ? celsius * 9 / 5 + 32 : celsius},
        {"unit", f ? "fahrenheit" : "celsius"},
        {"conditions", "partly cloudy"}});
  }
};

int main(int argc, char** argv) {
  const afm::SystemLanguageModel model =
      argc > 1 ? afm::SystemLanguageModel(argv[1]) : afm::SystemLanguageModel::default_model();
  if (!model.is_available()) {
    std::fprintf(stderr, "model unavailable: %s\n", model.availability().reason.c_str());
    return 1;
  }
  afm::LanguageModelSession session(
      model, {std::make_shared<WeatherTool>()},
      "You are a helpful assistant. Use the tools when they help answer the user.");
  const std::string question = argc > 2 ? argv[2] : "What's the weather like in Oslo right now?";
  try {
    const afm::Response<std::string> r = session.respond(question);
    std::printf("%s\n", r.content.c_str());
  } catch (const afm::GenerationError& e) {
    std::fprintf(stderr, "%s: %s\n", afm::generation_error_kind_name(e.kind()), e.what());
    return 1;
  }
  return 0;
}
