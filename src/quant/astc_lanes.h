// The lane form of an astc6x6 matrix: what the runtime's matmul reads instead of the file's
// ASTC blocks (docs/compression.md, "Decoding ASTC on a CPU").
//
// Why: a CPU has no texture unit, and parsing an ASTC block (mode, integer sequence, endpoint
// mode) costs hundreds of cycles where a q4_0 block costs a few instructions. Nearly every block
// afm's encoder writes has the same shape: one partition, a full 6 x 6 weight grid of 6 levels,
// HDR endpoints. Such a block is fully described by its two 16-bit endpoints and 36 level
// digits, and 36 base-6 digits fit 12 bytes (3 to a byte, 6^3 = 216), so the block is rewritten
// at load, once, into a 16-byte lane block that SIMD decodes with a few integer operations and
// one permute per 8 weights. Every other block (other grids, levels, LDR endpoints, constant
// blocks) is an exception: its 36 decoded values are kept beside the matrix. The form decodes
// to exactly the f16 values of decode_block_f16 (tested on every block of real matrices).
//
// One matrix's region: the lane blocks (tile-row-major, 16 bytes each), the f16 tile offsets as
// in the file, then an index of (tile_rows + 1) u64 byte offsets, counted from the region's
// start, of each tile row's first exception record; records of tile row tr lie in
// [index[tr], index[tr + 1]); then one byte per tile row, its exponent (below). Records follow
// the regions of all the matrices of a stack, so a region has a fixed size and the e-th matrix
// of a stack starts at e * lane_layout().bytes. An exception's tile holds an all-zero lane
// block, which decodes to zeros.
//
// The exponent E of a tile row lets the integer kernels read every lane block of the row as
// integers on one scale: each palette value of its lane blocks is a normal f16 whose exponent
// field lies in [E, E + kExponentSpan], so it equals m << (exponent - E) times 2^(E - 25), with m
// the 11-bit significand, an integer below 2^15. A block of the lane shape outside the row's span
// is an exception. make_lane_forms picks the E that leaves the fewest.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/astc6x6.h"

namespace afm::quant::astc {

inline constexpr int kLevels = 6;   // weight levels of a lane block
inline constexpr int kDigitBytes = 12;
inline constexpr int kLanes = 48;   // a decoded tile in lane order: 36 texels and 12 padding lanes
inline constexpr int kExponentSpan = 4;  // 2047 << 4 still fits a signed 16-bit lane

// The six unquantised weights (of 0..64) that digits 0..5 stand for, ascending: ASTC's 6-level
// weight range.
const std::array<uint8_t, kLevels>& lane_weights();

struct LaneBlock {
  // digits[j] = l(j) + 6 l(j + 12) + 36 l(j + 24), l(t) the level of texel t.
  uint8_t digits[kDigitBytes];
  uint16_t e0, e1;  // the HDR endpoints, 16-bit LNS
};
static_assert(sizeof(LaneBlock) == 16);

// Lane order, the order in which SIMD unpacks a lane block: lane L = 8 v + i, with v = 2 d + p
// (d the digit of its byte, p a parity), is texel j + 12 d where j = 2 i + p, when j < 12;
// otherwise L is padding (-1 here). Each digit byte widened to a 16-bit lane, 8 such pairs to a
// 32-bit-lane register: lane i takes the even byte's digit, the odd byte's after a 16-bit shift.
int lane_texel(int lane);

// A tile that has no lane block: its texels' f16 values in lane order, 0 at padding.
struct LaneException {
  uint32_t tile_col = 0;
  uint32_t reserved = 0;
  uint16_t lanes[kLanes] = {};
};
static_assert(sizeof(LaneException) == 104);

// Fills `out` and returns true when `block` has a lane block: a full 6 x 6 grid, HDR endpoints
// and every weight one of lane_weights().
bool to_lane_block(const uint8_t block[kBlockBytes], LaneBlock* out);
// Texel i's f16 bits at out[i]: the scalar reference the SIMD kernels are tested against.
void lane_block_f16(const LaneBlock& block, uint16_t out[kTexels]);
// The 8 palette values of a lane block: digit k (0..5) decodes to palette[k]; 6 and 7 (which
// only padding lanes can select) give the value at weight 0.
void lane_palette_f16(const LaneBlock& block, uint16_t palette[8]);

// The smallest and largest exponent field among a lane block's 8 palette values before their
// conversion to f16: 31 where the conversion clamps to the largest finite f16 (such a block has
// no integer form), else the f16 exponent field.
void lane_exponent_range(const LaneBlock& block, int* lo, int* hi);

// The integer significand of palette value k of a lane block on its tile row's scale: m << (e -
// exponent) for a normal value with exponent field e in [exponent, exponent + kExponentSpan], so
// that the value is the result times 2^(exponent - 25); 0 when e is below `exponent` (the
// all-zero block of an exception) or more than 15 above it, as the SIMD shift gives. The scalar
// reference of the integer kernels.
int32_t lane_palette_int(const LaneBlock& block, int k, int exponent);

// Sizes of one matrix's region.
struct LaneLayout {
  int64_t tile_rows = 0, tile_cols = 0;
  size_t offsets_at = 0;    // byte offset of the f16 tile offsets
  size_t index_at = 0;      // byte offset of the exception index (8-byte aligned)
  size_t exponents_at = 0;  // byte offset of the tile rows' exponents
  size_t bytes = 0;         // the region, a multiple of 64
};
LaneLayout lane_layout(int64_t rows, int64_t cols);

// The lane forms of `count` validated matrices of rows x cols laid end to end in `astc` (a
// stack as the file stores it), each block parsed once: their regions one after another, then
// every exception record. place() writes them to `out` (bytes() of it), where the regions'
// indexes expect them.
struct LaneForms {
  std::vector<uint8_t> regions;
  std::vector<LaneException> records;

  size_t bytes() const { return regions.size() + records.size() * sizeof(LaneException); }
  void place(uint8_t* out) const;
};
LaneForms make_lane_forms(const uint8_t* astc, int64_t count, int64_t rows, int64_t cols);

// Read access to a region.
struct LaneView {
  const LaneBlock* blocks = nullptr;
  const uint16_t* offsets = nullptr;
  const uint64_t* index = nullptr;
  const uint8_t* exponents = nullptr;  // per tile row, at least 1
  const uint8_t* base = nullptr;
  int64_t tile_rows = 0, tile_cols = 0;

  const LaneException* exceptions_begin(int64_t tile_row) const {
    return reinterpret_cast<const LaneException*>(base + index[tile_row]);
  }
  const LaneException* exceptions_end(int64_t tile_row) const {
    return reinterpret_cast<const LaneException*>(base + index[tile_row + 1]);
  }
};
LaneView lane_view(const void* region, int64_t rows, int64_t cols);

}  // namespace afm::quant::astc
