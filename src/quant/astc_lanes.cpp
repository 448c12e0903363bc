#include "quant/astc_lanes.h"

#include <algorithm>
#include <cstring>

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

LaneLayout lane_layout(int64_t rows, int64_t cols) {
  const TileGrid g = tile_grid(rows, cols);
  LaneLayout l;
  l.tile_rows = g.tile_rows;
  l.tile_cols = g.tile_cols;
  const size_t tiles = static_cast<size_t>(g.tile_rows * g.tile_cols);
  l.offsets_at = tiles * sizeof(LaneBlock);
  l.index_at = (l.offsets_at + tiles * 2 + 7) / 8 * 8;
  l.bytes = (l.index_at + static_cast<size_t>(g.tile_rows + 1) * 8 + 63) / 64 * 64;
  return l;
}

namespace {

// One matrix's region at `region` (lane_layout().bytes, zeroed), its records appended to
// `records`; the records will lie `records_at` bytes past the region's start.
void write_lane_form(const uint8_t* astc, int64_t rows, int64_t cols, uint8_t* region,
                     std::vector<LaneException>& records, uint64_t records_at) {
  const LaneLayout l = lane_layout(rows, cols);
  const TileGrid g = tile_grid(rows, cols);
  auto* blocks = reinterpret_cast<LaneBlock*>(region);
  std::memcpy(region + l.offsets_at, astc + g.offsets_at, static_cast<size_t>(l.tile_rows * l.tile_cols) * 2);
  auto* index = reinterpret_cast<uint64_t*>(region + l.index_at);
  const size_t first = records.size();
  auto record_offset = [&] { return records_at + (records.size() - first) * sizeof(LaneException); };
  for (int64_t tr = 0; tr < l.tile_rows; ++tr) {
    index[tr] = record_offset();
    for (int64_t tc = 0; tc < l.tile_cols; ++tc) {
      const int64_t t = tr * l.tile_cols + tc;
      if (to_lane_block(astc + t * kBlockBytes, &blocks[t])) continue;
      blocks[t] = LaneBlock{};  // decodes to zeros: the record carries the tile
      uint16_t texels[kTexels];
      AFM_CHECK(decode_block_f16(astc + t * kBlockBytes, texels) == BlockStatus::kOk);
      LaneException& e = records.emplace_back();
      e.tile_col = static_cast<uint32_t>(tc);
      for (int lane = 0; lane < kLanes; ++lane) {
        const int texel = lane_texel(lane);
        e.lanes[lane] = texel < 0 ? 0 : texels[texel];
      }
    }
  }
  index[l.tile_rows] = record_offset();
}

}  // namespace

LaneForms make_lane_forms(const uint8_t* astc, int64_t count, int64_t rows, int64_t cols) {
  const size_t region = lane_layout(rows, cols).bytes;
  const size_t file_bytes = tile_grid(rows, cols).bytes;
  LaneForms f;
  f.regions.assign(count * region, 0);
  for (int64_t e = 0; e < count; ++e) {
    // Records follow all the regions: from region e, past the rest of them and the records
    // already written.
    const uint64_t records_at = (count - e) * region + f.records.size() * sizeof(LaneException);
    write_lane_form(astc + e * file_bytes, rows, cols, f.regions.data() + e * region, f.records,
                    records_at);
  }
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
  v.base = base;
  v.tile_rows = l.tile_rows;
  v.tile_cols = l.tile_cols;
  return v;
}

}  // namespace afm::quant::astc
