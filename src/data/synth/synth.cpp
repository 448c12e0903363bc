#include "data/synth/synth.h"

#include <algorithm>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/document_io.h"
#include "data/hash_mix.h"
#include "data/synth/openai_jsonl.h"
#include "data/synth/synth_rng.h"
#include "data/synth/tasks.h"
#include "framework/chat_template.h"

namespace afm::data::synth {

std::string_view task_name(Task task) {
  switch (task) {
    case Task::kExtraction:
      return "extraction";
    case Task::kTools:
      return "tools";
    case Task::kArithmetic:
      return "arithmetic";
    case Task::kClassification:
      return "classification";
    case Task::kSmallTalk:
      return "chat";
  }
  AFM_CHECK(false && "unknown task");
  return {};
}

Task parse_task(std::string_view name) {
  std::string known;
  for (Task t : kKnownTasks) {
    if (task_name(t) == name) return t;
    known += (known.empty() ? "" : ", ") + std::string(task_name(t));
  }
  throw_error(ErrorCode::kInvalidArgument,
              "unknown synthetic task '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<Task> canonical_tasks(std::vector<Task> tasks) {
  if (tasks.empty()) return {kAllTasks.begin(), kAllTasks.end()};
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  return tasks;
}

Example make_example(uint64_t seed, uint64_t index, const std::vector<Task>& tasks,
                     const SynthKnobs& knobs) {
  AFM_CHECK(!tasks.empty());
  SynthRng rng(mix64(seed, index), knobs);
  const Task task = tasks[rng.below(tasks.size())];
  switch (task) {
    case Task::kExtraction:
      return {task, make_extraction(rng)};
    case Task::kTools:
      return {task, make_tool_use(rng)};
    case Task::kArithmetic:
      return {task, make_arithmetic(rng)};
    case Task::kClassification:
      return {task, make_classification(rng)};
    case Task::kSmallTalk:
      return {task, make_small_talk(rng)};
  }
  AFM_CHECK(false && "unknown task");
  return {};
}

std::string render_example(const Example& example) {
  static const ChatTemplate kTemplate(ChatTemplateKind::kAfm);
  return kTemplate.render(example.messages, /*add_generation_prompt=*/false);
}

namespace {

SynthSummary write_jsonl(const SynthOptions& options, const std::vector<Task>& tasks) {
  AtomicFileWriter out(options.out_path);
  SynthSummary summary;
  for (Task t : tasks) summary.per_task[std::string(task_name(t))] = 0;
  for (uint64_t i = 0; i < options.count; ++i) {
    const Example e = make_example(options.seed, i, tasks, options.knobs);
    out.write(to_openai_conversation(e).dump(-1, ' ', false) + "\n");
    ++summary.per_task[std::string(task_name(e.task))];
    ++summary.documents;
  }
  summary.bytes = out.bytes_written();
  out.commit();
  return summary;
}

}  // namespace

SynthSummary write_synthetic(const SynthOptions& options) {
  const std::vector<Task> tasks = canonical_tasks(options.tasks);
  if (options.format == SynthFormat::kJsonl) return write_jsonl(options, tasks);
  DocumentWriter writer(options.out_path);
  SynthSummary summary;
  for (Task t : tasks) summary.per_task[std::string(task_name(t))] = 0;
  for (uint64_t i = 0; i < options.count; ++i) {
    const Example e = make_example(options.seed, i, tasks, options.knobs);
    if (writer.add(render_example(e))) ++summary.per_task[std::string(task_name(e.task))];
  }
  writer.commit();
  summary.documents = writer.documents();
  summary.bytes = writer.bytes();
  return summary;
}

}  // namespace afm::data::synth
