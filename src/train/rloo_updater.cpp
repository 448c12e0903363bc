#include "train/rloo_updater.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "rl/policy_channel.h"
#include "rl/replay_buffer.h"
#include "rl/trajectory.h"
#include "train/checkpoint.h"
#include "train/cpu_setup.h"
#include "train/json_log.h"
#include "train/lora_export.h"
#include "train/rloo_step.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Staleness and drop counts over the whole run (this process's part of it).
struct Staleness {
  std::map<int64_t, int64_t> histogram;  // versions behind -> groups used
  int64_t dropped_stale = 0, malformed = 0;

  nlohmann::json histogram_json() const {
    nlohmann::json h = nlohmann::json::object();
    for (const auto& [behind, n] : histogram) h[std::to_string(behind)] = n;
    return h;
  }
};

// The groups of one step and what reading them cost.
struct StepInput {
  std::vector<rl::TrajectoryGroup> groups;
  double wait_s = 0;
};

class GroupReader {
 public:
  GroupReader(rl::ReplayBuffer& replay, const RlooUpdaterOptions& o, int64_t vocab)
      : replay_(replay), options_(o), vocab_(vocab) {}

  // Reads until `want` usable groups for the policy at `version`; every entry read joins
  // `consumed` (acknowledged at the next checkpoint).
  StepInput read(int64_t version, int64_t want, std::vector<std::string>& consumed,
                 Staleness& staleness) {
    const auto t0 = Clock::now();
    StepInput in;
    while (static_cast<int64_t>(in.groups.size()) < want) {
      const int64_t need = want - static_cast<int64_t>(in.groups.size());
      const auto entries = replaying_ ? replay_.read_pending(options_.consumer, replayed_to_, need)
                                      : replay_.read_new(options_.consumer, need, 1000);
      if (replaying_ && entries.empty()) replaying_ = false;  // every unacknowledged one is back
      for (const rl::StreamEntry& e : entries) {
        consumed.push_back(e.id);
        if (replaying_) replayed_to_ = e.id;
        std::optional<rl::TrajectoryGroup> g = decode(e);
        if (!g) {
          ++staleness.malformed;
          continue;
        }
        const int64_t behind = std::max<int64_t>(0, version - g->version);
        if (behind > options_.max_staleness) {
          ++staleness.dropped_stale;
          continue;
        }
        staleness.histogram[behind]++;
        in.groups.push_back(std::move(*g));
      }
    }
    in.wait_s = seconds_since(t0);
    return in;
  }

 private:
  std::optional<rl::TrajectoryGroup> decode(const rl::StreamEntry& e) const {
    try {
      rl::TrajectoryGroup g = rl::decode_group(e.payload);
      for (const rl::TrajectorySample& s : g.samples)
        for (int32_t t : s.tokens)
          if (t >= vocab_)
            throw_error(ErrorCode::kFormat, "trajectory group: token " + std::to_string(t) +
                                                " is outside the vocabulary");
      return g;
    } catch (const Error& err) {
      std::fprintf(stderr, "updater: skipping stream entry %s: %s\n", e.id.c_str(), err.what());
      return std::nullopt;
    }
  }

  rl::ReplayBuffer& replay_;
  const RlooUpdaterOptions& options_;
  int64_t vocab_;
  // After a restart: the entries read before and not acknowledged come back first, in order.
  bool replaying_ = true;
  std::string replayed_to_ = "0";
};

std::vector<RlooRow> rows_of(const std::vector<rl::TrajectoryGroup>& groups) {
  std::vector<RlooRow> rows;
  for (size_t g = 0; g < groups.size(); ++g)
    for (const rl::TrajectorySample& s : groups[g].samples) {
      RlooRow r{s.tokens, std::vector<uint8_t>(s.tokens.size(), 0), s.behaviour, s.reward,
                static_cast<int64_t>(g)};
      for (const auto& [b, e] : s.trained)
        for (int64_t t = b; t < e; ++t) r.trained[t] = 1;
      rows.push_back(std::move(r));
    }
  return rows;
}

struct GroupTotals {
  int64_t samples = 0, completion_tokens = 0, positions = 0;
  double sample_seconds = 0, reward_sum = 0;
  std::map<std::string, std::pair<double, int>> by_kind;
};

GroupTotals totals_of(const std::vector<rl::TrajectoryGroup>& groups) {
  GroupTotals t;
  for (const rl::TrajectoryGroup& g : groups) {
    t.sample_seconds += g.sample_seconds;
    for (const rl::TrajectorySample& s : g.samples) {
      ++t.samples;
      t.completion_tokens += s.completion_tokens;
      t.positions += static_cast<int64_t>(s.tokens.size());
      auto& [sum, n] = t.by_kind[g.kind];
      sum += s.reward, ++n;
    }
  }
  return t;
}

nlohmann::json config_json(const RlooUpdaterOptions& u) {
  const RlooRunOptions& o = u.rl;
  return {{"base", o.base},
          {"broker", u.broker.str()},
          {"run_name", u.run_name},
          {"rank", o.lora.rank},
          {"alpha", o.lora.alpha},
          {"kl_beta", o.rloo.kl_beta},
          {"max_ratio", o.rloo.max_ratio},
          {"max_staleness", u.max_staleness},
          {"lr", o.optim.lr},
          {"steps", o.steps},
          {"prompts_per_step", o.prompts_per_step},
          {"seed", o.seed}};
}

