#include "train/draft_data.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "train/sft_data.h"
#include "train/shard_stream.h"

namespace afm::train {
namespace {

// Windows of seq_len + 1 shard tokens: input the first seq_len, target the last seq_len.
class ShardWindows : public BatchSource {
 public:
  ShardWindows(const DraftDataOptions& o, int64_t rows)
      : data_(open_shards(o.shards)), rows_(rows), seq_len_(o.seq_len), seed_(o.seed) {
    if (data_.vocab_size != o.vocab_size)
      throw_error(ErrorCode::kInvalidArgument,
                  "the shards in " + o.shards + " have vocab_size " +
                      std::to_string(data_.vocab_size) + ", the base model " +
                      std::to_string(o.vocab_size) + ": shard the text with the base's tokenizer");
    if (data_.train.size < static_cast<uint64_t>(seq_len_) + 1)
      throw_error(ErrorCode::kInvalidArgument,
                  "the shards in " + o.shards + " hold " + std::to_string(data_.train.size) +
                      " training tokens, fewer than one window of --seq-len + 1");
    eval_count_ = data_.val.size > static_cast<uint64_t>(seq_len_) ? o.eval_batches : 0;
  }
  TrainBatch train(int64_t step, int64_t micro) const override {
    return split(training_batch(data_.train, rows_, seq_len_, {seed_, step, micro, 0}));
  }
  int64_t eval_count() const override { return eval_count_; }
  TrainBatch eval(int64_t i) const override {
    return split(evaluation_batch(data_.val, rows_, seq_len_, i, eval_count_));
  }
  int64_t tokens_per_micro_batch() const override { return rows_ * seq_len_; }
  nlohmann::json describe() const override {
    return {{"train_tokens", data_.train.size}, {"val_tokens", data_.val.size}};
  }

 private:
  static TrainBatch split(const torch::Tensor& windows) {
    const int64_t t = windows.size(1) - 1;
    return {windows.slice(1, 0, t), windows.slice(1, 1, t + 1), {}};
  }
  ShardSplits data_;
  int64_t rows_, seq_len_, eval_count_ = 0;
  uint64_t seed_;
};

// Conversation rows (SftBatches) over the data they pack; SftBatches keeps no reference to it.
class SftRows : public BatchSource {
 public:
  SftRows(const DraftDataOptions& o, int64_t rows)
      : batches_(open_sft_data(o.sft, o.vocab_size), rows, o.seq_len, o.seed, o.eval_batches) {}
  TrainBatch train(int64_t step, int64_t micro) const override {
    return batches_.train(step, micro);
  }
  int64_t eval_count() const override { return batches_.eval_count(); }
  TrainBatch eval(int64_t i) const override { return batches_.eval(i); }
  int64_t tokens_per_micro_batch() const override { return batches_.tokens_per_micro_batch(); }
  nlohmann::json describe() const override { return batches_.describe(); }

 private:
  SftBatches batches_;
};

// A window row as a packed row of one document.
TrainBatch as_packed(TrainBatch b) {
  const int64_t rows = b.input.size(0), t = b.input.size(1);
  b.packing.segments = torch::zeros({rows, t}, torch::kInt64);
  b.packing.positions = torch::arange(t, torch::kInt64).unsqueeze(0).expand({rows, t}).clone();
  return b;
}

class MixedRows : public BatchSource {
 public:
  MixedRows(std::unique_ptr<BatchSource> shards, std::unique_ptr<BatchSource> sft)
      : shards_(std::move(shards)), sft_(std::move(sft)) {}
  TrainBatch train(int64_t step, int64_t micro) const override {
    const TrainBatch a = as_packed(shards_->train(step, micro));
    const TrainBatch b = sft_->train(step, micro);
    return {torch::cat({a.input, b.input}),
            torch::cat({a.target, b.target}),
            {torch::cat({a.packing.segments, b.packing.segments}),
             torch::cat({a.packing.positions, b.packing.positions})}};
  }
  int64_t eval_count() const override { return shards_->eval_count() + sft_->eval_count(); }
  TrainBatch eval(int64_t i) const override {
    const int64_t n = shards_->eval_count();
    return i < n ? shards_->eval(i) : sft_->eval(i - n);
  }
  int64_t tokens_per_micro_batch() const override {
    return shards_->tokens_per_micro_batch() + sft_->tokens_per_micro_batch();
  }
  nlohmann::json describe() const override {
    nlohmann::json j = shards_->describe();
    j.update(sft_->describe());
    return j;
  }

 private:
  std::unique_ptr<BatchSource> shards_, sft_;
};

}  // namespace

std::unique_ptr<BatchSource> open_draft_data(const DraftDataOptions& o) {
  if (o.shards.empty() && o.sft.empty())
    throw_error(ErrorCode::kInvalidArgument,
                "training needs text: --shards DIR (afm data shards) and/or --data "
                "DIR|F.jsonl (conversations, afm data sft)");
  if (o.sft.empty()) return std::make_unique<ShardWindows>(o, o.batch_size);
  if (o.shards.empty()) return std::make_unique<SftRows>(o, o.batch_size);
  if (!(o.sft_share > 0 && o.sft_share < 1))
    throw_error(ErrorCode::kInvalidArgument,
                "--sft-share must be between 0 and 1 (exclusive) when both --shards and --data "
                "are given, got " +
                    std::to_string(o.sft_share));
  if (o.batch_size < 2)
    throw_error(ErrorCode::kInvalidArgument,
                "--batch-size must be at least 2 to mix --shards and --data rows");
  const int64_t sft_rows = std::clamp<int64_t>(
      std::llround(static_cast<double>(o.batch_size) * o.sft_share), 1, o.batch_size - 1);
  return std::make_unique<MixedRows>(std::make_unique<ShardWindows>(o, o.batch_size - sft_rows),
                                     std::make_unique<SftRows>(o, sft_rows));
}

torch::Tensor valid_positions(const TrainBatch& batch) {
  if (!batch.packing.packed()) return torch::ones_like(batch.input, torch::kBool);
  return batch.packing.segments >= 0;
}

}  // namespace afm::train
