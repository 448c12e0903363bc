// `afm quantize`: a GGUF model re-encoded in another weight type, like llama-quantize.
//
// Which tensors change (docs/compression.md):
//  - matrices (two or more dimensions) take `type`;
//  - the token embedding takes `embedding_type` and an untied output head `output_type`
//    (each defaulting to `type`, except under the tile type astc6x6, where they keep their
//    own type: a token's row would cost a whole tile row to decode);
//  - one-dimensional tensors (norms, biases) and MoE routers (`*.ffn_gate_inp.weight`) keep
//    their type: they are a tiny share of the bytes and the most sensitive to rounding;
//  - a tensor whose name contains one of `keep` is copied unchanged;
//  - a matrix whose rows do not split into the type's 32-value blocks falls back to f16;
//  - astc6x6 matrices are encoded with libastcenc (quant/astc_encoder.h), each matrix of a
//    stack on its own, `astc` giving the tile offset, effort and threads.
// Every other byte of the file (metadata, tokenizer, template) is copied; general.file_type
// is set to the llama.cpp number of `type`. The output is written atomically.
//
// Errors: Error(kInvalidArgument) for a type the runtime cannot run; Error(kUnsupported) for
// an input tensor type that cannot be decoded; reader and writer errors as they are.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "gguf/types.h"
#include "quant/astc_encoder.h"

namespace afm::cli {

struct QuantizeOptions {
  gguf::TensorType type = gguf::TensorType::kQ8_0;
  std::optional<gguf::TensorType> embedding_type, output_type;
  std::vector<std::string> keep;
  quant::astc::EncodeOptions astc;
  bool progress = true;
};

struct QuantizeSummary {
  uint64_t tensors = 0, converted = 0, kept = 0, fallbacks = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  // Per output type: tensors, elements and bytes.
  struct TypeTotals {
    uint64_t tensors = 0, elements = 0, bytes = 0;
  };
  std::map<std::string, TypeTotals> per_type;
};

// The type tensor `t` gets under `o` (its own type when it is kept).
gguf::TensorType target_type(const gguf::TensorInfo& t, const QuantizeOptions& o);

QuantizeSummary quantize_model(const gguf::File& in, const std::string& out_path,
                               const QuantizeOptions& o);

}  // namespace afm::cli
