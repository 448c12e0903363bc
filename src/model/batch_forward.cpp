// Batch validation and the per-sequence fallback of Model::forward_batch (model/model.h).
#include <algorithm>
#include <string>

#include "backend/cpu/gemm.h"
#include "base/error.h"
#include "model/model.h"

namespace afm::model {
namespace {

// A workspace with nothing in it: the fallback runs each item on its own state's buffers.
class NoWorkspace : public BatchWorkspace {
 public:
  explicit NoWorkspace(const BatchOptions& o) : BatchWorkspace(o) {}
};

[[noreturn]] void bad_batch(size_t item, const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument, "batch item " + std::to_string(item) + ": " + what);
}

}  // namespace

int64_t logit_rows(LogitRows rows, int64_t n) {
  switch (rows) {
    case LogitRows::kNone: return 0;
    case LogitRows::kLast: return 1;
    case LogitRows::kAll:
    case LogitRows::kAllExact: return n;
  }
  return 0;
}

bool per_token_path(LogitRows rows, int64_t n) {
  return rows == LogitRows::kAllExact || n < cpu::kPerTokenPathBelow;
}

void check_batch(std::span<const BatchItem> items, const BatchOptions& ws) {
  if (items.empty()) throw_error(ErrorCode::kInvalidArgument, "a batch needs at least one item");
  int64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const BatchItem& b = items[i];
    if (b.state == nullptr) bad_batch(i, "no sequence state");
    const int64_t n = static_cast<int64_t>(b.tokens.size());
    if (n == 0) bad_batch(i, "no tokens");
    if (n > b.state->n_batch()) {
      bad_batch(i, std::to_string(n) + " tokens exceed the sequence's batch size " +
                       std::to_string(b.state->n_batch()));
    }
    if (b.state->n_past() + n > b.state->n_ctx()) {
      bad_batch(i, std::to_string(n) + " tokens do not fit the context: " +
                       std::to_string(b.state->n_past()) + " of " +
                       std::to_string(b.state->n_ctx()) + " positions are in use");
    }
    if (b.state->n_ctx() > ws.n_ctx) {
      bad_batch(i, "a context of " + std::to_string(b.state->n_ctx()) +
                       " positions exceeds the workspace's " + std::to_string(ws.n_ctx));
    }
    if (b.rows != LogitRows::kNone && b.logits == nullptr) bad_batch(i, "no logits buffer");
    for (size_t j = 0; j < i; ++j) {
      if (items[j].state == b.state) bad_batch(i, "the same sequence as item " + std::to_string(j));
    }
    total += n;
  }
  if (total > ws.max_tokens) {
    throw_error(ErrorCode::kInvalidArgument,
                "the batch has " + std::to_string(total) + " tokens but the workspace holds " +
                    std::to_string(ws.max_tokens));
  }
}

std::unique_ptr<BatchWorkspace> Model::new_batch_workspace(const BatchOptions& options) const {
  return std::make_unique<NoWorkspace>(options);
}

void Model::forward_batch(std::span<const BatchItem> items, BatchWorkspace& workspace,
                          Workers& pool) const {
  check_batch(items, workspace.options());
  for (const BatchItem& b : items) forward(*b.state, b.tokens, b.rows, b.logits, pool);
}

}  // namespace afm::model
