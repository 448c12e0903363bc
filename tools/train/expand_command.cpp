#include "expand_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "train/block_expansion.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train_options.h"

namespace afm::train {
namespace {

struct ExpandArgs {
  std::string base, out, layers, name = "afm-expanded";
  int64_t every = 1;
};

// The base layers to copy: the --layers list, or every `every`-th layer from the last down
// (the last layer is always among them, so a copy sits in front of the output).
std::vector<int64_t> chosen_layers(const ExpandArgs& a, int64_t block_count) {
  std::vector<int64_t> layers;
  if (!a.layers.empty()) {
    for (const std::string& item : split_commas(a.layers)) {
      try {
        size_t used = 0;
        layers.push_back(std::stoll(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      } catch (const std::exception&) {
        throw_error(ErrorCode::kInvalidArgument, "--layers: '" + item + "' is not a layer number");
      }
    }
    return layers;
  }
  for (int64_t l = block_count - 1; l >= 0; l -= a.every) layers.insert(layers.begin(), l);
  return layers;
}

void run(const ExpandArgs& a) {
  const ImportedModel base = import_gguf_model(a.base);
  const std::vector<int64_t> layers = chosen_layers(a, base.config.block_count);
  const std::shared_ptr<LanguageModel> grown = expand_blocks(*base.model, layers);
  ExportOptions e;
  e.type = gguf::TensorType::kF32;
  e.tokenizer_gguf = a.base;
  e.name = a.name;
  export_gguf(*grown, e, a.out);
  const ModelConfig& c = grown->config();
  std::printf("wrote %s: %lld layers (%lld new, output projections zero)", a.out.c_str(),
              static_cast<long long>(c.block_count), static_cast<long long>(layers.size()));
  if (c.arch == "afm-device") std::printf(", Block 1 = %lld layers", static_cast<long long>(c.block1_layers));
  std::printf(", %lld parameters\n", static_cast<long long>(c.parameter_count()));
}

}  // namespace

void add_expand_command(CLI::App& app) {
  auto a = std::make_shared<ExpandArgs>();
  CLI::App* cmd = app.add_subcommand(
      "expand",
      "Write a deeper model that computes what its base computes: a copy of each chosen layer, "
      "with zero output projections, goes in front of it (block expansion); fine-tune it next "
      "with `afm-train sft --base <this --out>`");
  cmd->add_option("--base", a->base, "The GGUF model to grow (llama or afm-device)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "Output GGUF (f32, written atomically)")->required();
  auto* layers = cmd->add_option("--layers", a->layers, "Comma-separated base layers to copy (0-based)");
  cmd->add_option("--every", a->every, "Copy every N-th layer, counting from the last (1: all)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1024}))
      ->excludes(layers);
  cmd->add_option("--name", a->name, "general.name of the output")->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace afm::train
