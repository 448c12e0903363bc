// One matrix-multiply kernel on one core, in weight GB/s and G values/s: tells whether a kernel
// is held back by its arithmetic (rows that fit L2) or by memory (rows far larger than the
// caches; compare membw_bench --threads 1). Random codes with small finite scales, on huge pages
// where the system allows (as the model's copies are). q8_0 / q4_0 run the set's 16-row
// interleaved layout and q4_k / q6_k its lanes layout where it has one (what decode reads),
// else the file's; --layout file asks for the file's.
// f32 / f16 / bf16 take float activations and run the set's float kernels (f16 / bf16: its 4-row
// float groups as the copy, which decode and prefill read).
//   build/bench/gemm_kernel_bench [--type q4_k|q5_k|q6_k|q3_k|q2_k|q8_0|q4_0|f32|f16|bf16] [--rows N] [--k K]
//                                 [--tokens T] [--set best|scalar|avx2|avx512] [--layout copy|file]
//                                 [--copies N] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/gemm.h"
#include "base/half.h"
#include "base/huge_page_arena.h"
#include "gguf/types.h"
#include "quant/tensor_encode.h"

namespace {

using afm::cpu::GemmKernel;
using afm::cpu::GgmlBlockKernels;
using afm::gguf::TensorType;

struct TypeInfo {
  const char* name;
  TensorType type;
  GemmKernel GgmlBlockKernels::*kernel;  // null: q8_0 / q4_0 and the float types
  std::vector<int> f16_fields;  // byte offsets of the block's f16 scales
};

bool is_float(TensorType type) {
  return type == TensorType::kF32 || type == TensorType::kF16 || type == TensorType::kBF16;
}

const std::vector<TypeInfo> kTypes{
    {"q2_k", TensorType::kQ2_K, &GgmlBlockKernels::q2_k, {80, 82}},
    {"q3_k", TensorType::kQ3_K, &GgmlBlockKernels::q3_k, {108}},
    {"q4_k", TensorType::kQ4_K, &GgmlBlockKernels::q4_k, {0, 2}},
    {"q5_k", TensorType::kQ5_K, &GgmlBlockKernels::q5_k, {0, 2}},
    {"q6_k", TensorType::kQ6_K, &GgmlBlockKernels::q6_k, {208}},
    {"q8_0", TensorType::kQ8_0, nullptr, {0}},
    {"q4_0", TensorType::kQ4_0, nullptr, {0}},
    {"f32", TensorType::kF32, nullptr, {}},
    {"f16", TensorType::kF16, nullptr, {}},
    {"bf16", TensorType::kBF16, nullptr, {}},
};

// A layout decode reads for a type: what rewrites w into it, the kernel that reads it, its name.
struct DecodeLayout {
  void (*make)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out) = nullptr;
  GemmKernel kernel = nullptr;
  const char* name = "file";
};

// q8_0 / q4_0: the 16-row interleaved copy; q4_k / q6_k: the lanes copy; none otherwise or
// where the set lacks it.
DecodeLayout decode_layout_of(const afm::cpu::GemmKernels& set, TensorType type) {
  const afm::cpu::InterleavedKernels* il = set.interleaved;
  if (il == nullptr) return {};
  if (type == TensorType::kQ8_0) return {il->interleave_q8_0, il->q8_0, "interleaved"};
  if (type == TensorType::kQ4_0) return {il->interleave_q4_0, il->q4_0, "interleaved"};
  if (type == TensorType::kF16) return {il->interleave_16bit, il->floats.f16, "float groups"};
  if (type == TensorType::kBF16) return {il->interleave_16bit, il->floats.bf16, "float groups"};
  if (il->k_lanes == nullptr) return {};
  if (type == TensorType::kQ4_K) return {il->k_lanes->interleave_q4_k, il->k_lanes->q4_k, "lanes"};
  if (type == TensorType::kQ6_K) return {il->k_lanes->interleave_q6_k, il->k_lanes->q6_k, "lanes"};
  return {};
}

const afm::cpu::GemmKernels* kernel_set(const std::string& name) {
  if (name == "scalar") return &afm::cpu::scalar_gemm_kernels();
  if (name == "avx2") return afm::cpu::avx2_gemm_kernels();
  if (name == "avx512") return afm::cpu::avx512_gemm_kernels();
  return &afm::cpu::best_gemm_kernels();
}

// Values of a normal distribution / 16 in the float type's encoding.
void fill_float_weights(TensorType type, std::mt19937& rng, std::vector<uint8_t>& w) {
  std::normal_distribution<float> normal(0.0f, 1.0f / 16);
  const size_t bytes = type == TensorType::kF32 ? 4 : 2;
  for (size_t i = 0; i < w.size() / bytes; ++i) {
    const float v = normal(rng);
    const uint16_t half = type == TensorType::kF16 ? afm::f32_to_f16(v) : afm::f32_to_bf16(v);
    std::memcpy(&w[i * bytes], bytes == 4 ? static_cast<const void*>(&v) : &half, bytes);
  }
}