// Writes version `version` of the policy to <out>/policy/ and announces it on the broker;
// keeps the last `keep` versions in both places.
void publish_policy(const LanguageModel& policy, const RlooUpdaterOptions& u,
                    rl::PolicyChannel& channel, int64_t version, int64_t keep) {
  const fs::path dir = fs::path(u.rl.out_dir) / "policy";
  fs::create_directories(dir);
  const auto file = [&](int64_t v) { return dir / ("policy-v" + std::to_string(v) + ".gguf"); };
  export_lora_adapter(policy, u.rl.base, {}, file(version).string());
  channel.publish(version, read_file_to_string(file(version).string()), keep);
  if (version - keep >= 0) fs::remove(file(version - keep));
}

}  // namespace

RlooRunResult run_rloo_updater(const RlooUpdaterOptions& u) {
  const RlooRunOptions& o = u.rl;
  if (o.out_dir.empty()) throw_error(ErrorCode::kInvalidArgument, "rloo needs an output folder");
  if (u.max_staleness < 0) throw_error(ErrorCode::kInvalidArgument, "--max-staleness must be >= 0");
  const CpuSetup cpu = configure_cpu(o.run.threads, o.run.cpu_bf16);
  RlooPolicy loaded = load_rloo_policy(o);
  LanguageModel* policy = loaded.model.get();
  AdamW& opt = *loaded.optimizer;
  int64_t step = loaded.next_step;

  broker::RedisClient client(u.broker, u.redis);
  rl::PolicyChannel channel(client, u.run_name);
  rl::ReplayBuffer replay(client, u.run_name);
  replay.create_consumer_group();
  if (step < o.steps) channel.reset_finished();
  const int64_t keep = u.max_staleness + 2;
  publish_policy(*policy, u, channel, step, keep);

  JsonLog log(o.out_dir, o.run.json_stdout);
  log.write({{"event", step == 0 ? "start" : "resume"},
             {"step", step},
             {"config", config_json(u)},
             {"trainable_parameters", policy->trainable_count()}});
  GroupReader reader(replay, u, policy->config().vocab_size);
  Staleness staleness;
  std::vector<std::string> consumed;  // read since the last checkpoint
  ProgressBar bar("rloo", static_cast<uint64_t>(o.steps), ProgressBar::Unit::kItems);
  bar.update(static_cast<uint64_t>(step));
  const auto start = Clock::now();
  RlooRunResult result;
  int64_t steps_this_run = 0;
  while (step < o.steps) {
    const StepInput in = reader.read(step, o.prompts_per_step, consumed, staleness);
    const auto t1 = Clock::now();
    const RlooTerms terms = rloo_update(*policy, opt, collate_rloo(rows_of(in.groups)), o.rloo,
                                        o.grad_clip, cpu.bf16_autocast);
    const double update_s = seconds_since(t1);
    ++step;
    publish_policy(*policy, u, channel, step, keep);
    const GroupTotals t = totals_of(in.groups);
    nlohmann::json by_kind = nlohmann::json::object();
    for (const auto& [kind, v] : t.by_kind) by_kind[kind] = v.first / v.second;
    double behind_sum = 0;
    std::vector<std::string> ids;
    for (const rl::TrajectoryGroup& g : in.groups) {
      behind_sum += static_cast<double>(std::max<int64_t>(0, step - 1 - g.version));
      ids.push_back(g.id);
    }
    result.last_reward = terms.mean_reward;
    log.write({{"step", step},
               {"reward", terms.mean_reward},
               {"reward_by_task", by_kind},
               {"kl", terms.mean_kl},
               {"loss", terms.loss.item<double>()},
               {"advantage_abs_mean", terms.advantages.abs().mean().item<double>()},
               {"ratio_mean", terms.mean_ratio},
               {"truncated_share", terms.truncated_share},
               {"staleness_mean", behind_sum / std::max<size_t>(1, in.groups.size())},
               {"staleness_histogram", staleness.histogram_json()},
               {"dropped_stale", staleness.dropped_stale},
               {"malformed", staleness.malformed},
               {"samples", t.samples},
               {"completion_tokens", t.completion_tokens},
               {"generator_tokens_per_s", t.completion_tokens / std::max(t.sample_seconds, 1e-9)},
               {"updater_tokens_per_s", t.positions / std::max(update_s, 1e-9)},
               {"groups", ids},
               {"wait_s", in.wait_s},
               {"update_s", update_s},
               {"elapsed_s", seconds_since(start)}});
    char detail[96];
    std::snprintf(detail, sizeof(detail), "reward %.3f kl %.3f", terms.mean_reward, terms.mean_kl);
    bar.set_detail(detail);
    bar.update(static_cast<uint64_t>(step));
    const bool stopping = o.run.stop_after > 0 && ++steps_this_run >= o.run.stop_after;
    if ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps || stopping) {
      save_checkpoint(o.out_dir, *policy, opt, {step, terms.mean_reward}, config_json(u));
      replay.acknowledge(consumed);
      consumed.clear();
    }
    if (stopping) break;
  }
  bar.finish();
  result.steps_done = step;
  export_rloo_result(*policy, o, result);
  if (step >= o.steps) channel.finish();
  return result;
}

}  // namespace afm::train
