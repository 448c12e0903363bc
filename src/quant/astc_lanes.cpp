#include "quant/astc_lanes.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "quant/astc_ise.h"

namespace afm::quant::astc {
namespace {

constexpr int kSixLevelRange = 4;  // weight range index of 6 levels (1 trit and 1 bit)

// The level of each unquantised weight (0..64) among lane_weights(), or -1.
const std::array<int8_t, 65>& levels() {
  static const auto table = [] {
    std::array<int8_t, 65> t;
    t.fill(-1);
    for (int k = 0; k < kLevels; ++k) t[lane_weights()[k]] = static_cast<int8_t>(k);
    return t;
  }();
  return table;
}

}  // namespace

const std::array<uint8_t, kLevels>& lane_weights() {
  static const auto table = [] {
    std::array<uint8_t, kLevels> w{};
    const auto& q = detail::unquantized().weight[kSixLevelRange];
    AFM_CHECK(detail::Unquantized::levels(kSixLevelRange) == kLevels);
    std::copy(q.begin(), q.begin() + kLevels, w.begin());
    std::sort(w.begin(), w.end());
    return w;
  }();
  return table;
}

int lane_texel(int lane) {
  const int v = lane / 8, i = lane % 8;
  const int d = v / 2, p = v % 2;
  const int j = 2 * i + p;
  return j < kDigitBytes ? j + kDigitBytes * d : -1;
}

bool to_lane_block(const uint8_t block[kBlockBytes], LaneBlock* out) {
  FullGridBlock g;
  if (!full_grid_block(block, &g) || !g.hdr) return false;
  const auto& table = levels();
  int level[kTexels];
  bool all = true;
  for (int t = 0; t < kTexels; ++t) {
    level[t] = table[g.weights[t]];
    all &= level[t] >= 0;
  }
  if (!all) return false;
  for (int j = 0; j < kDigitBytes; ++j) {
    out->digits[j] = static_cast<uint8_t>(level[j] + 6 * level[j + 12] + 36 * level[j + 24]);
  }
  out->e0 = static_cast<uint16_t>(g.e0);
  out->e1 = static_cast<uint16_t>(g.e1);
  return true;
}

void lane_palette_f16(const LaneBlock& block, uint16_t palette[8]) {
  for (int k = 0; k < 8; ++k) {
    palette[k] = texel_value(block.e0, block.e1, true, k < kLevels ? lane_weights()[k] : 0);
  }
}

void lane_block_f16(const LaneBlock& block, uint16_t out[kTexels]) {
  uint16_t palette[8];
  lane_palette_f16(block, palette);
  for (int j = 0; j < kDigitBytes; ++j) {
    const int b = block.digits[j];
    out[j] = palette[b % 6];
    out[j + 12] = palette[(b / 6) % 6];
    out[j + 24] = palette[b / 36];
  }
}

void lane_exponent_range(const LaneBlock& block, int* lo, int* hi) {
  // From the interpolated LNS values, not the f16 results: an LNS exponent field of 31 is
  // clamped to the largest finite f16 (field 30), which the integer kernels' shift would not
  // reproduce. Below 31 the two fields are equal.
  *lo = 31, *hi = 0;
  for (int k = 0; k < 8; ++k) {
    const int w = k < kLevels ? lane_weights()[k] : 0;
    const int field = ((block.e0 * (64 - w) + block.e1 * w + 32) >> 6) >> 11;
    *lo = std::min(*lo, field);
    *hi = std::max(*hi, field);
  }
}

int32_t lane_palette_int(const LaneBlock& block, int k, int exponent) {
  uint16_t palette[8];
  lane_palette_f16(block, palette);
  const int e = palette[k] >> 10, shift = e - exponent;
  if (shift < 0 || shift > 15) return 0;
  // A signed 16-bit lane, as the SIMD shift leaves it (positive within the span).
  return static_cast<int16_t>(static_cast<uint16_t>((1024 | (palette[k] & 1023)) << shift));
}

LaneLayout lane_layout(int64_t rows, int64_t cols) {
  const TileGrid g = tile_grid(rows, cols);
  LaneLayout l;
  l.tile_rows = g.tile_rows;
  l.tile_cols = g.tile_cols;
  const size_t tiles = static_cast<size_t>(g.tile_rows * g.tile_cols);
  l.offsets_at = tiles * sizeof(LaneBlock);
  l.index_at = (l.offsets_at + tiles * 2 + 7) / 8 * 8;
  l.exponents_at = l.index_at + static_cast<size_t>(g.tile_rows + 1) * 8;
  l.bytes = (l.exponents_at + static_cast<size_t>(g.tile_rows) + 63) / 64 * 64;
  return l;
}

namespace {

// A lane block's exponent range, or none (lo > hi) for a tile that has no lane block.
struct ExponentRange {
  int lo = 1, hi = 0;
  // Whether the integer kernels can read the block on a tile row of exponent e: normal values
  // (field 1..30, no clamp to the largest finite f16) within the span.
  bool fits(int e) const { return lo <= hi && lo >= e && hi <= e + kExponentSpan && lo >= 1 && hi <= 30; }
};

// The exponent of a tile row: the E in 1..30 that the most of its lane blocks fit. Block b fits
// every E in [hi - span, lo]: a difference array over E counts them in one pass.
int row_exponent(const std::vector<ExponentRange>& ranges) {
  int count[32] = {};
  for (const ExponentRange& r : ranges) {
    if (r.lo > r.hi || r.lo < 1 || r.hi > 30) continue;
    const int from = std::max(1, r.hi - kExponentSpan), to = r.lo;
    if (from > to) continue;
    ++count[from];
    --count[to + 1];
  }
  int best = 1, best_count = -1, running = 0;
  for (int e = 1; e <= 30; ++e) {
    running += count[e];
    if (running > best_count) best = e, best_count = running;
  }
  return best;
}

// Building a stack's lane forms: work unit u is tile row u % tile_rows of matrix u / tile_rows.
struct Builder {
  const uint8_t* astc;
  int64_t count, rows, cols;
  LaneLayout layout;
  size_t file_bytes;
  LaneForms& out;
  std::vector<uint64_t> first_record;  // per unit: its first record's index, chunk-local at first

