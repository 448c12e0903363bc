// Looks up weight tensors in a GGUF file with their expected shapes, as in-place views.
// Every mismatch is an Error(kFormat) naming the tensor, the expected and the actual shape or
// type, so a broken or foreign file fails at load, not in a kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "ops/interleaved_weights.h"
#include "ops/matrix.h"

namespace afm::model {

class WeightLoader {
 public:
  // Matrices get interleaved copies (ops/interleaved_weights.h) in `interleaved` when given.
  explicit WeightLoader(const gguf::File& file, ops::InterleavedWeights* interleaved = nullptr)
      : file_(file), interleaved_(interleaved) {}

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  // A (rows, cols) matrix: GGUF shape [cols, rows], a matmul weight type.
  ops::Matrix matrix(const std::string& name, int64_t rows, int64_t cols) const;
  // The same view for a table read by rows only (the token embedding): no interleaved copy.
  ops::Matrix table(const std::string& name, int64_t rows, int64_t cols) const;
  // `table` with an interleaved copy, for a table that is also a matmul weight (a tied output).
  ops::Matrix as_matrix(ops::Matrix table) const;
  // n stacked (rows, cols) matrices (experts): GGUF shape [cols, rows, n], viewed as one
  // (n * rows, cols) matrix whose slice e is expert e (see expert()).
  ops::Matrix stacked_matrix(const std::string& name, int64_t n, int64_t rows, int64_t cols) const;
  // A vector of n values, converted to f32 (norm weights and biases are small).
  std::vector<float> vector(const std::string& name, int64_t n) const;
  std::vector<float> optional_vector(const std::string& name, int64_t n) const;

 private:
  // m with its copy for matmul (InterleavedWeights::attach; `stack` matrices of m.rows / stack).
  ops::Matrix with_copy(ops::Matrix m, int64_t stack) const;
  ops::Matrix view(const std::string& name, const std::vector<uint64_t>& want, int64_t rows,
                   int64_t cols) const;
  const gguf::File& file_;
  ops::InterleavedWeights* interleaved_;
};

// Rows [e * rows, (e + 1) * rows) of a stacked matrix.
ops::Matrix expert(const ops::Matrix& stacked, int64_t e, int64_t rows);
// Rows [row0, row0 + rows) of `fused` (`name` in errors): a part of a fused tensor, such as
// phi3's attn_qkv (q | k | v rows) or its ffn_up (gate | up rows). Error(kFormat) when the
// range passes the matrix or its type has no separately addressable rows (astc6x6 tiles).
ops::Matrix row_slice(const ops::Matrix& fused, int64_t row0, int64_t rows, const std::string& name);

}  // namespace afm::model
