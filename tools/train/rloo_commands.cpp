#include "rloo_commands.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "broker/redis_client.h"
#include "rloo_launch.h"
#include "train/rloo_run.h"
#include "train/rloo_updater.h"
#include "train_options.h"

namespace afm::train {
namespace {

struct RlooArgs {
  RlooUpdaterOptions u;
  bool sync = false;
  int generators = 0, generator_threads = 1, max_restarts = 3;
  int64_t max_backlog = 0;  // 0: 2 x prompts per step
  std::string broker;
  std::vector<std::string> argv;  // this command's own arguments, for the updater's
};

// The options the synchronous loop and the updater share.
void add_loop_options(CLI::App* cmd, RlooRunOptions& o) {
  cmd->add_option("--base", o.base, "GGUF model: the starting policy and the KL reference")
      ->required();
  cmd->add_option("--out", o.out_dir, "Run folder (checkpoints, log.jsonl, adapter.gguf)")
      ->required();
  cmd->add_option("--steps", o.steps, "Updates")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--prompts-per-step", o.prompts_per_step, "Prompts (groups) per update")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--kl-beta", o.rloo.kl_beta, "Weight of the KL to the base in the reward")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-ratio", o.rloo.max_ratio, "Truncation of the importance ratio")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--lr", o.optim.lr, "AdamW learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--rank", o.lora.rank, "LoRA rank of the policy")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd->add_option("--alpha", o.lora.alpha, "LoRA alpha")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "Updates between checkpoints")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o.seed, "Seed of the prompt choice, the sampling and LoRA's A")
      ->capture_default_str();
  cmd->add_flag("--merged", o.merged, "Also write <out>/model.gguf with the policy folded in");
  add_run_options(cmd, o.run);
}

// The options of sampling (the synchronous loop and the generators).
void add_sampling_options(CLI::App* cmd, RlooRunOptions& o) {
  cmd->add_option("--prompts", o.prompts,
                  "JSONL conversations with reference answers (afm data synth --format jsonl)")
      ->required();
  cmd->add_option("-k,--samples", o.samples_per_prompt, "Completions per prompt (at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 10));
  cmd->add_option("--max-new-tokens", o.max_new_tokens, "Longest completion")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  cmd->add_option("--temperature", o.temperature, "Sampling temperature")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 4.0));
  cmd->add_option("--reward-model", o.reward_model,
                  "Reward model (afm train reward) scoring prompts without a rule reward");
}

void add_broker_options(CLI::App* cmd, RlooUpdaterOptions& u) {
  cmd->add_option("--run-name", u.run_name,
                  "Namespace of the run's keys on the broker (default: the --out folder's name)");
  cmd->add_option("--max-staleness", u.max_staleness,
                  "Drop groups sampled by a policy more than this many versions old")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--broker-timeout", u.redis.retry_window_s,
                  "Seconds to keep retrying an unreachable broker before failing")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

std::string default_run_name(const RlooUpdaterOptions& u) {
  if (!u.run_name.empty()) return u.run_name;
  const std::string name =
      std::filesystem::absolute(u.rl.out_dir).lexically_normal().filename().string();
  return name.empty() ? "afm" : name;
}

void print_result(const RlooRunResult& r) {
  std::printf("wrote %s (%lld updates, last mean reward %.3f)\n", r.adapter_path.c_str(),
              static_cast<long long>(r.steps_done), r.last_reward);
  if (!r.model_path.empty()) std::printf("wrote %s\n", r.model_path.c_str());
}

// This command's arguments without those only the launcher reads, plus the run name (given
// once, whether the user named it or not).
std::vector<std::string> updater_arguments(const RlooArgs& a) {
  static const std::set<std::string> launcher_only = {"--generators",        "--broker",
                                                      "--max-backlog",       "--run-name",
                                                      "--generator-threads", "--max-restarts"};
  std::vector<std::string> out;
  for (size_t i = 0; i < a.argv.size(); ++i) {
    const std::string& arg = a.argv[i];
    if (arg == "--sync") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (launcher_only.count(name)) {
      if (name == arg) ++i;  // "--name value": skip the value too
      continue;
    }
    out.push_back(arg);
  }
  out.insert(out.end(), {"--run-name", default_run_name(a.u)});
  return out;
}

