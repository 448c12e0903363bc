// `afm info MODEL [--json]`: what a GGUF model file holds: architecture, hyperparameters,
// tensors by type, tokenizer summary and chat template family.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "command.h"
#include "framework/chat_template_kind.h"
#include "gguf/reader.h"
#include "model_summary.h"

namespace afm::cli {

namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
};

void print_text(const nlohmann::json& j) {
  std::printf("file:          %s\n", j["file"].get<std::string>().c_str());
  std::printf("gguf version:  %d\n", j["gguf_version"].get<int>());
  std::printf("architecture:  %s\n", j["architecture"].get<std::string>().c_str());
  std::printf("name:          %s\n", j["name"].get<std::string>().c_str());
  std::printf("hyperparameters:\n");
  for (auto& [key, value] : j["hyperparameters"].items()) {
    std::printf("  %-36s %s\n", key.c_str(), value.dump().c_str());
  }
  std::printf("tensors:       %d, %.2f MB\n", j["tensor_count"].get<int>(),
              j["tensor_bytes"].get<double>() / 1e6);
  for (auto& [type, stats] : j["tensor_types"].items()) {
    std::printf("  %-6s %5d tensors  %12llu elements  %10.2f MB\n", type.c_str(),
                stats["count"].get<int>(), stats["elements"].get<unsigned long long>(),
                stats["bytes"].get<double>() / 1e6);
  }
  const auto& tok = j["tokenizer"];
  if (tok.is_null()) {
    std::printf("tokenizer:     none\n");
  } else {
    std::printf("tokenizer:     %s (pre: %s), %d tokens, %d merges\n",
                tok["model"].get<std::string>().c_str(), tok["pre"].get<std::string>().c_str(),
                tok["vocab_size"].get<int>(), tok["merges"].get<int>());
    for (const char* k : {"bos", "eos", "unk", "pad"}) {
      if (tok.contains(k)) std::printf("  %s: %s\n", k, tok[k].dump().c_str());
    }
  }
  std::printf("chat template: %s\n", j["chat_template"].get<std::string>().c_str());
}

void run_info(const InfoOptions& opt) {
  gguf::File file = gguf::File::open(opt.model);
  nlohmann::json j = summarize_model(file);
  if (opt.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    print_text(j);
  }
}

void setup_info(CLI::App& root) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = root.add_subcommand("info", "Show what a GGUF model file holds");
  cmd->add_option("model", opt->model, "GGUF model file")->required();
  cmd->add_flag("--json", opt->json, "Print one JSON object");
  cmd->callback([opt] { run_info(*opt); });
}

}  // namespace

AFM_COMMAND(info, setup_info);

}  // namespace afm::cli
