#include "ops/interleaved_weights.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/cpu/gemm.h"

namespace afm::ops {
namespace {

constexpr int64_t kGroupRows = 16;

const cpu::InterleavedKernels* interleaved_kernels() {
  return cpu::best_gemm_kernels().interleaved;
}

}  // namespace

bool InterleavedWeights::enabled() {
  const char* env = std::getenv("AFM_INTERLEAVE");  // read at each load: tests compare both ways
  return interleaved_kernels() != nullptr && !(env != nullptr && std::strcmp(env, "0") == 0);
}

void InterleavedWeights::FreeAligned::operator()(uint8_t* p) const { std::free(p); }

void InterleavedWeights::attach(Matrix& m, const gguf::File& file) {
  const bool q8 = m.type == gguf::TensorType::kQ8_0, q4 = m.type == gguf::TensorType::kQ4_0;
  if (!(q8 || q4) || m.rows < kGroupRows || m.data == nullptr || !enabled()) return;
  const int64_t rows = m.rows / kGroupRows * kGroupRows;
  const size_t bytes = static_cast<size_t>(rows) * m.row_bytes;
  const size_t rounded = (bytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  auto* out = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (out == nullptr) throw std::bad_alloc();
  buffers_.emplace_back(out);
  const cpu::InterleavedKernels& k = *interleaved_kernels();
  (q8 ? k.interleave_q8_0 : k.interleave_q4_0)(m.data, m.row_bytes, rows, m.cols, out);
  file.drop_resident({static_cast<const uint8_t*>(m.data), bytes});
  m.interleaved = out;
  bytes_ += bytes;
}

const void* interleaved_slice(const Matrix& m, int64_t row0) {
  if (m.interleaved == nullptr || row0 % kGroupRows != 0) return nullptr;
  return static_cast<const uint8_t*>(m.interleaved) + static_cast<size_t>(row0) * m.row_bytes;
}

}  // namespace afm::ops
