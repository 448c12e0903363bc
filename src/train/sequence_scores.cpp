#include "train/sequence_scores.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace afm::train {

SequencePacking pack_sequences(const std::vector<int64_t>& lengths) {
  SequencePacking p;
  const int64_t n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  p.width = n == 0 ? 0 : lengths[order[0]];
  p.row.resize(n);
  p.start.resize(n);
  std::vector<int64_t> used;  // positions taken in each row
  for (int64_t s : order) {
    AFM_CHECK(lengths[s] >= 1);
    size_t r = 0;
    while (r < used.size() && used[r] + lengths[s] > p.width) ++r;
    if (r == used.size()) used.push_back(0);
    p.row[s] = static_cast<int64_t>(r);
    p.start[s] = used[r];
    used[r] += lengths[s];
  }
  p.rows = static_cast<int64_t>(used.size());
  return p;
}

torch::Tensor last_token_logits(LanguageModel& model,
                                const std::vector<const std::vector<int32_t>*>& sequences,
                                int32_t score_token) {
  const int64_t n = static_cast<int64_t>(sequences.size());
  std::vector<int64_t> lengths(n);
  for (int64_t s = 0; s < n; ++s) lengths[s] = static_cast<int64_t>(sequences[s]->size());
  const SequencePacking p = pack_sequences(lengths);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  torch::Tensor tokens = torch::zeros({p.rows, p.width}, i64);
  // Padding: segment -1, positions counted from 0 (as sft_data.h packs), after every sequence
  // of its row, so causal attention keeps it out of them.
  Packing packing{torch::full({p.rows, p.width}, -1, i64),
                  torch::arange(p.width, i64).repeat({p.rows, 1})};
  torch::Tensor last_row = torch::empty({n}, i64), last_col = torch::empty({n}, i64);
  auto tok = tokens.accessor<int64_t, 2>();
  auto seg = packing.segments.accessor<int64_t, 2>();
  auto pos = packing.positions.accessor<int64_t, 2>();
  std::vector<int64_t> row_end(p.rows, 0);
  for (int64_t s = 0; s < n; ++s) {
    const std::vector<int32_t>& seq = *sequences[s];
    for (int64_t j = 0; j < lengths[s]; ++j) {
      tok[p.row[s]][p.start[s] + j] = seq[j];
      seg[p.row[s]][p.start[s] + j] = s;
      pos[p.row[s]][p.start[s] + j] = j;
    }
    last_row[s] = p.row[s];
    last_col[s] = p.start[s] + lengths[s] - 1;
    row_end[p.row[s]] = std::max(row_end[p.row[s]], p.start[s] + lengths[s]);
  }
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t at = row_end[r]; at < p.width; ++at) pos[r][at] = at - row_end[r];
  }
  const torch::Tensor states = model.hidden(tokens, packing).index({last_row, last_col});
  return model.head(states).index({torch::indexing::Slice(), static_cast<int64_t>(score_token)});
}

}  // namespace afm::train
