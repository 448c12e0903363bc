#include "train/sft_data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "data/hash_mix.h"

namespace afm::train {
namespace {

std::vector<const data::SftRecord*> pointers(const std::vector<data::SftRecord>& records) {
  std::vector<const data::SftRecord*> out;
  for (const data::SftRecord& r : records) out.push_back(&r);
  return out;
}

int64_t trained_tokens(const std::vector<data::SftRecord>& records) {
  int64_t n = 0;
  for (const data::SftRecord& r : records) n += r.trained_count();
  return n;
}

TrainBatch select_rows(const PackedRows& packed, const torch::Tensor& index) {
  return {packed.input.index_select(0, index), packed.target.index_select(0, index),
          {packed.segments.index_select(0, index), packed.positions.index_select(0, index)}};
}

}  // namespace

SftData open_sft_data(const std::string& dir, int64_t model_vocab_size) {
  const std::filesystem::path d(dir);
  // meta.json marks a folder `afm data sft` wrote; the records themselves carry what is read.
  std::ifstream meta_file(d / "meta.json");
  if (!meta_file) {
    throw_error(ErrorCode::kNotFound,
                dir + " has no meta.json: render the conversations with `afm data sft` first");
  }
  if (nlohmann::json::parse(meta_file, nullptr, /*allow_exceptions=*/false).is_discarded()) {
    throw_error(ErrorCode::kFormat, dir + "/meta.json is not JSON");
  }
  SftData out;
  out.train = data::read_sft_records((d / "train.sft").string());
  out.val = data::read_sft_records((d / "val.sft").string());
  for (const data::SftRecordFile* f : {&out.train, &out.val}) {
    if (static_cast<int64_t>(f->vocab_size) != model_vocab_size) {
      throw_error(ErrorCode::kInvalidArgument,
                  dir + " was rendered for a vocabulary of " + std::to_string(f->vocab_size) +
                      " tokens, the model has " + std::to_string(model_vocab_size));
    }
  }
  return out;
}

PackedRows pack_examples(const std::vector<const data::SftRecord*>& records, int64_t seq_len) {
  std::vector<std::vector<const data::SftRecord*>> rows;
  int64_t used = seq_len;  // positions taken in the last row
  for (const data::SftRecord* e : records) {
    const int64_t n = static_cast<int64_t>(e->tokens.size()) - 1;
    if (n < 1 || n > seq_len) continue;
    if (used + n > seq_len) rows.emplace_back(), used = 0;
    rows.back().push_back(e);
    used += n;
  }
  const int64_t r = static_cast<int64_t>(rows.size());
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  PackedRows p{torch::zeros({r, seq_len}, i64), torch::full({r, seq_len}, -100, i64),
               torch::full({r, seq_len}, -1, i64), torch::zeros({r, seq_len}, i64)};
  auto input = p.input.accessor<int64_t, 2>(), target = p.target.accessor<int64_t, 2>();
  auto segments = p.segments.accessor<int64_t, 2>();
  auto positions = p.positions.accessor<int64_t, 2>();
  for (int64_t row = 0; row < r; ++row) {
    int64_t at = 0;
    for (size_t s = 0; s < rows[row].size(); ++s) {
      const data::SftRecord& e = *rows[row][s];
      for (size_t j = 0; j + 1 < e.tokens.size(); ++j, ++at) {
        input[row][at] = e.tokens[j];
        if (e.trained[j + 1]) target[row][at] = e.tokens[j + 1];
        segments[row][at] = static_cast<int64_t>(s);
        positions[row][at] = static_cast<int64_t>(j);
      }
    }
    for (int64_t pad = 0; at < seq_len; ++at, ++pad) positions[row][at] = pad;  // segment -1
  }
  return p;
}

SftBatches::SftBatches(const SftData& data, int64_t batch_size, int64_t seq_len, uint64_t seed,
                       int64_t max_eval_batches)
    : batch_size_(batch_size), seq_len_(seq_len), seed_(seed) {
  std::vector<const data::SftRecord*> order = pointers(data.train.records);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(data::mix64(seed)));
  train_ = pack_examples(order, seq_len);
  val_ = pack_examples(pointers(data.val.records), seq_len);
  if (train_.input.size(0) == 0) {
    throw_error(ErrorCode::kInvalidArgument,
                "no training conversation fits " + std::to_string(seq_len + 1) + " tokens");
  }
  const int64_t val_rows = val_.input.size(0);
  eval_count_ = std::min(max_eval_batches, (val_rows + batch_size - 1) / batch_size);
  describe_ = {{"train_conversations", data.train.records.size()},
               {"val_conversations", data.val.records.size()},
               {"train_rows", train_.input.size(0)},
               {"val_rows", val_rows},
               {"train_trained_tokens", trained_tokens(data.train.records)},
               {"val_trained_tokens", trained_tokens(data.val.records)}};
}

TrainBatch SftBatches::train(int64_t step, int64_t micro) const {
  const uint64_t rows_total = static_cast<uint64_t>(train_.input.size(0));
  std::vector<int64_t> index(static_cast<size_t>(batch_size_));
  for (int64_t i = 0; i < batch_size_; ++i) {
    const uint64_t h = data::mix64(data::mix64(data::mix64(seed_, static_cast<uint64_t>(step)),
                                               static_cast<uint64_t>(micro)),
                                   static_cast<uint64_t>(i));
    index[static_cast<size_t>(i)] = static_cast<int64_t>(h % rows_total);
  }
  return select_rows(train_, torch::tensor(index, torch::kInt64));
}

TrainBatch SftBatches::eval(int64_t i) const {
  const int64_t first = i * batch_size_;
  const int64_t last = std::min(first + batch_size_, val_.input.size(0));
  return select_rows(val_, torch::arange(first, last, torch::kInt64));
}

}  // namespace afm::train
