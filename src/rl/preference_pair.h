// Preference pairs for reward-model training (report section 5.1; docs/rl.md "Reward model"):
// one prompt, a chosen and a rejected assistant reply, and optionally an absolute grade in
// [0, 1] of each (single-sided grading, used as a regularizer of the pairwise loss).
//
// JSONL line: a conversations line (data/conversation_line.h: "messages", "tools",
// "response_format" ..., validated by the server's request parser) ending before the reply,
// plus "chosen" and "rejected" (an assistant message object, or a string for a text reply),
// and optional "chosen_grade" / "rejected_grade" numbers in [0, 1].
//
// synthesize_preference_lines() makes pairs from conversations (`afm data synth --format
// jsonl`): chosen = the conversation's first assistant turn, rejected = that turn with one
// mistake of the kind its task makes (a wrong stated answer, one wrong extracted field, one
// wrong tool argument or tool) graded by the task's rule reward (rl_task.h), or, for free
// answers, the reply of another conversation (graded 0).
//
// Errors: afm::Error(kInvalidArgument) "FILE:LINE: ..." naming the problem; kNotFound for a
// missing file. Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/chat_service.h"

namespace afm::rl {

struct PreferencePair {
  ChatRequest prompt;  // the turns before the reply, tools, response format
  ChatMessage chosen, rejected;
  std::optional<double> chosen_grade, rejected_grade;
};

PreferencePair parse_preference_pair(const std::string& line, const std::string& where);
std::vector<PreferencePair> read_preference_pairs(const std::string& path);

// One pair line per input line that has an assistant turn (others are skipped); the choice of
// mistakes follows `seed`.
std::vector<std::string> synthesize_preference_lines(const std::vector<std::string>& lines,
                                                     uint64_t seed);

}  // namespace afm::rl
