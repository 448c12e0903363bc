#include "train/draft.h"

#include <filesystem>
#include <memory>
#include <utility>

#include "base/error.h"
#include "gguf/reader.h"
#include "train/distill_loss.h"
#include "train/draft_data.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train/training_loop.h"

namespace afm::train {
namespace {

// The loss and held-out metrics of distillation from a frozen teacher (distill_loss.h).
class DistillObjective : public Objective {
 public:
  DistillObjective(double temperature, double ce_weight)
      : temperature_(temperature), ce_weight_(ce_weight) {}

  void set_teacher(std::shared_ptr<LanguageModel> teacher) {
    teacher_ = std::move(teacher);
    teacher_->eval();
    for (const torch::Tensor& t : teacher_->trainable_tensors()) t.set_requires_grad(false);
  }

  ObjectiveLoss loss(LanguageModel& model, const TrainBatch& batch) override {
    const torch::Tensor teacher = teacher_logits(batch);
    const DistillTerms d = distill_terms(model.forward(batch.input, batch.packing), teacher,
                                         valid_positions(batch), batch.target, temperature_);
    const double positions = static_cast<double>(std::max<int64_t>(1, d.positions));
    return {d.loss(temperature_, ce_weight_),
            {{"kl", d.kl_sum.detach() / positions},
             {"ce", d.ce_sum.detach() / static_cast<double>(std::max<int64_t>(1, d.targets))},
             {"agreement", d.agree_sum / positions}}};
  }

  nlohmann::json evaluate(LanguageModel& model, const std::function<TrainBatch(int64_t)>& batch,
                          int64_t count) override {
    double kl = 0, kl_t = 0, ce = 0, base_ce = 0, agree = 0, agree_targets = 0;
    int64_t positions = 0, targets = 0;
    for (int64_t i = 0; i < count; ++i) {
      const TrainBatch b = batch(i);
      const torch::Tensor teacher = teacher_logits(b), student = model.forward(b.input, b.packing);
      const torch::Tensor valid = valid_positions(b);
      const DistillTerms d = distill_terms(student, teacher, valid, b.target, 1.0);
      kl += d.kl_sum.item<double>(), ce += d.ce_sum.item<double>();
      agree += d.agree_sum.item<double>(), agree_targets += d.agree_target_sum.item<double>();
      positions += d.positions, targets += d.targets;
      // The base's own CE on the same targets: the floor the draft's CE is measured against.
      base_ce += distill_terms(teacher, teacher, valid, b.target, 1.0).ce_sum.item<double>();
      if (temperature_ != 1.0)
        kl_t +=
            distill_terms(student, teacher, valid, b.target, temperature_).kl_sum.item<double>();
    }
    const double n = static_cast<double>(std::max<int64_t>(1, positions));
    const double m = static_cast<double>(std::max<int64_t>(1, targets));
    const double loss = temperature_ * temperature_ * (temperature_ != 1.0 ? kl_t : kl) / n +
                        (ce_weight_ > 0 ? ce_weight_ * ce / m : 0.0);
    last_ = {{"val_loss", loss},           {"val_kl", kl / n},
             {"val_ce", ce / m},           {"val_base_ce", base_ce / m},
             {"val_agreement", agree / n}, {"val_target_agreement", agree_targets / m},
             {"val_positions", positions}, {"val_targets", targets}};
    return last_;
  }

  const nlohmann::json& last_evaluation() const { return last_; }

 private:
  torch::Tensor teacher_logits(const TrainBatch& batch) {
    torch::NoGradGuard no_grad;
    const torch::Device device = batch.input.device();
    if (teacher_->gguf_parameters().front().tensor.device() != device) teacher_->to(device);
    return teacher_->forward(batch.input, batch.packing);
  }

  double temperature_, ce_weight_;
  std::shared_ptr<LanguageModel> teacher_;
  nlohmann::json last_;
};

// The data's description plus the base's, for the run's first log record.
class DescribedData : public BatchSource {
 public:
  DescribedData(std::unique_ptr<BatchSource> data, nlohmann::json extra)
      : data_(std::move(data)), extra_(std::move(extra)) {}
  TrainBatch train(int64_t step, int64_t micro) const override { return data_->train(step, micro); }
  int64_t eval_count() const override { return data_->eval_count(); }
  TrainBatch eval(int64_t i) const override { return data_->eval(i); }
  int64_t tokens_per_micro_batch() const override { return data_->tokens_per_micro_batch(); }
  nlohmann::json describe() const override {
    nlohmann::json j = data_->describe();
    j.update(extra_);
    return j;
  }

