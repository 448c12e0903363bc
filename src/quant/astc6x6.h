// ASTC 6x6 weight tiles, afm's `astc6x6` tensor type (docs/gguf.md, "astc6x6"; the report's
// server-model compression, section 6).
//
// A matrix of R rows and C columns is cut into ceil(R/6) x ceil(C/6) tiles of 6 x 6 weights.
// Each tile is one 16-byte ASTC block (block footprint 6x6, profile HDR RGB + LDR alpha) whose
// channel R, decoded to f16, plus the tile's f16 offset gives the weights:
//   w(r, c) = R(tile(r / 6, c / 6), texel (r % 6, c % 6)) + offset(tile)
// A matrix's bytes are its blocks in tile-row-major order, then its offsets in the same order.
//
// The decoder here is afm's own: it handles the blocks the encoder (astc_encoder.h) is set to
// emit, single-partition single-plane blocks of every colour endpoint mode plus void-extent
// (constant) blocks, and is bit-exact against astcenc_decompress_image on them (tests/quant).
// Blocks with 2-4 partitions or two weight planes, and blocks the ASTC specification calls
// errors, are refused (BlockStatus), so a file is checked once at load (validate_matrix).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace afm::quant::astc {

inline constexpr int kTile = 6;         // tile side, in weights
inline constexpr int kTexels = 36;      // weights per tile
inline constexpr size_t kBlockBytes = 16;
inline constexpr size_t kTileBytes = kBlockBytes + 2;  // the block and its f16 offset

enum class BlockStatus : uint8_t {
  kOk,
  kInvalid,             // an error block in the ASTC specification's sense
  kPartitioned,         // 2-4 partitions: valid ASTC, but not what afm's encoder writes
  kDualPlane,           // two weight planes: the same
};
std::string_view block_status_text(BlockStatus status);

// Channel R of one block as the f16 bit patterns a conforming decoder produces (profile HDR RGB
// + LDR alpha), texel (row y, column x) at out[6 * y + x]. out is untouched unless kOk.
BlockStatus decode_block_f16(const uint8_t block[kBlockBytes], uint16_t out[kTexels]);
// The same, widened to float.
BlockStatus decode_block(const uint8_t block[kBlockBytes], float out[kTexels]);

// A block whose weight grid is the full 6 x 6 (one partition, one plane): texel i is
// texel_value(endpoints, weights[i]) with no infill, so it takes one of at most as many values
// as the weight range has levels. The runtime's lane form (quant/astc_lanes.h) is built from it.
struct FullGridBlock {
  int32_t e0 = 0, e1 = 0;  // the endpoints: 16-bit LNS when hdr, UNORM16 otherwise
  bool hdr = false;
  uint8_t weights[kTexels] = {};  // unquantised, 0..64, texel (y, x) at 6 * y + x
};
// True, filling `out`, when `block` is valid and has that shape; false for anything else
// (void-extent, smaller grids, blocks decode_block refuses).
bool full_grid_block(const uint8_t block[kBlockBytes], FullGridBlock* out);
// One texel's f16 bits from a block's endpoints and an unquantised weight (0..64): the
// interpolation and conversion decode_block_f16 applies.
uint16_t texel_value(int32_t e0, int32_t e1, bool hdr, int weight);

// Where the parts of one rows x cols matrix lie.
struct TileGrid {
  int64_t tile_rows = 0, tile_cols = 0;
  size_t offsets_at = 0;  // byte offset of the f16 offsets (= blocks' bytes)
  size_t bytes = 0;       // the whole matrix
};
TileGrid tile_grid(int64_t rows, int64_t cols);

// Throws Error(kFormat) naming `what`, the tile and the reason for the first block of the
// matrix that decode_block refuses, or an offset that is not a finite number.
void validate_matrix(const uint8_t* data, int64_t rows, int64_t cols, const std::string& what);

// validate_matrix, then every row of the matrix into out (rows x cols floats): for readers of
// files that have not been checked yet (the trainer's import, afm quantize, adapter merging).
void decode_matrix(const uint8_t* data, int64_t rows, int64_t cols, const std::string& what,
                   float* out);

// Decodes rows [row_begin, row_end) of a validated matrix into out, (row_end - row_begin) x
// cols floats, rows `cols` apart.
void decode_rows(const uint8_t* data, int64_t rows, int64_t cols, int64_t row_begin,
                 int64_t row_end, float* out);

}  // namespace afm::quant::astc