GemmKernel float_or_q_kernel(const afm::cpu::GemmKernels& set, TensorType type) {
  switch (type) {
    case TensorType::kQ8_0: return set.q8_0;
    case TensorType::kQ4_0: return set.q4_0;
    case TensorType::kF32: return set.f32;
    case TensorType::kF16: return set.f16;
    default: return set.bf16;
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: gemm_kernel_bench [--type q4_k|q5_k|q6_k|q3_k|q2_k|q8_0|q4_0|f32|f16|bf16] [--rows N] [--k K]\n"
               "                         [--tokens T] [--set best|scalar|avx2|avx512] [--layout copy|file]\n"
               "                         [--copies N] [--json]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string type_name = "q4_k", set_name = "best", layout_name = "copy";
  int64_t rows = 512, k = 1024, tokens = 1, n_copies = 1;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--type") && has_value) type_name = argv[++i];
    else if (!std::strcmp(argv[i], "--set") && has_value) set_name = argv[++i];
    else if (!std::strcmp(argv[i], "--layout") && has_value) layout_name = argv[++i];
    else if (!std::strcmp(argv[i], "--rows") && has_value) rows = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--k") && has_value) k = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--tokens") && has_value) tokens = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--copies") && has_value) n_copies = std::stoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else return usage();
  }
  const auto type = std::find_if(kTypes.begin(), kTypes.end(),
                                 [&](const TypeInfo& t) { return type_name == t.name; });
  const afm::cpu::GemmKernels* set = kernel_set(set_name);
  if (layout_name != "copy" && layout_name != "file") return usage();
  // k: a multiple of 256 for the quantised types (their activations are made in 256-value
  // blocks too), of 8 for the float types.
  const int64_t k_unit = type != kTypes.end() && is_float(type->type) ? 8 : 256;
  if (type == kTypes.end() || set == nullptr || rows < 1 || tokens < 1 || n_copies < 1 || k < k_unit || k % k_unit != 0) {
    std::fprintf(stderr, "unknown type, a set this CPU lacks, or a bad shape (k: a multiple of 256, of 8 for float types)\n");
    return usage();
  }
  const size_t row_bytes = afm::quant::encoded_bytes(type->type, k);
  const size_t block_bytes = afm::gguf::tensor_type_traits(type->type).block_bytes;
  std::vector<uint8_t> w(rows * row_bytes);
  std::mt19937 rng(1);
  for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
  if (is_float(type->type)) fill_float_weights(type->type, rng, w);
  const uint16_t scale = afm::f32_to_f16(0.01f);
  for (size_t blk = 0; blk < w.size() / block_bytes; ++blk) {
    for (int off : type->f16_fields) std::memcpy(&w[blk * block_bytes + off], &scale, 2);
  }
  std::vector<float> x(tokens * k);
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);
  // The activation blocks this set's K-quant kernels take.
  const bool blocks_256 = type->kernel != nullptr && set->ggml->super_block_activations;
  std::vector<afm::cpu::ActBlock> x32(tokens * k / 32);
  std::vector<afm::cpu::ActBlock256> x256(tokens * k / 256);
  for (int64_t t = 0; t < tokens && !is_float(type->type); ++t) {
    afm::cpu::quantize_activations(&x[t * k], &x32[t * k / 32], k);
    afm::cpu::quantize_activations_256(&x[t * k], &x256[t * k / 256], k);
  }
  const void* xp = blocks_256 ? static_cast<const void*>(x256.data()) : x32.data();
  size_t x_row_bytes = blocks_256 ? k / 256 * sizeof(afm::cpu::ActBlock256) : k / 32 * sizeof(afm::cpu::ActBlock);
  if (is_float(type->type)) xp = x.data(), x_row_bytes = k * sizeof(float);
  GemmKernel kernel = type->kernel != nullptr ? set->ggml->*(type->kernel) : float_or_q_kernel(*set, type->type);
  const char* layout = "file";
  const DecodeLayout copy = decode_layout_of(*set, type->type);
  if (layout_name == "copy" && copy.make != nullptr && rows % 16 == 0) {
    std::vector<uint8_t> out(w.size());
    copy.make(w.data(), row_bytes, rows, k, out.data());
    w.swap(out);
    kernel = copy.kernel;
    layout = copy.name;
  }
  // On huge pages, as the model's decode copies are (ops/interleaved_weights.h).
  // --copies N: N copies of the matrix, called in turn, so that a model-sized matrix still
  // streams from DRAM as a model's layers do (each a new stream for the prefetchers).
  afm::HugePageArena arena;
  std::vector<uint8_t*> copies(n_copies);
  for (uint8_t*& wp : copies) {
    wp = arena.allocate(w.size());
    std::memcpy(wp, w.data(), w.size());
  }
  std::vector<float> y(rows * tokens);
  const int64_t calls = std::max<int64_t>(3, static_cast<int64_t>(4e8 / (rows * row_bytes * tokens)) + 1) * n_copies;
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t c = 0; c < calls; ++c) {
      kernel(copies[c % n_copies], row_bytes, rows, xp, x_row_bytes, tokens, k, y.data(), rows);
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  const double gb_per_s = rows * row_bytes / best / 1e9, gvalues = rows * k * tokens / best / 1e9;
  if (json) {
    std::printf("{\"type\": \"%s\", \"set\": \"%s\", \"layout\": \"%s\", \"rows\": %lld, \"k\": %lld, \"tokens\": %lld, "
                "\"us_per_call\": %.3f, \"weight_gb_per_s\": %.3f, \"g_values_per_s\": %.3f, \"checksum\": %g}\n",
                type->name, set->isa, layout, static_cast<long long>(rows), static_cast<long long>(k),
                static_cast<long long>(tokens), best * 1e6, gb_per_s, gvalues, static_cast<double>(y[0]));
  } else {
    std::printf("%s on %s (%s layout), %lld rows x k %lld, %lld tokens: %.1f us/call, %.2f GB/s of weights, %.1f G values/s\n",
                type->name, set->isa, layout, static_cast<long long>(rows), static_cast<long long>(k),
                static_cast<long long>(tokens), best * 1e6, gb_per_s, gvalues);
  }
  return 0;
}
