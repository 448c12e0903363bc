#include "rl/generator.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/hash_mix.h"
#include "model/lora.h"
#include "rl/policy_channel.h"
#include "rl/replay_buffer.h"

namespace afm::rl {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void pause_briefly() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

// Follows the announced policy version; loads a new one only between groups.
class PolicyFollower {
 public:
  PolicyFollower(const GeneratorOptions& o, PolicyChannel& channel, Rollout& rollout)
      : options_(o), channel_(channel), rollout_(rollout) {}

  int64_t version() const { return loaded_; }
  int64_t loads() const { return loads_; }

  // Returns false when the run finished before any version was announced.
  bool refresh() {
    for (;;) {
      const std::optional<int64_t> announced = channel_.announced();
      if (announced && *announced == loaded_) return true;
      if (announced) {
        try {
          load(*announced);
          return true;
        } catch (const Error& e) {
          if (e.code() != ErrorCode::kNotFound) throw;  // superseded meanwhile: take the next
        }
      }
      if (loaded_ >= 0) return true;
      if (channel_.finished()) return false;
      pause_briefly();
    }
  }

 private:
  void load(int64_t version) {
    const std::string bytes = channel_.fetch(version);
    const fs::path path =
        fs::path(options_.work_dir) / ("policy-v" + std::to_string(version) + ".gguf");
    AtomicFileWriter out(path.string());
    out.write(bytes);
    out.commit();
    rollout_.use_policy(
        model::LoraAdapter::load(path.string(), rollout_.model().weights()->file()));
    if (!current_path_.empty()) fs::remove(current_path_);
    current_path_ = path;
    loaded_ = version;
    ++loads_;
    if (options_.verbose)
      std::fprintf(stderr, "generator %lld: policy version %lld\n",
                   static_cast<long long>(options_.generator_id), static_cast<long long>(version));
  }

  const GeneratorOptions& options_;
  PolicyChannel& channel_;
  Rollout& rollout_;
  int64_t loaded_ = -1, loads_ = 0;
  fs::path current_path_;
};

}  // namespace

GeneratorStats run_generator(const GeneratorOptions& o) {
  if (o.samples_per_prompt < 2)
    throw_error(ErrorCode::kInvalidArgument, "a generator needs at least 2 samples per prompt");
  const std::vector<RlTask> tasks = read_rl_tasks(o.prompts, !o.reward_model.empty());
  fs::create_directories(o.work_dir);
  broker::RedisClient client(o.broker, o.redis);
  PolicyChannel channel(client, o.run);
  ReplayBuffer replay(client, o.run);
  Rollout rollout(LoadedModel::load(o.base), o.rollout);
  rollout.set_reward_model(load_reward_model(o.reward_model, o.rollout.threads));
  PolicyFollower policy(o, channel, rollout);

  const uint64_t nonce = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch() /
                                               std::chrono::milliseconds(1));
  const uint64_t stream_seed =
      data::mix64(data::mix64(o.seed, static_cast<uint64_t>(o.generator_id)), nonce);
  GeneratorStats stats;
  for (uint64_t n = 0; o.max_groups == 0 || stats.groups < o.max_groups; ++n) {
    if (channel.finished() || !policy.refresh()) break;
    stats.policies_loaded = policy.loads();
    while (replay.backlog() >= o.max_backlog) {
      if (channel.finished()) return stats;
      pause_briefly();
    }
    const auto t0 = Clock::now();
    const uint64_t pick = data::mix64(stream_seed, n);
    TrajectoryGroup group;
    group.id =
        std::to_string(o.generator_id) + "-" + std::to_string(nonce) + "-" + std::to_string(n);
    group.version = policy.version();
    group.generator = o.generator_id;
    group.task = static_cast<int64_t>(pick % tasks.size());
    group.kind = reward_kind_name(tasks[group.task].kind);
    for (int64_t k = 0; k < o.samples_per_prompt; ++k) {
      group.samples.push_back(
          rollout.trajectory(tasks[group.task], data::mix64(pick, static_cast<uint64_t>(k))));
      stats.completion_tokens += group.samples.back().completion_tokens;
    }
    group.sample_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    replay.publish(encode_group(group));
    stats.groups++, stats.samples += o.samples_per_prompt;
    stats.sample_seconds += group.sample_seconds;
  }
  return stats;
}

}  // namespace afm::rl