  int64_t units() const { return count * layout.tile_rows; }

  // Units [begin, end): lane blocks into the regions, exceptions appended to `records`.
  void build(int64_t begin, int64_t end, std::vector<LaneException>& records) {
    std::vector<ExponentRange> ranges;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t e = u / layout.tile_rows, tr = u % layout.tile_rows;
      const uint8_t* blocks_in = astc + e * file_bytes;
      uint8_t* region = out.regions.data() + e * layout.bytes;
      auto* blocks = reinterpret_cast<LaneBlock*>(region);
      first_record[u] = records.size();
      ranges.assign(static_cast<size_t>(layout.tile_cols), ExponentRange{});
      for (int64_t tc = 0; tc < layout.tile_cols; ++tc) {
        const int64_t t = tr * layout.tile_cols + tc;
        if (to_lane_block(blocks_in + t * kBlockBytes, &blocks[t])) {
          lane_exponent_range(blocks[t], &ranges[tc].lo, &ranges[tc].hi);
        }
      }
      const int exponent = row_exponent(ranges);
      region[layout.exponents_at + tr] = static_cast<uint8_t>(exponent);
      for (int64_t tc = 0; tc < layout.tile_cols; ++tc) {
        const int64_t t = tr * layout.tile_cols + tc;
        if (ranges[tc].fits(exponent)) continue;
        blocks[t] = LaneBlock{};  // decodes to zeros: the record carries the tile
        uint16_t texels[kTexels];
        AFM_CHECK(decode_block_f16(blocks_in + t * kBlockBytes, texels) == BlockStatus::kOk);
        LaneException& x = records.emplace_back();
        x.tile_col = static_cast<uint32_t>(tc);
        for (int lane = 0; lane < kLanes; ++lane) {
          const int texel = lane_texel(lane);
          x.lanes[lane] = texel < 0 ? 0 : texels[texel];
        }
      }
    }
  }

  // The offsets, the indexes (record g lies past all the regions: (count - e) x region + g x
  // record bytes from region e's start), once every unit's first record is global.
  void finish() {
    const TileGrid g = tile_grid(rows, cols);
    for (int64_t e = 0; e < count; ++e) {
      uint8_t* region = out.regions.data() + e * layout.bytes;
      std::memcpy(region + layout.offsets_at, astc + e * file_bytes + g.offsets_at,
                  static_cast<size_t>(layout.tile_rows * layout.tile_cols) * 2);
      auto* index = reinterpret_cast<uint64_t*>(region + layout.index_at);
      for (int64_t tr = 0; tr <= layout.tile_rows; ++tr) {
        const int64_t u = e * layout.tile_rows + tr;
        const uint64_t record = u < units() ? first_record[u] : out.records.size();
        index[tr] = (count - e) * layout.bytes + record * sizeof(LaneException);
      }
    }
  }
};

}  // namespace

LaneForms make_lane_forms(const uint8_t* astc, int64_t count, int64_t rows, int64_t cols) {
  LaneForms f;
  Builder b{astc, count, rows, cols, lane_layout(rows, cols), tile_grid(rows, cols).bytes, f, {}};
  f.regions.assign(count * b.layout.bytes, 0);
  b.first_record.resize(b.units());
  // Contiguous chunks of tile rows, one thread each: a block parse is hundreds of cycles, and a
  // 0.5B model has ten million blocks.
  const int64_t chunks = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1,
                                             std::max<int64_t>(1, b.units() / 64));
  std::vector<std::vector<LaneException>> records(chunks);
  auto run = [&](int64_t c) { b.build(b.units() * c / chunks, b.units() * (c + 1) / chunks, records[c]); };
  std::vector<std::thread> threads;
  for (int64_t c = 1; c < chunks; ++c) threads.emplace_back(run, c);
  run(0);
  for (std::thread& t : threads) t.join();
  for (int64_t c = 0; c < chunks; ++c) {
    for (int64_t u = b.units() * c / chunks; u < b.units() * (c + 1) / chunks; ++u) {
      b.first_record[u] += f.records.size();
    }
    f.records.insert(f.records.end(), records[c].begin(), records[c].end());
  }
  b.finish();
  return f;
}

void LaneForms::place(uint8_t* out) const {
  std::memcpy(out, regions.data(), regions.size());
  if (!records.empty()) {
    std::memcpy(out + regions.size(), records.data(), records.size() * sizeof(LaneException));
  }
}

LaneView lane_view(const void* region, int64_t rows, int64_t cols) {
  const LaneLayout l = lane_layout(rows, cols);
  const auto* base = static_cast<const uint8_t*>(region);
  LaneView v;
  v.blocks = reinterpret_cast<const LaneBlock*>(base);
  v.offsets = reinterpret_cast<const uint16_t*>(base + l.offsets_at);
  v.index = reinterpret_cast<const uint64_t*>(base + l.index_at);
  v.exponents = base + l.exponents_at;
  v.base = base;
  v.tile_rows = l.tile_rows;
  v.tile_cols = l.tile_cols;
  return v;
}

}  // namespace afm::quant::astc
