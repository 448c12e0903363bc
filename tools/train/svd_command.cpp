#include "svd_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train/svd_split.h"
#include "train_options.h"

namespace afm::train {
namespace {

struct SvdSplitArgs {
  std::string base, out, targets;
  int64_t rank = 16;
};

void run(const SvdSplitArgs& a) {
  const std::shared_ptr<LanguageModel> model = import_gguf_model(a.base).model;
  LoraSpec spec;
  spec.rank = a.rank;
  spec.targets = split_commas(a.targets);
  const int64_t changed = subtract_principal_parts(*model, spec);
  ExportOptions e;
  e.type = gguf::TensorType::kF32;
  e.tokenizer_gguf = a.base;
  e.name = "afm-svd-residual";
  export_gguf(*model, e, a.out);
  std::printf("wrote %s (%lld matrices without their top %lld singular directions)\n",
              a.out.c_str(), static_cast<long long>(changed), static_cast<long long>(a.rank));
}

}  // namespace

void add_svd_split_command(CLI::App& app) {
  auto a = std::make_shared<SvdSplitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "svd-split",
      "Write a model whose adapted matrices lose their top singular directions (W - U_r S_r "
      "V_r^T, f32): the base to compress with `afm quantize --type astc6x6`, then train the "
      "recovery adapter with `afm-train adapter --base <compressed> --svd-init <this --base>`");
  cmd->add_option("--base", a->base, "The uncompressed GGUF model")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "Output GGUF (f32, written atomically)")->required();
  cmd->add_option("--rank", a->rank, "Singular directions moved out of each matrix (the adapter's rank)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd->add_option("--targets", a->targets,
                  "Comma-separated weight kinds, as `afm-train adapter --targets` (default: every "
                  "attention and feed-forward projection)");
  cmd->callback([a] { run(*a); });
}

}  // namespace afm::train
