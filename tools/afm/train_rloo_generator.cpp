#include "train_rloo_generator.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/cpu_count.h"
#include "rl/generator.h"

namespace afm::cli {

void setup_train_rloo_generator(CLI::App& train) {
  struct Args {
    rl::GeneratorOptions o;
    std::string broker, work = "rloo-generators";
    bool quiet = false;
  };
  auto a = std::make_shared<Args>();
  rl::GeneratorOptions& o = a->o;
  CLI::App* cmd =
      train.add_subcommand("rloo-generator",
                           "One trajectory generator of an asynchronous RLOO run: samples with the "
                           "announced policy, publishes scored groups to the broker (docs/rl.md)");
  cmd->add_option("--broker", a->broker, "The Redis server (HOST:PORT)")->required();
  cmd->add_option("--run-name", o.run, "The run's namespace on the broker")->required();
  cmd->add_option("--base", o.base, "The base GGUF the updater trains on")->required();
  cmd->add_option("--prompts", o.prompts,
                  "JSONL conversations with reference answers (afm data synth --format jsonl)")
      ->required();
  cmd->add_option("--reward-model", o.reward_model,
                  "Reward model (afm train reward) scoring prompts without a rule reward");
  cmd->add_option("--id", o.generator_id, "This generator's number (seeds, group ids)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--work", a->work,
                  "Folder for the loaded policy files (this generator uses WORK/<id>)")
      ->capture_default_str();
  cmd->add_option("-k,--samples", o.samples_per_prompt, "Completions per prompt (at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 10));
  cmd->add_option("--max-new-tokens", o.rollout.max_new_tokens, "Longest completion")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  cmd->add_option("--temperature", o.rollout.temperature, "Sampling temperature")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 4.0));
  cmd->add_option("--seed", o.seed, "Seed of the prompt choice and the sampling")
      ->capture_default_str();
  cmd->add_option("--max-backlog", o.max_backlog,
                  "Pause while this many groups wait unconsumed on the broker")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-groups", o.max_groups, "Stop after this many groups (0: at the end)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--broker-timeout", o.redis.retry_window_s,
                  "Seconds to keep retrying an unreachable broker before failing")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  o.rollout.threads = physical_cores();
  cmd->add_option("-t,--threads", o.rollout.threads, "Compute threads")->check(CLI::Range(1, 4096));
  cmd->add_flag("-q,--quiet", a->quiet, "No line per policy version loaded");
  cmd->callback([a] {
    a->o.broker = broker::BrokerAddress::parse(a->broker);
    a->o.work_dir = (std::filesystem::path(a->work) / std::to_string(a->o.generator_id)).string();
    a->o.verbose = !a->quiet;
    const rl::GeneratorStats s = rl::run_generator(a->o);
    std::fprintf(stderr,
                 "generator %lld: %lld groups, %lld samples, %lld tokens, %.0f tokens/s, %lld "
                 "policy versions\n",
                 static_cast<long long>(a->o.generator_id), static_cast<long long>(s.groups),
                 static_cast<long long>(s.samples), static_cast<long long>(s.completion_tokens),
                 s.completion_tokens / std::max(s.sample_seconds, 1e-9),
                 static_cast<long long>(s.policies_loaded));
  });
}

}  // namespace afm::cli
