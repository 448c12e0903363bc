#include "train/batch_sampler.h"

#include <string>

#include "base/error.h"

namespace afm::train {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t window_count(const TokenStream& tokens, int64_t seq_len) {
  const uint64_t window = static_cast<uint64_t>(seq_len) + 1;
  if (tokens.size < window) {
    throw_error(ErrorCode::kInvalidArgument,
                "token stream of " + std::to_string(tokens.size) +
                    " tokens is shorter than one window of seq_len + 1 = " +
                    std::to_string(window));
  }
  return tokens.size - window + 1;  // valid start offsets
}

}  // namespace

torch::Tensor training_batch(const TokenStream& tokens, int64_t batch, int64_t seq_len,
                             const BatchCoordinates& at) {
  const uint64_t starts = window_count(tokens, seq_len);
  torch::Tensor out = torch::empty({batch, seq_len + 1}, torch::kInt64);
  int64_t* rows = out.data_ptr<int64_t>();
  uint64_t h = splitmix64(at.seed ^ splitmix64(static_cast<uint64_t>(at.step)));
  h = splitmix64(h ^ splitmix64(static_cast<uint64_t>(at.micro) * 0x100000001b3ULL));
  h = splitmix64(h ^ static_cast<uint64_t>(at.rank));
  for (int64_t r = 0; r < batch; ++r) {
    const uint64_t start = splitmix64(h + static_cast<uint64_t>(r)) % starts;
    tokens.copy(start, static_cast<uint64_t>(seq_len) + 1, rows + r * (seq_len + 1));
  }
  return out;
}

torch::Tensor evaluation_batch(const TokenStream& tokens, int64_t batch, int64_t seq_len,
                               int64_t index, int64_t count) {
  const uint64_t starts = window_count(tokens, seq_len);
  torch::Tensor out = torch::empty({batch, seq_len + 1}, torch::kInt64);
  int64_t* rows = out.data_ptr<int64_t>();
  const uint64_t total = static_cast<uint64_t>(batch * count);
  for (int64_t r = 0; r < batch; ++r) {
    const uint64_t k = static_cast<uint64_t>(index * batch + r);
    const uint64_t start = total <= 1 ? 0 : (starts - 1) * k / (total - 1);
    tokens.copy(start, static_cast<uint64_t>(seq_len) + 1, rows + r * (seq_len + 1));
  }
  return out;
}

}  // namespace afm::train