 private:
  std::unique_ptr<BatchSource> data_;
  nlohmann::json extra_;
};

// The draft must carry the base's tokenizer: checked before training, not at export.
void check_base_tokenizer(const std::string& base, int64_t vocab_size) {
  const gguf::File file = gguf::File::open(base);
  const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
  if (tokens == nullptr || !tokens->is_array())
    throw_error(ErrorCode::kInvalidArgument,
                base +
                    " has no tokenizer (tokenizer.ggml.tokens): a draft must carry its base's "
                    "tokenizer, so the runtime can check they share a vocabulary");
  const size_t n = tokens->as_array("tokenizer.ggml.tokens").items.size();
  if (static_cast<int64_t>(n) != vocab_size)
    throw_error(ErrorCode::kInvalidArgument, base + ": the tokenizer has " + std::to_string(n) +
                                                 " tokens, the model's " + "vocabulary " +
                                                 std::to_string(vocab_size));
}

void check_options(const DraftOptions& o, const ModelConfig& base) {
  if (o.out_dir.empty()) throw_error(ErrorCode::kInvalidArgument, "draft needs --out");
  if (!(o.temperature > 0))
    throw_error(ErrorCode::kInvalidArgument,
                "--temperature must be > 0, got " + std::to_string(o.temperature));
  if (!(o.ce_weight >= 0))
    throw_error(ErrorCode::kInvalidArgument,
                "--ce-weight must be >= 0, got " + std::to_string(o.ce_weight));
  if (o.seq_len + 1 > base.context_length)
    throw_error(ErrorCode::kInvalidArgument,
                "--seq-len " + std::to_string(o.seq_len) + " is longer than the base's context (" +
                    std::to_string(base.context_length) + " tokens, minus one)");
}

TrainConfig loop_config(const DraftOptions& o, const ModelConfig& draft) {
  TrainConfig c;
  c.model = draft;
  c.shards = o.shards;
  c.seq_len = o.seq_len;
  c.optim = o.optim;
  c.eval_every = o.eval_every;
  c.eval_batches = o.eval_batches;
  c.log_every = o.log_every;
  c.out_dir = o.out_dir;
  c.checkpoint_every = o.checkpoint_every;
  c.seed = o.seed;
  return c;
}

}  // namespace

DraftResult run_draft(const DraftOptions& o) {
  const ModelConfig base = read_gguf_model_config(o.base);
  check_options(o, base);
  check_base_tokenizer(o.base, base.vocab_size);
  DraftResult result;
  result.config = draft_config(base, o.shape);

  DraftDataOptions d;
  d.shards = o.shards, d.sft = o.data, d.sft_share = o.sft_share;
  d.batch_size = o.optim.batch_size, d.seq_len = o.seq_len, d.eval_batches = o.eval_batches;
  d.seed = o.seed, d.vocab_size = base.vocab_size;
  const DescribedData data(open_draft_data(d), {{"base", o.base},
                                                {"base_parameters", base.parameter_count()},
                                                {"temperature", o.temperature},
                                                {"ce_weight", o.ce_weight}});

  DistillObjective objective(o.temperature, o.ce_weight);
  std::shared_ptr<LanguageModel> draft;
  result.run = run_training(
      loop_config(o, result.config), o.run,
      [&] {
        // Here, not earlier: the loop configures libtorch's threads before any tensor work.
        std::shared_ptr<LanguageModel> teacher = import_gguf_model(o.base).model;
        draft = make_language_model(result.config, o.seed);
        result.copied_tensors = initialise_draft(*draft, *teacher, o.init);
        objective.set_teacher(std::move(teacher));
        return draft;
      },
      data, &objective);
  result.evaluation = objective.last_evaluation();
  if (result.run.steps_done < o.optim.steps) return result;  // --stop-after: resume later
  result.model_path = (std::filesystem::path(o.out_dir) / "model.gguf").string();
  export_gguf(*draft, {o.export_type, o.base, o.name}, result.model_path);
  return result;
}

}  // namespace afm::train