std::vector<std::string> generator_arguments(const RlooArgs& a) {
  const RlooRunOptions& o = a.u.rl;
  const int64_t backlog = a.max_backlog > 0 ? a.max_backlog : 2 * o.prompts_per_step;
  std::vector<std::string> args = {"--base",
                                   o.base,
                                   "--prompts",
                                   o.prompts,
                                   "--work",
                                   (std::filesystem::path(o.out_dir) / "generators").string(),
                                   "--run-name",
                                   default_run_name(a.u),
                                   "-k",
                                   std::to_string(o.samples_per_prompt),
                                   "--max-new-tokens",
                                   std::to_string(o.max_new_tokens),
                                   "--temperature",
                                   std::to_string(o.temperature),
                                   "--seed",
                                   std::to_string(o.seed),
                                   "--max-backlog",
                                   std::to_string(backlog),
                                   "-t",
                                   std::to_string(a.generator_threads),
                                   "--broker-timeout",
                                   std::to_string(a.u.redis.retry_window_s)};
  if (!o.reward_model.empty()) args.insert(args.end(), {"--reward-model", o.reward_model});
  return args;
}

int run_async(RlooArgs& a) {
  std::filesystem::create_directories(a.u.rl.out_dir);
  AsyncLaunch l{a.generators,          a.max_restarts, a.broker,
                default_run_name(a.u), a.u.rl.out_dir, updater_arguments(a),
                generator_arguments(a)};
  return launch_async_rloo(l);
}

void add_rloo(CLI::App& app, RlooArgs& a, int& status) {
  CLI::App* cmd = app.add_subcommand(
      "rloo",
      "Reinforcement learning with RLOO on rule-rewarded tasks: a LoRA policy on a "
      "frozen base, synchronous or (--generators N) asynchronous over a Redis broker; "
      "docs/rl.md");
  add_loop_options(cmd, a.u.rl);
  add_sampling_options(cmd, a.u.rl);
  add_broker_options(cmd, a.u);
  cmd->add_flag("--sync", a.sync,
                "Sample and update in turn in this process (the default "
                "without --generators)");
  cmd->add_option("--generators", a.generators,
                  "Asynchronous: start this many trajectory generators, the updater and (without "
                  "--broker) a Redis server as separate processes")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--broker", a.broker, "Asynchronous: the Redis server to use (HOST:PORT)");
  cmd->add_option("--max-backlog", a.max_backlog,
                  "Asynchronous: generators pause while this many groups wait unconsumed "
                  "(default: 2 x --prompts-per-step)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--generator-threads", a.generator_threads,
                  "Asynchronous: compute threads per generator")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-restarts", a.max_restarts,
                  "Asynchronous: how often a killed generator or updater is started again")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->callback([&a, &status] {
    if (a.sync && a.generators > 0)
      throw_error(ErrorCode::kInvalidArgument, "--sync and --generators exclude each other");
    if (a.generators == 0 && !a.broker.empty())
      throw_error(ErrorCode::kInvalidArgument, "--broker needs --generators N");
    if (a.generators == 0) return print_result(run_rloo(a.u.rl));
    status = run_async(a);
  });
}

void add_updater(CLI::App& app, RlooArgs& a) {
  CLI::App* cmd =
      app.add_subcommand("rloo-updater",
                         "The policy updater of an asynchronous RLOO run: reads trajectories from "
                         "the broker, updates, publishes policy versions (docs/rl.md)");
  add_loop_options(cmd, a.u.rl);
  add_broker_options(cmd, a.u);
  // Accepted so that the launcher can pass its own arguments through; the generators use them.
  cmd->add_option("--prompts", a.u.rl.prompts, "(read by the generators)");
  cmd->add_option("-k,--samples", a.u.rl.samples_per_prompt, "(read by the generators)");
  cmd->add_option("--max-new-tokens", a.u.rl.max_new_tokens, "(read by the generators)");
  cmd->add_option("--temperature", a.u.rl.temperature, "(read by the generators)");
  cmd->add_option("--reward-model", a.u.rl.reward_model, "(read by the generators)");
  cmd->add_option("--broker", a.broker, "The Redis server (HOST:PORT)")->required();
  cmd->add_option("--consumer", a.u.consumer,
                  "This updater's consumer name in the stream's group (a restarted updater "
                  "must reuse it to get back what it had read)")
      ->capture_default_str();
  cmd->callback([&a] {
    a.u.broker = broker::BrokerAddress::parse(a.broker);
    a.u.run_name = default_run_name(a.u);
    print_result(run_rloo_updater(a.u));
  });
}

}  // namespace

void add_rloo_commands(CLI::App& app, int argc, char** argv, int& status) {
  static RlooArgs rloo, updater;
  // The arguments after the subcommand's name (the first "rloo" on the line).
  for (int i = 1, seen = 0; i < argc; ++i) {
    if (seen) rloo.argv.emplace_back(argv[i]);
    seen = seen || std::string(argv[i]) == "rloo";
  }
  add_rloo(app, rloo, status);
  add_updater(app, updater);
}

}  // namespace afm::train
