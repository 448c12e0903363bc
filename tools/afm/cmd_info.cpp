// `afm info MODEL [--json]`: what a GGUF model file holds: architecture, hyperparameters,
// tensors by type, tokenizer summary and chat template family.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "command.h"
#include "base/error.h"
#include "framework/chat_template_kind.h"
#include "gguf/reader.h"
#include "model/registry.h"
#include "model_summary.h"

namespace afm::cli {

namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
};

// Runs of equal values: "causal x3, shared-kv x2".
std::string runs(const nlohmann::json& values) {
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    out += (out.empty() ? "" : ", ") + values[i].get<std::string>() + " x" + std::to_string(j - i);
    i = j;
  }
  return out;
}

void print_engine(const nlohmann::json& e) {
  if (e.contains("error")) {
    std::printf("engine:        cannot run this file: %s\n", e["error"].get<std::string>().c_str());
    return;
  }
  std::string text = e["describe"].get<std::string>();
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
    text.insert(at + 1, "               ");
  }
  std::printf("engine:        %s\n", text.c_str());
  const auto& l = e["layout"];
  std::printf("  layers per track: %zu, tracks: %d", l["attention"].size(), l["tracks"].get<int>());
  if (l["track_block_depth"].get<int>() > 0) {
    std::printf(", track block depth: %d", l["track_block_depth"].get<int>());
  }
  std::printf("\n  kv-cached layers: %d\n", l["kv_layers"].get<int>());
  std::printf("  attention: %s\n", runs(l["attention"]).c_str());
  std::printf("  ffn:       %s\n", runs(l["ffn"]).c_str());
  if (l["experts"].get<int>() > 0) {
    std::printf("  experts: %d, top-%d\n", l["experts"].get<int>(), l["experts_used"].get<int>());
  }
  if (l["sliding_window"].get<int>() > 0) {
    std::printf("  sliding window: %d\n", l["sliding_window"].get<int>());
  }
}

// What the engine makes of the file: its layer arrangement, or why it cannot run it.
nlohmann::json engine_summary(const std::string& path) {
  try {
    const std::unique_ptr<model::Model> m = model::load_model(path);
    const model::ModelLayout layout = m->layout();
    nlohmann::json l{{"tracks", layout.tracks},
                     {"track_block_depth", layout.track_block_depth},
                     {"kv_layers", layout.kv_layers},
                     {"experts", layout.experts},
                     {"experts_used", layout.experts_used},
                     {"sliding_window", layout.sliding_window}};
    for (const model::LayerPlan& p : layout.layers) {
      l["attention"].push_back(p.attention);
      l["ffn"].push_back(p.ffn);
      l["kv_source"].push_back(p.kv_layer);
    }
    return {{"describe", m->describe()}, {"layout", l}};
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

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
  print_engine(j["engine"]);
}

void run_info(const InfoOptions& opt) {
  gguf::File file = gguf::File::open(opt.model);
  nlohmann::json j = summarize_model(file);
  j["engine"] = engine_summary(opt.model);
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
