#include "data_preferences.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "rl/preference_pair.h"

namespace afm::cli {

void add_data_preferences(CLI::App& data) {
  struct Args {
    std::string input, out;
    uint64_t seed = 1;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = data.add_subcommand(
      "preferences", "Preference pairs for reward-model training from conversations (JSONL)");
  cmd->add_option("--input", a->input,
                  "JSONL conversations with reference replies (afm data synth --format jsonl)")
      ->required();
  cmd->add_option("--out", a->out, "Output JSONL of pairs")->required();
  cmd->add_option("--seed", a->seed, "Seed of the mistakes")->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the summary as JSON");
  cmd->callback([a] {
    std::ifstream in(a->input);
    if (!in) throw_error(ErrorCode::kNotFound, "cannot open " + a->input);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const std::vector<std::string> pairs = rl::synthesize_preference_lines(lines, a->seed);
    AtomicFileWriter out(a->out);
    for (const std::string& p : pairs) out.write(p + "\n");
    out.commit();
    if (a->json)
      std::printf(
          "%s\n",
          nlohmann::json{{"conversations", lines.size()}, {"pairs", pairs.size()}, {"out", a->out}}
              .dump()
              .c_str());
    else
      std::printf("wrote %zu pairs from %zu conversations to %s\n", pairs.size(), lines.size(),
                  a->out.c_str());
  });
}

}  // namespace afm::cli
