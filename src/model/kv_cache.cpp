#include "model/kv_cache.h"

#include <cstring>

#include "backend/cpu/vec.h"
#include "base/error.h"

namespace afm::model {

KvCache::KvCache(int64_t n_layers, int64_t n_head_kv, int64_t head_dim, int64_t capacity,
                 ops::KvType type)
    : n_layers_(n_layers),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      capacity_(capacity),
      type_(type),
      elem_bytes_(type == ops::KvType::kF32 ? 4 : 2) {
  const size_t n = static_cast<size_t>(n_layers * n_head_kv * capacity * head_dim) * elem_bytes_;
  k_.resize(n);
  v_.resize(n);
}

size_t KvCache::bytes_per_token() const {
  return 2 * static_cast<size_t>(n_layers_ * n_head_kv_ * head_dim_) * elem_bytes_;
}

uint8_t* KvCache::slot(std::vector<uint8_t>& data, int64_t layer, int64_t head, int64_t pos) {
  return data.data() + (((layer * n_head_kv_ + head) * capacity_ + pos) * head_dim_) * elem_bytes_;
}

void KvCache::write(int64_t layer, int64_t pos0, int64_t tokens, const float* k, const float* v) {
  AFM_CHECK(layer < n_layers_ && pos0 + tokens <= capacity_);
  const cpu::VecKernels& vk = cpu::best_vec_kernels();
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      const float* ks = k + (t * n_head_kv_ + h) * head_dim_;
      const float* vs = v + (t * n_head_kv_ + h) * head_dim_;
      uint8_t* kd = slot(k_, layer, h, pos0 + t);
      uint8_t* vd = slot(v_, layer, h, pos0 + t);
      if (type_ == ops::KvType::kF32) {
        std::memcpy(kd, ks, head_dim_ * sizeof(float));
        std::memcpy(vd, vs, head_dim_ * sizeof(float));
      } else {
        vk.f32_to_f16(ks, reinterpret_cast<uint16_t*>(kd), head_dim_);
        vk.f32_to_f16(vs, reinterpret_cast<uint16_t*>(vd), head_dim_);
      }
    }
  }
}

ops::KvLayerView KvCache::layer(int64_t layer) const {
  const size_t offset = static_cast<size_t>(layer * n_head_kv_ * capacity_ * head_dim_) * elem_bytes_;
  return {type_, k_.data() + offset, v_.data() + offset, capacity_};
}

}  // namespace afm::model
