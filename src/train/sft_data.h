// Fine-tuning batches: the record files `afm data sft` renders (data/sft_records.h), packed.
//
// Packing: conversations are placed whole, in a seeded shuffled order, into rows of seq_len
// positions (a conversation of n tokens takes n - 1: its inputs, each predicting the next
// token); a row is closed when the next conversation does not fit, and its tail is padding.
// Rows carry a Packing (segment per position, position inside the conversation), so no token
// attends across conversations and each starts at RoPE position 0. Targets are -100 except
// at the assistant's tokens. Conversations longer than seq_len + 1 tokens are left out.
//
// Errors: afm::Error naming the folder or file (a missing meta.json, records made for another
// vocabulary, no conversation that fits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/sft_records.h"
#include "train/training_loop.h"

namespace afm::train {

// The train and held-out records of a folder written by `afm data sft`.
struct SftData {
  data::SftRecordFile train, val;
};
SftData open_sft_data(const std::string& dir, int64_t model_vocab_size);

// Records packed into rows (see the file comment), in the order given.
struct PackedRows {
  torch::Tensor input, target, segments, positions;  // (rows, seq_len) int64 each
};
PackedRows pack_examples(const std::vector<const data::SftRecord*>& records, int64_t seq_len);

// Batches of packed rows: training rows are packed once from a seeded shuffle of the train
// split and micro-batch rows are drawn by a hash of (seed, step, micro, row), so a batch
// depends only on its coordinates; evaluation walks the held-out rows in order (at most
// max_eval_batches batches).
class SftBatches : public BatchSource {
 public:
  SftBatches(const SftData& data, int64_t batch_size, int64_t seq_len, uint64_t seed,
             int64_t max_eval_batches);
  TrainBatch train(int64_t step, int64_t micro) const override;
  int64_t eval_count() const override { return eval_count_; }
  TrainBatch eval(int64_t i) const override;
  int64_t tokens_per_micro_batch() const override { return batch_size_ * seq_len_; }
  nlohmann::json describe() const override { return describe_; }

 private:
  PackedRows train_, val_;
  int64_t batch_size_, seq_len_, eval_count_;
  uint64_t seed_;
  nlohmann::json describe_;
};

}  // namespace afm::train
