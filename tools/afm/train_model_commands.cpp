#include "train_model_commands.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "data/sft_render.h"
#include "gguf/writer.h"
#include "tokenizer/gguf_export.h"

extern char** environ;

namespace afm::cli {
namespace {

namespace fs = std::filesystem;

fs::path trainer_binary() {
  const fs::path path = fs::read_symlink("/proc/self/exe").parent_path() / "afm-train";
  if (!fs::exists(path))
    throw_error(ErrorCode::kNotFound,
                "the trainer is not built (" + path.string() +
                    " is missing): it needs libtorch; run scripts/setup, which installs "
                    "libtorch-dev, and rebuild");
  return path;
}

// Runs afm-train with `args` and returns its exit status (its output goes straight through).
int run_trainer(const std::vector<std::string>& args) {
  const std::string binary = trainer_binary().string();
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    throw_error(ErrorCode::kIo, "cannot start " + binary);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A GGUF holding only the tokenizer.* keys of a Hugging Face tokenizer (a tokenizer.json, or a
// folder with tokenizer.json and optionally tokenizer_config.json).
void write_tokenizer_gguf(const fs::path& tokenizer, const fs::path& out) {
  const fs::path json = fs::is_directory(tokenizer) ? tokenizer / "tokenizer.json" : tokenizer;
  const fs::path config = json.parent_path() / "tokenizer_config.json";
  if (!fs::exists(json)) throw_error(ErrorCode::kNotFound, "no tokenizer at " + json.string());
  gguf::Writer w;
  w.set("general.architecture", gguf::Value(std::string("tokenizer")));
  tokenizer::add_gguf_tokenizer_metadata(
      read_file_to_string(json.string()),
      fs::exists(config) ? read_file_to_string(config.string()) : std::string(), w);
  w.write(out.string());
}

void exit_with(int status) {
  if (status != 0) throw CLI::RuntimeError(status);
}

}  // namespace

// `afm train NAME ...` runs `afm-train NAME ...` with every argument unchanged, --help included.
void add_trainer_passthrough(CLI::App& train, const std::string& name, const std::string& help) {
  CLI::App* cmd = train.add_subcommand(name, help);
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([cmd, name] {
    std::vector<std::string> args{name};
    for (const std::string& a : cmd->remaining()) args.push_back(a);
    exit_with(run_trainer(args));
  });
}

// The value after `flag` in args ("--flag V" or "--flag=V"), or empty.
std::string flag_value(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind(flag + "=", 0) == 0) return args[i].substr(flag.size() + 1);
  }
  return {};
}

// `flag`'s value as a number, or `fallback` when absent; a readable error when malformed.
template <typename T>
T number_flag(const std::vector<std::string>& args, const std::string& flag, T fallback) {
  const std::string text = flag_value(args, flag);
  if (text.empty()) return fallback;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return static_cast<T>(v);
  } catch (const std::exception&) {
  }
  throw_error(ErrorCode::kInvalidArgument, flag + " must be a number, got '" + text + "'");
}

// `args` without `flag` and its value (the trainer does not take it).
std::vector<std::string> without_flag(const std::vector<std::string>& args,
                                      const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      ++i;
    } else if (args[i].rfind(flag + "=", 0) != 0) {
      out.push_back(args[i]);
    }
  }
  return out;
}

// `afm train sft|adapter|draft --data F.jsonl ...`: renders F with the base model's template into
// <out>/data (as `afm data sft` does: conversations up to --seq-len + 1 tokens, --val-fraction
// held out (default 0.05), --seed), then runs `afm-train sft|adapter` on that folder with the
// other arguments unchanged. A --data folder is passed through as it is.
void run_finetune_front_end(const std::string& command, std::vector<std::string> args) {
  const std::string data = flag_value(args, "--data");
  const std::string base = flag_value(args, "--base"), out = flag_value(args, "--out");
  data::SftRenderOptions o;
  o.val_fraction = number_flag(args, "--val-fraction", o.val_fraction);
  args = without_flag(args, "--val-fraction");
  if (!data.empty() && fs::is_regular_file(data) && !base.empty() && !out.empty()) {
    o.model = base;
    o.input = data;
    o.out_dir = (fs::path(out) / "data").string();
    // `afm train draft` also takes --seq (its default row is 256 positions).
    const int64_t seq = command == "draft" ? number_flag<int64_t>(args, "--seq", 256) : 512;
    o.max_tokens = number_flag<int64_t>(args, "--seq-len", seq) + 1;
    o.seed = number_flag<uint64_t>(args, "--seed", o.seed);
    const data::SftRenderSummary s = data::render_sft_jsonl(o);
    std::fprintf(stderr,
                 "afm train %s: rendered %lld conversations into %s (%lld train, %lld held "
                 "out, %lld skipped as too long)\n",
                 command.c_str(), static_cast<long long>(s.conversations), o.out_dir.c_str(),
                 static_cast<long long>(s.train), static_cast<long long>(s.val),
                 static_cast<long long>(s.skipped_long));
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--data" && i + 1 < args.size()) args[i + 1] = o.out_dir;
      if (args[i].rfind("--data=", 0) == 0) args[i] = "--data=" + o.out_dir;
    }
  }
  args.insert(args.begin(), command);
  exit_with(run_trainer(args));
}

