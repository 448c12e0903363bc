// `afm data synth`: synthetic chat documents for the four task families (tasks.h), rendered
// in the afm chat template and written as a document file (document_io.h).
//
// Contract: document i is a pure function of (seed, i, the task set): it draws from its own
// SynthRng seeded with mix64(seed, i), first the task (uniform over the set, in canonical
// order), then the example. The same seed, count and task set give a byte-identical file on
// every platform. The file is written atomically. parse_task throws Error(kInvalidArgument)
// naming an unknown task and listing the known ones.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "data/synth/synth_rng.h"
#include "framework/chat_template.h"

namespace afm::data::synth {

enum class Task { kExtraction, kTools, kArithmetic, kClassification, kSmallTalk };
// The default set (the pretraining stream); small talk only when named.
inline constexpr std::array<Task, 4> kAllTasks = {Task::kExtraction, Task::kTools,
                                                  Task::kArithmetic, Task::kClassification};
inline constexpr std::array<Task, 5> kKnownTasks = {
    Task::kExtraction, Task::kTools, Task::kArithmetic, Task::kClassification, Task::kSmallTalk};

// "extraction", "tools", "arithmetic", "classification", "chat"
std::string_view task_name(Task task);
Task parse_task(std::string_view name);
// Sorted into canonical (enum) order without duplicates; empty means the default set.
std::vector<Task> canonical_tasks(std::vector<Task> tasks);

struct Example {
  Task task;
  std::vector<ChatMessage> messages;
};

// Document `index` of the stream for `seed`; `tasks` must be canonical and non-empty.
// knobs: see SynthKnobs (synth_rng.h); the default is the pretraining stream.
Example make_example(uint64_t seed, uint64_t index, const std::vector<Task>& tasks,
                     const SynthKnobs& knobs = {});
// The messages in the afm chat template, no generation prompt.
std::string render_example(const Example& example);

enum class SynthFormat {
  kDocuments,  // a document file of rendered chats (document_io.h), for `afm data shards`
  kJsonl,      // one OpenAI-shaped conversation per line (openai_jsonl.h), for `afm train sft`
};

struct SynthOptions {
  uint64_t seed = 0;
  uint64_t count = 0;
  std::string out_path;
  std::vector<Task> tasks;  // empty: all
  SynthFormat format = SynthFormat::kDocuments;
  SynthKnobs knobs;  // invented names, bare arithmetic (synth_rng.h)
};

struct SynthSummary {
  uint64_t documents = 0, bytes = 0;
  std::map<std::string, uint64_t> per_task;
};

SynthSummary write_synthetic(const SynthOptions& options);

}  // namespace afm::data::synth
