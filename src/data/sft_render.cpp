#include "data/sft_render.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/conversation_line.h"
#include "data/hash_mix.h"
#include "data/sft_records.h"
#include "framework/loaded_model.h"
#include "framework/training_example.h"

namespace afm::data {
namespace {

SftRecord render_line(const LoadedModel& model, const std::string& line, const std::string& where) {
  const ChatRequest request = parse_conversation(line, where);
  try {
    TrainingExample e = render_training_example(*model.chat_template(), model.tokenizer(), request);
    return {std::move(e.tokens), std::move(e.trained)};
  } catch (const Error& e) {
    bad_conversation(where, e.what());
  }
}

}  // namespace

SftRenderSummary render_sft_jsonl(const SftRenderOptions& o) {
  const std::shared_ptr<const LoadedModel> model = LoadedModel::load(o.model);
  if (!model->chat_template()) {
    throw_error(ErrorCode::kUnsupported,
                o.model + " has no chat template afm renders: " + model->unavailable_reason());
  }
  if (!std::filesystem::exists(o.input)) throw_error(ErrorCode::kNotFound, o.input + ": no such file");
  std::ifstream in(o.input, std::ios::binary);
  if (!in) throw_error(ErrorCode::kIo, o.input + ": cannot be read");

  const uint32_t vocab = static_cast<uint32_t>(model->tokenizer().vocab_size());
  SftRecordFile train{vocab, {}}, val{vocab, {}};
  SftRenderSummary s;
  std::string line;
  for (uint64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    SftRecord rec = render_line(*model, line, o.input + ":" + std::to_string(number));
    ++s.conversations;
    if (static_cast<int64_t>(rec.tokens.size()) > o.max_tokens) {
      ++s.skipped_long;
      continue;
    }
    const bool held_out = unit_interval(mix64(o.seed, number)) < o.val_fraction;
    if (held_out) {
      s.val_trained_tokens += rec.trained_count();
      val.records.push_back(std::move(rec));
    } else {
      s.train_tokens += static_cast<int64_t>(rec.tokens.size());
      s.train_trained_tokens += rec.trained_count();
      train.records.push_back(std::move(rec));
    }
  }
  s.train = static_cast<int64_t>(train.records.size());
  s.val = static_cast<int64_t>(val.records.size());

  const std::filesystem::path dir(o.out_dir);
  std::filesystem::create_directories(dir);
  write_sft_records((dir / "train.sft").string(), train);
  write_sft_records((dir / "val.sft").string(), val);
  const nlohmann::ordered_json meta = {
      {"format", "afm-sft"}, {"version", kSftVersion}, {"model", o.model}, {"input", o.input},
      {"vocab_size", vocab}, {"max_tokens", o.max_tokens}, {"val_fraction", o.val_fraction},
      {"seed", o.seed}, {"conversations", s.conversations}, {"train", s.train}, {"val", s.val},
      {"skipped_long", s.skipped_long}, {"train_tokens", s.train_tokens},
      {"train_trained_tokens", s.train_trained_tokens},
      {"val_trained_tokens", s.val_trained_tokens}};
  write_file_atomic((dir / "meta.json").string(), meta.dump(2) + "\n");
  return s;
}

}  // namespace afm::data