void setup_train_pretrain(CLI::App& train) {
  add_trainer_passthrough(train, "pretrain",
                          "Pretrain a model with libtorch (runs afm-train pretrain; see its --help)");
  add_trainer_passthrough(train, "rloo",
                          "Reinforcement learning with RLOO on rule-rewarded tasks (runs afm-train "
                          "rloo; see its --help)");
  add_trainer_passthrough(train, "reward",
                          "Train a reward model on preference pairs (runs afm-train reward; see "
                          "its --help)");
  add_trainer_passthrough(train, "svd-split",
                          "Move each matrix's top singular directions out of a model before ASTC "
                          "compression (runs afm-train svd-split; see its --help)");
  add_trainer_passthrough(train, "expand",
                          "Grow a model deeper without changing what it computes: a copy with "
                          "zero output projections in front of each chosen layer (runs "
                          "afm-train expand; see its --help)");
  add_trainer_passthrough(train, "rloo-updater",
                          "The policy updater of an asynchronous RLOO run (runs afm-train "
                          "rloo-updater; see its --help)");
  CLI::App* sft = train.add_subcommand(
      "sft", "Fine-tune a GGUF model on conversations: --data F.jsonl is rendered with the "
             "base's chat template first (afm data sft), then afm-train sft runs; see its --help");
  sft->prefix_command();
  sft->set_help_flag();
  sft->callback([sft] { run_finetune_front_end("sft", sft->remaining()); });
  CLI::App* adapter = train.add_subcommand(
      "adapter", "Train a LoRA adapter on a frozen GGUF base: --data F.jsonl is rendered with "
                 "the base's chat template first (afm data sft), then afm-train adapter runs and "
                 "writes <out>/adapter.gguf; see its --help");
  adapter->prefix_command();
  adapter->set_help_flag();
  adapter->callback([adapter] { run_finetune_front_end("adapter", adapter->remaining()); });
  CLI::App* draft = train.add_subcommand(
      "draft",
      "Distil a small draft model for speculative decoding from a base GGUF: --data "
      "F.jsonl is rendered with the base's chat template first (afm data sft), then "
      "afm-train draft runs and writes <out>/model.gguf; see its --help");
  draft->prefix_command();
  draft->set_help_flag();
  draft->callback([draft] { run_finetune_front_end("draft", draft->remaining()); });
}

void setup_train_export(CLI::App& train) {
  struct Args {
    std::string run, out, type = "q8_0", tokenizer, name = "afm";
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = train.add_subcommand("export", "Write a training checkpoint as a GGUF model");
  cmd->add_option("--run", a->run, "Run folder (checkpoint.pt, checkpoint.json)")->required();
  cmd->add_option("--out", a->out, "Output .gguf")->required();
  cmd->add_option("--type", a->type, "f32, f16, bf16, q8_0 or q4_0")->capture_default_str();
  cmd->add_option("--tokenizer", a->tokenizer,
                  "tokenizer.json (or its folder) to embed; the model cannot tokenize without");
  cmd->add_option("--name", a->name, "general.name")->capture_default_str();
  cmd->callback([a] {
    std::vector<std::string> args{"export", "--run", a->run, "--out", a->out, "--type", a->type,
                                  "--name", a->name};
    fs::path tokenizer_gguf;
    if (!a->tokenizer.empty()) {
      tokenizer_gguf = fs::path(a->out).string() + ".tokenizer.tmp";
      write_tokenizer_gguf(a->tokenizer, tokenizer_gguf);
      args.insert(args.end(), {"--tokenizer-gguf", tokenizer_gguf.string()});
    }
    const int status = run_trainer(args);
    if (!tokenizer_gguf.empty()) fs::remove(tokenizer_gguf);
    exit_with(status);
  });
}

}  // namespace afm::cli
