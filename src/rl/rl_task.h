// A prompt for reinforcement learning with the truth a rule reward checks: one conversation
// of a JSONL file (the `afm data synth --format jsonl` shape; data/conversation_line.h) cut
// at its first assistant turn. The messages before that turn, with the tools and response
// format, are the prompt; the turn itself is the reference the reward compares with:
//   response format given          -> extraction: 0.2 x schema validity + 0.8 x the share of
//                                      the reference object's fields the reply has right
//   the reference calls tools      -> tool calls: rewards.h tool_call_reward
//   the reference states an answer ("The answer is N") -> arithmetic: the stated answer equals N
// Anything else has no rule reward; with `free_answers` it is a free-answer task ("chat"),
// scored by a reward model (reward_model.h; the caller's job), else an error naming the line.
//
// Synthetic conversations keep the afm template's tool list and response-format block as text
// inside the system and user turns (data/synth/openai_jsonl.h); the task lifts them into
// `tools` and `response_schema` (checking that the afm template renders the lifted request to
// the same text), so the runtime constrains the sampled calls and answers as it does for API
// requests.
//
// Thread safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "framework/chat_service.h"

namespace afm::rl {

enum class RewardKind { kExtraction, kToolCall, kArithmetic, kFreeAnswer };
// "extraction", "tools", "arithmetic", "chat"
const char* reward_kind_name(RewardKind kind);

struct RlTask {
  ChatRequest prompt;
  ChatMessage reference;
  RewardKind kind = RewardKind::kArithmetic;
  // What the reward compares with, read from the reference once: the record (extraction) or
  // the stated answer (arithmetic); null for tool calls (reference.tool_calls).
  nlohmann::ordered_json truth;
};

// Errors: afm::Error(kInvalidArgument) "WHERE: ..." for a conversation without an assistant
// turn or with a reference no rule reward checks.
RlTask make_rl_task(const ChatRequest& conversation, const std::string& where,
                    bool free_answers = false);

// Every non-blank line of a JSONL file; kNotFound when it cannot be opened, the line errors
// of parse_conversation and make_rl_task, kInvalidArgument for a file without tasks.
std::vector<RlTask> read_rl_tasks(const std::string& path, bool free_answers = false);

// The rule reward of `reply` (the ChatService result for task.prompt) in [0, 1];
// Error(kInvalidArgument) for a free-answer task (a reward model scores those).
double task_reward(const RlTask& task, const ChatResult& reply);

}  // namespace afm::rl
