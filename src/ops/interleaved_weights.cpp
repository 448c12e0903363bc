#include "ops/interleaved_weights.h"

#include <cstdlib>
#include <cstring>

#include "backend/cpu/gemm.h"
#include "quant/astc_lanes.h"

namespace afm::ops {
namespace {

constexpr int64_t kGroupRows = 16;

const cpu::InterleavedKernels* interleaved_kernels() {
  return cpu::best_gemm_kernels().interleaved;
}

// Environment switches, read at each load (tests and benchmarks compare both ways).
bool switched_off(const char* name) {
  const char* env = std::getenv(name);
  return env != nullptr && std::strcmp(env, "0") == 0;
}

bool copies_allowed() { return !switched_off("AFM_INTERLEAVE"); }

bool k_lanes_allowed(const cpu::InterleavedKernels& k) {
  return k.k_lanes != nullptr && !switched_off("AFM_K_LANES");
}

using LayoutMaker = void (*)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);

// What makes a type's 16-row-group copy in set k; null for the types copied verbatim.
LayoutMaker layout_maker(const cpu::InterleavedKernels& k, gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kQ8_0: return k.interleave_q8_0;
    case gguf::TensorType::kQ4_0: return k.interleave_q4_0;
    case gguf::TensorType::kF16: case gguf::TensorType::kBF16: return k.interleave_16bit;
    case gguf::TensorType::kQ4_K: return k_lanes_allowed(k) ? k.k_lanes->interleave_q4_k : nullptr;
    case gguf::TensorType::kQ6_K: return k_lanes_allowed(k) ? k.k_lanes->interleave_q6_k : nullptr;
    default: return nullptr;
  }
}

}  // namespace

bool InterleavedWeights::enabled() { return interleaved_kernels() != nullptr && copies_allowed(); }

uint8_t* InterleavedWeights::allocate(size_t bytes) {
  uint8_t* out = arena_.allocate(bytes);
  bytes_ += bytes;
  return out;
}

void InterleavedWeights::attach_astc(Matrix& m, const gguf::File& file, int64_t stack) {
  const int64_t rows = m.rows / stack;
  const auto* data = static_cast<const uint8_t*>(m.data);
  const quant::astc::LaneForms forms = quant::astc::make_lane_forms(data, stack, rows, m.cols);
  uint8_t* out = allocate(forms.bytes());
  forms.place(out);
  file.drop_resident({data, stack * matrix_bytes(m.type, rows, m.cols)});
  m.interleaved = out;
}

void InterleavedWeights::attach_verbatim(Matrix& m, const gguf::File& file) {
  if (m.row_bytes == 0) return;
  const size_t bytes = static_cast<size_t>(m.rows) * m.row_bytes;
  uint8_t* out = allocate(bytes);
  std::memcpy(out, m.data, bytes);
  file.drop_resident({static_cast<const uint8_t*>(m.data), bytes});
  m.data = out;
}

void InterleavedWeights::attach(Matrix& m, const gguf::File& file, int64_t stack) {
  if (m.data == nullptr) return;
  if (m.type == gguf::TensorType::kASTC6X6) {
    if (copies_allowed() && !switched_off("AFM_ASTC_LANES")) attach_astc(m, file, stack);
    return;
  }
  if (!enabled()) return;
  const cpu::InterleavedKernels& k = *interleaved_kernels();
  const auto interleave = layout_maker(k, m.type);
  if (interleave == nullptr || m.rows < kGroupRows) {
    attach_verbatim(m, file);
    return;
  }
  const int64_t rows = m.rows / kGroupRows * kGroupRows;
  const size_t bytes = static_cast<size_t>(rows) * m.row_bytes;
  uint8_t* out = allocate(bytes);
  interleave(m.data, m.row_bytes, rows, m.cols, out);
  file.drop_resident({static_cast<const uint8_t*>(m.data), bytes});
  m.interleaved = out;
}

const void* interleaved_slice(const Matrix& m, int64_t row0) {
  if (m.interleaved == nullptr || row0 % kGroupRows != 0 || m.row_bytes == 0) return nullptr;
  return static_cast<const uint8_t*>(m.interleaved) + static_cast<size_t>(row0) * m.row_bytes;
}

const void* expert_copy(const Matrix& m, int64_t e, int64_t rows) {
  if (m.interleaved == nullptr || m.type != gguf::TensorType::kASTC6X6) return interleaved_slice(m, e * rows);
  return static_cast<const uint8_t*>(m.interleaved) + e * quant::astc::lane_layout(rows, m.cols).bytes;
}

}  // namespace afm::ops
