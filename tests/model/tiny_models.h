// Tiny random-weight GGUF files for every registered architecture, for tests that must cover
// each one the same way (tests/model/architecture_test.cpp). Weights are seeded, so a file is
// the same on every run; shapes are small enough to run in milliseconds.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/types.h"

namespace afm::model::testing {

// Writes a random model of `arch` to path, its matrices (projections, feed-forward, experts) in
// `matrix_type` (embeddings and norms stay f32). Error(kUnsupported) for an architecture this
// file has no generator for: adding an architecture without one fails the table-driven test.
void write_tiny_model(const std::string& arch, const std::string& path, uint64_t seed = 1,
                      gguf::TensorType matrix_type = gguf::TensorType::kF32);

}  // namespace afm::model::testing
