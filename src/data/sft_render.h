// `afm data sft`: a JSONL file of conversations rendered for fine-tuning with a model's chat
// template and tokenizer, split into train and held-out record files (sft_records.h).
//
// Each line is one conversation in the shape of an OpenAI chat-completions request (no
// "model" needed): `messages` (system, user, assistant, tool; assistant `tool_calls`),
// optional `tools` and `response_format` (json_schema); other members (e.g. "metadata") are
// ignored. Lines are validated by the server's request parser and rendered by
// framework/training_example.h, so the model is trained on exactly the tokens it is prompted
// with. Blank lines are skipped. A conversation goes to the held-out split when a hash of
// (seed, line number) falls under val_fraction.
//
// Output folder: train.sft, val.sft and meta.json (counts, seq_len, vocab_size, the model and
// input files). Written atomically, file by file.
//
// Errors: afm::Error(kInvalidArgument) naming "FILE:LINE" and the problem for a malformed line
// (bad JSON, a request the server would refuse, no assistant turn); kNotFound / kIo for files;
// the model's own load errors. Conversations longer than max_tokens are skipped and counted.
#pragma once

#include <cstdint>
#include <string>

namespace afm::data {

struct SftRenderOptions {
  std::string model;           // GGUF whose chat template and tokenizer render the lines
  std::string input;           // JSONL
  std::string out_dir;
  int64_t max_tokens = 513;    // longer conversations are skipped (a row of 512 + 1)
  double val_fraction = 0.05;
  uint64_t seed = 1;
};

struct SftRenderSummary {
  int64_t conversations = 0, train = 0, val = 0, skipped_long = 0;
  int64_t train_tokens = 0, train_trained_tokens = 0, val_trained_tokens = 0;
};

SftRenderSummary render_sft_jsonl(const SftRenderOptions& options);

}  // namespace afm::data
