#include "train/trainer.h"

#include "base/error.h"
#include "train/batch_sampler.h"
#include "train/gguf_import.h"
#include "train/shard_stream.h"
#include "train/training_loop.h"

namespace afm::train {
namespace {

// Windows of seq_len + 1 tokens from the shards: input the first seq_len, target the last.
class ShardBatches : public BatchSource {
 public:
  ShardBatches(const TrainConfig& c) : c_(c), data_(open_shards(c.shards)) {
    if (data_.vocab_size != c.model.vocab_size)
      throw_error(ErrorCode::kInvalidArgument,
                  "the shards in " + c.shards + " have vocab_size " +
                      std::to_string(data_.vocab_size) + ", the model config says " +
                      std::to_string(c.model.vocab_size));
  }
  TrainBatch train(int64_t step, int64_t micro) const override {
    return split(training_batch(data_.train, c_.optim.batch_size, c_.seq_len,
                                {c_.seed, step, micro, 0}));
  }
  int64_t eval_count() const override { return c_.eval_batches; }
  TrainBatch eval(int64_t i) const override {
    return split(evaluation_batch(data_.val, c_.optim.batch_size, c_.seq_len, i, c_.eval_batches));
  }
  int64_t tokens_per_micro_batch() const override { return c_.optim.batch_size * c_.seq_len; }
  nlohmann::json describe() const override {
    return {{"train_tokens", data_.train.size}, {"val_tokens", data_.val.size}};
  }

 private:
  TrainBatch split(const torch::Tensor& windows) const {
    const int64_t t = windows.size(1) - 1;
    return {windows.slice(1, 0, t), windows.slice(1, 1, t + 1), {}};
  }
  const TrainConfig& c_;
  ShardSplits data_;
};

}  // namespace

RunResult run_pretraining(const TrainConfig& config, const RunOptions& run,
                          const PretrainStart& start) {
  TrainConfig c = config;
  if (!start.init_gguf.empty()) c.model = read_gguf_model_config(start.init_gguf);
  const ShardBatches data(c);
  return run_training(c, run, [&] {
    std::shared_ptr<LanguageModel> model = start.init_gguf.empty()
                                               ? make_language_model(c.model, c.seed)
                                               : import_gguf_model(start.init_gguf).model;
    if (start.qat) model->attach_qat(*start.qat);
    return model;
  }, data);
}

}  // namespace afm::train
