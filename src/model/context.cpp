#include "model/context.h"

#include <algorithm>
#include <cmath>

#include "base/cpu_count.h"
#include "base/error.h"

namespace afm::model {
int64_t default_n_ctx(const HParams& hp, int64_t requested) {
  if (requested < 0) throw_error(ErrorCode::kInvalidArgument, "context size must be >= 0");
  return requested > 0 ? requested : std::min<int64_t>(hp.n_ctx_train, 4096);
}

Context::Context(std::shared_ptr<const Model> model, const ContextOptions& options)
    : model_(std::move(model)),
      engine_(options.engine),
      pool_(engine_ ? 1 : options.n_threads > 0 ? options.n_threads : physical_cores()),
      n_batch_(options.n_batch) {
  if (engine_ && &engine_->model() != model_.get()) {
    throw_error(ErrorCode::kInvalidArgument, "the batch engine runs another model");
  }
  if (options.n_batch <= 0) throw_error(ErrorCode::kInvalidArgument, "batch size must be > 0");
  StateOptions so;
  so.n_ctx = default_n_ctx(model_->hparams(), options.n_ctx);
  so.n_batch = std::min(n_batch_, so.n_ctx);
  so.kv_type = options.kv_type;
  so.n_threads = n_threads();  // sizes per-thread scratch for whoever runs the passes
  so.full_prefill = options.full_prefill;
  so.sequential_tracks = options.sequential_tracks;
  if (!std::isfinite(options.adapter_scale)) {
    throw_error(ErrorCode::kInvalidArgument, "adapter scale must be finite");
  }
  so.adapter = options.adapter;
  so.adapter_scale = options.adapter_scale;
  n_batch_ = so.n_batch;
  state_ = model_->new_state(so);
  logits_.resize(model_->hparams().n_vocab);
}

void Context::check_fits(size_t n_tokens) const {
  if (n_tokens == 0) throw_error(ErrorCode::kInvalidArgument, "no tokens to evaluate");
  if (state_->n_past() + static_cast<int64_t>(n_tokens) > state_->n_ctx()) {
    throw_error(ErrorCode::kInvalidArgument,
                std::to_string(n_tokens) + " tokens do not fit the context: " +
                    std::to_string(state_->n_past()) + " of " + std::to_string(state_->n_ctx()) +
                    " positions are in use (raise --ctx-size)");
  }
}

std::span<const float> Context::eval(std::span<const int32_t> tokens) {
  check_fits(tokens.size());
  for (size_t i = 0; i < tokens.size(); i += n_batch_) {
    const size_t n = std::min<size_t>(n_batch_, tokens.size() - i);
    const bool last_chunk = i + n == tokens.size();
    forward(tokens.subspan(i, n), last_chunk ? LogitRows::kLast : LogitRows::kNone,
            logits_.data());
  }
  return logits_;
}

std::vector<float> Context::eval_all(std::span<const int32_t> tokens) {
  check_fits(tokens.size());
  const int64_t n_vocab = model_->hparams().n_vocab;
  std::vector<float> all(tokens.size() * n_vocab);
  for (size_t i = 0; i < tokens.size(); i += n_batch_) {
    const size_t n = std::min<size_t>(n_batch_, tokens.size() - i);
    forward(tokens.subspan(i, n), LogitRows::kAll, all.data() + i * n_vocab);
  }
  return all;
}

void Context::eval_all_exact(std::span<const int32_t> tokens, std::vector<float>& out) {
  check_fits(tokens.size());
  const int64_t n_vocab = model_->hparams().n_vocab;
  out.resize(tokens.size() * n_vocab);
  for (size_t i = 0; i < tokens.size(); i += n_batch_) {
    const size_t n = std::min<size_t>(n_batch_, tokens.size() - i);
    forward(tokens.subspan(i, n), LogitRows::kAllExact, out.data() + i * n_vocab);
  }
}

void Context::forward(std::span<const int32_t> tokens, LogitRows rows, float* logits) {
  if (engine_) {
    engine_->forward(*state_, tokens, rows, logits);
  } else {
    model_->forward(*state_, tokens, rows, logits, pool_);
  }
}

}  // namespace afm::model
