#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/vec.h"

namespace afm::ops {
namespace {

// One (query, head): scores over n_keys positions, softmax, weighted sum of values.
void attend(const float* q, const KvLayerView& kv, int64_t kv_head, int64_t n_keys,
            int64_t head_dim, float scale, float* scores, float* out,
            const cpu::VecKernels& vk) {
  const size_t head_elems = static_cast<size_t>(kv.capacity * head_dim);
  const bool f32 = kv.type == KvType::kF32;
  const auto* k32 = static_cast<const float*>(kv.k) + kv_head * head_elems;
  const auto* v32 = static_cast<const float*>(kv.v) + kv_head * head_elems;
  const auto* k16 = static_cast<const uint16_t*>(kv.k) + kv_head * head_elems;
  const auto* v16 = static_cast<const uint16_t*>(kv.v) + kv_head * head_elems;
  if (f32) {
    vk.scores_f32(q, k32, n_keys, head_dim, scale, scores);
  } else {
    vk.scores_f16(q, k16, n_keys, head_dim, scale, scores);
  }
  float max_score = -INFINITY;
  for (int64_t j = 0; j < n_keys; ++j) max_score = std::max(max_score, scores[j]);
  float sum = 0;
  for (int64_t j = 0; j < n_keys; ++j) {
    scores[j] = std::exp(scores[j] - max_score);
    sum += scores[j];
  }
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n_keys; ++j) scores[j] *= inv;
  std::memset(out, 0, head_dim * sizeof(float));
  if (f32) {
    vk.mix_f32(scores, v32, n_keys, head_dim, out);
  } else {
    vk.mix_f16(scores, v16, n_keys, head_dim, out);
  }
}

}  // namespace

void attention(const float* q, int64_t tokens, int64_t pos0, const KvLayerView& kv,
               const AttentionShape& shape, float scale, float* out, std::vector<float>& scratch,
               ThreadPool& pool) {
  const int64_t max_keys = pos0 + tokens;
  const size_t need = static_cast<size_t>(pool.size()) * max_keys;
  if (scratch.size() < need) scratch.resize(need);
  const int64_t group = shape.n_head / shape.n_head_kv;
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  pool.run([&](int index, int count) {
    float* scores = scratch.data() + index * max_keys;
    const Range items = split_range(tokens * shape.n_head, index, count);
    for (int64_t item = items.begin; item < items.end; ++item) {
      const int64_t t = item / shape.n_head, h = item % shape.n_head;
      const int64_t offset = (t * shape.n_head + h) * shape.head_dim;
      attend(q + offset, kv, h / group, pos0 + t + 1, shape.head_dim, scale, scores, out + offset,
             vk);
    }
  });
}

}  // namespace afm::ops
