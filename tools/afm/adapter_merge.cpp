#include "adapter_merge.h"

#include <cmath>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "gguf/writer.h"
#include "model/lora_writer.h"
#include "model/weights.h"
#include "ops/embedding.h"
#include "quant/astc6x6.h"
#include "quant/astc_encoder.h"
#include "quant/tensor_encode.h"

namespace afm::cli {
namespace {

// row (in values) += scale · b (rank) · a (rank x in).
void add_update(float* row, const float* b, const std::vector<float>& a, int64_t rank, int64_t in,
                float scale) {
  for (int64_t i = 0; i < in; ++i) {
    double acc = 0;
    for (int64_t r = 0; r < rank; ++r) acc += double{b[r]} * a[r * in + i];
    row[i] += static_cast<float>(scale * acc);
  }
}

// The merged bytes of base tensor t: every row o of slice e gains s · B[o] · A. A tile type
// (astc6x6) is decoded a matrix at a time and encoded again with the default encoder settings.
std::vector<uint8_t> merged_tensor(const gguf::TensorInfo& t, const model::LoraPair& p,
                                   float scale) {
  const int64_t in = p.in, out = p.out, rank = p.rank;
  const bool tiles = gguf::tensor_type_traits(t.type).tile_rows > 1;
  const size_t row_bytes = ops::row_bytes_for(t.type, in);
  const size_t matrix_bytes = ops::matrix_bytes(t.type, out, in);
  std::vector<float> a(rank * in), b(rank), w(out * in);
  std::vector<uint8_t> bytes(t.n_bytes);
  for (int64_t e = 0; e < p.n_stack; ++e) {
    const ops::Matrix ae = model::expert(p.a, e, rank), be = model::expert(p.b, e, out);
    const ops::Matrix we{t.type, static_cast<const uint8_t*>(t.data) + e * matrix_bytes, out, in,
                         row_bytes};
    for (int64_t r = 0; r < rank; ++r) ops::dequantize_row(ae, r, a.data() + r * in);
    if (tiles) {  // one checked decode of the whole matrix, not a tile row per row
      quant::astc::decode_matrix(static_cast<const uint8_t*>(we.data), out, in, "tensor " + t.name,
                                 w.data());
    }
    for (int64_t o = 0; o < out; ++o) {
      float* row = w.data() + o * in;
      if (!tiles) ops::dequantize_row(we, o, row);
      ops::dequantize_row(be, o, b.data());
      add_update(row, b.data(), a, rank, in, scale);
      if (!tiles) {
        quant::encode_values(row, static_cast<size_t>(in), t.type,
                             bytes.data() + e * matrix_bytes + o * row_bytes);
      }
    }
    if (tiles) {
      quant::astc::EncodeOptions options;
      options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      quant::astc::encode_matrix(w.data(), out, in, options, bytes.data() + e * matrix_bytes);
    }
  }
  return bytes;
}

// Box-Muller over a splitmix64 stream: the same numbers on every platform.
class Normal {
 public:
  explicit Normal(uint64_t seed) : state_(seed) {}
  float next(float std) {
    const double u1 = (static_cast<double>(bits() >> 11) + 1) * 0x1p-53;
    const double u2 = static_cast<double>(bits() >> 11) * 0x1p-53;
    return static_cast<float>(std * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

 private:
  uint64_t bits() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

bool wanted(const std::string& name, const std::vector<std::string>& targets) {
  if (targets.empty()) return true;
  for (const std::string& t : targets) {
    if (name == t + ".weight" || name.ends_with("." + t + ".weight")) return true;
  }
  return false;
}

}  // namespace

int64_t merge_adapter(const gguf::File& base, const model::LoraAdapter& adapter, float scale,
                      const std::string& out_path) {
  gguf::Writer w;
  for (const auto& [key, value] : base.metadata()) {
    if (key == "general.alignment") continue;  // set_alignment writes it
    w.set(key, value);
  }
  if (base.alignment() != gguf::kDefaultAlignment) {
    w.set_alignment(static_cast<uint32_t>(base.alignment()));
  }
  int64_t changed = 0;
  for (const gguf::TensorInfo& t : base.tensors()) {
    const model::LoraPair* p = adapter.find(t.name);
    if (!p) {
      w.add_tensor(t.name, t.type, t.shape, t.bytes());
      continue;
    }
    const float s = adapter.scale_for(*p, scale);
    const gguf::TensorInfo* info = &t;
    w.add_tensor(t.name, t.type, t.shape,
                 [info, p, s](std::vector<uint8_t>& out) { out = merged_tensor(*info, *p, s); });
    ++changed;
  }
  w.write(out_path);
  return changed;
}

int64_t write_random_adapter(const gguf::File& base, const RandomAdapterOptions& o,
                             const std::string& out_path) {
  model::LoraWriter writer(base, o.alpha);
  Normal normal(o.seed);
  int64_t n = 0;
  for (const gguf::TensorInfo& t : base.tensors()) {
    if (!model::is_adaptable_tensor(t.name) || t.shape.size() < 2 || !wanted(t.name, o.targets)) {
      continue;
    }
    const int64_t in = static_cast<int64_t>(t.shape[0]), out = static_cast<int64_t>(t.shape[1]);
    const int64_t stack = t.shape.size() == 3 ? static_cast<int64_t>(t.shape[2]) : 1;
    std::vector<float> a(stack * o.rank * in), b(stack * out * o.rank);
    const float std_a = 1.0f / std::sqrt(static_cast<float>(in));
    for (float& v : a) v = normal.next(std_a);
    for (float& v : b) v = normal.next(o.std_b);
    writer.add(t.name, o.rank, a, b, o.type);
    ++n;
  }
  if (n == 0) throw_error(ErrorCode::kInvalidArgument, "adapter random: no tensor of " + base.path() + " matches the targets");
  writer.write(out_path);
  return n;
}

}  // namespace afm::cli
