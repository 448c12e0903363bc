// `afm adapter merge --base B.gguf --adapter A.gguf --out M.gguf [--scale S] [--json]`
//   Folds the adapter into the base (W + s · A B, s = alpha / rank x S) and writes a new GGUF in
//   each tensor's own type (q8_0 / q4_0 re-quantised); llama.cpp reads it like the base.
// `afm adapter info ADAPTER.gguf [--base B.gguf] [--json]`
//   Architecture, alpha, ranks, adapted tensors, the base hash it names; with --base, checks it
//   against that model (the same checks --adapter makes).
// `afm adapter random --base B.gguf --out A.gguf [--rank R] [--alpha A] [--seed S] [--std X]
//                     [--targets attn_q,ffn_down,...] [--type f32|f16]`
//   A seeded random adapter (tests, benchmarks). Format: docs/adapters.md.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "adapter_merge.h"
#include "base/error.h"
#include "command.h"
#include "gguf/reader.h"
#include "model/lora.h"
#include "option_checks.h"

namespace afm::cli {
namespace {

struct MergeArgs {
  std::string base, adapter, out;
  float scale = 1.0f;
  bool json = false;
};

struct InfoArgs {
  std::string adapter, base;
  bool json = false;
};

struct RandomArgs {
  std::string base, out, type = "f32";
  RandomAdapterOptions options;
  bool json = false;
};

void run_merge(const MergeArgs& a) {
  const gguf::File base = gguf::File::open(a.base);
  const auto adapter = model::LoraAdapter::load(a.adapter, base);
  const int64_t changed = merge_adapter(base, *adapter, a.scale, a.out);
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"out", a.out}, {"tensors_merged", changed},
                                        {"scale", a.scale}}).dump().c_str());
  } else {
    std::printf("merged %lld tensors into %s\n", static_cast<long long>(changed), a.out.c_str());
  }
}

// Without a base the adapter is only parsed: metadata, pairs and their shapes as stored.
void run_adapter_info(const InfoArgs& a) {
  nlohmann::json j;
  if (!a.base.empty()) {
    const gguf::File base = gguf::File::open(a.base);
    const auto adapter = model::LoraAdapter::load(a.adapter, base);
    j = {{"architecture", adapter->architecture()}, {"alpha", adapter->alpha()},
         {"base_model_sha256", adapter->base_sha256()}, {"base_checked", true}};
    for (const auto& [name, p] : adapter->pairs()) {
      j["tensors"].push_back({{"name", name}, {"rank", p.rank}, {"in", p.in}, {"out", p.out},
                              {"stack", p.n_stack}, {"scale", adapter->scale_for(p, 1.0f)}});
    }
  } else {
    const gguf::File f = gguf::File::open(a.adapter);
    const gguf::Value* alpha = f.find("adapter.lora.alpha");
    const gguf::Value* sha = f.find(model::kAdapterBaseSha256Key);
    j = {{"architecture", f.architecture()},
         {"alpha", alpha ? alpha->as_f64("adapter.lora.alpha") : 0.0},
         {"base_model_sha256", sha ? sha->as_string(model::kAdapterBaseSha256Key) : ""},
         {"base_checked", false}};
    for (const gguf::TensorInfo& t : f.tensors()) j["tensors"].push_back({{"name", t.name}, {"shape", t.shape}});
  }
  if (!j.contains("tensors")) j["tensors"] = nlohmann::json::array();
  if (a.json) {
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf("architecture %s, alpha %g, %zu tensors%s\nbase sha256: %s\n",
              j["architecture"].get<std::string>().c_str(), j["alpha"].get<double>(),
              j["tensors"].size(), a.base.empty() ? "" : " (checked against the base)",
              j["base_model_sha256"].get<std::string>().c_str());
  for (const auto& t : j["tensors"]) std::printf("  %s\n", t["name"].get<std::string>().c_str());
}

void run_random(RandomArgs a) {
  const gguf::File base = gguf::File::open(a.base);
  a.options.type = a.type == "f16" ? gguf::TensorType::kF16 : gguf::TensorType::kF32;
  const int64_t n = write_random_adapter(base, a.options, a.out);
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"out", a.out}, {"tensors", n}}).dump().c_str());
  } else {
    std::printf("wrote %lld adapted tensors to %s\n", static_cast<long long>(n), a.out.c_str());
  }
}

void setup_adapter(CLI::App& root) {
  CLI::App* adapter = root.add_subcommand("adapter", "Inspect, merge and create LoRA adapters");
  adapter->require_subcommand(1);

  auto m = std::make_shared<MergeArgs>();
  CLI::App* merge = adapter->add_subcommand("merge", "Fold an adapter into its base model");
  merge->add_option("--base", m->base, "Base model GGUF")->required()->check(CLI::ExistingFile);
  merge->add_option("--adapter", m->adapter, "LoRA adapter GGUF")->required()->check(CLI::ExistingFile);
  merge->add_option("--out", m->out, "Merged model GGUF to write")->required()->check(not_empty());
  merge->add_option("--scale", m->scale, "Adapter strength (alpha / rank x this)")
      ->capture_default_str()
      ->check(between(-100, 100));
  merge->add_flag("--json", m->json, "Print one JSON object");
  merge->callback([m] { run_merge(*m); });

  auto i = std::make_shared<InfoArgs>();
  CLI::App* info = adapter->add_subcommand("info", "Describe an adapter; check it against a base");
  info->add_option("adapter", i->adapter, "LoRA adapter GGUF")->required()->check(CLI::ExistingFile);
  info->add_option("--base", i->base, "Base model GGUF to check against")->check(CLI::ExistingFile);
  info->add_flag("--json", i->json, "Print one JSON object");
  info->callback([i] { run_adapter_info(*i); });

  auto r = std::make_shared<RandomArgs>();
  CLI::App* random = adapter->add_subcommand("random", "Write a seeded random adapter (tests)");
  random->add_option("--base", r->base, "Base model GGUF")->required()->check(CLI::ExistingFile);
  random->add_option("--out", r->out, "Adapter GGUF to write")->required()->check(not_empty());
  random->add_option("--rank", r->options.rank, "LoRA rank")->capture_default_str()->check(between(1, 4096));
  random->add_option("--alpha", r->options.alpha, "adapter.lora.alpha")
      ->capture_default_str()
      ->check(at_least(0));
  random->add_option("--seed", r->options.seed, "Random seed")->capture_default_str();
  random->add_option("--std", r->options.std_b, "Standard deviation of B (A: 1/sqrt(in))")
      ->capture_default_str()
      ->check(at_least(0));
  random->add_option("--targets", r->options.targets,
                     "Tensors to adapt by short name (attn_q, attn_k, attn_v, attn_output, "
                     "ffn_gate, ffn_up, ffn_down, ffn_gate_inp, ffn_*_exps, output); default all")
      ->delimiter(',');
  random->add_option("--type", r->type, "Storage type of A and B")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "f16"}));
  random->add_flag("--json", r->json, "Print one JSON object");
  random->callback([r] { run_random(*r); });
}

}  // namespace

AFM_COMMAND(adapter, setup_adapter);

}  // namespace afm::cli
