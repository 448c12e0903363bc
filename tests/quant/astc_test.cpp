// afm's ASTC 6x6 decoder against the outside oracle, Arm's astcenc_decompress_image (Debian
// libastcenc), on random blocks of every kind and on real trained weight matrices; and the
// astc6x6 matrix layout (offsets, padding, validation).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <vector>

extern "C" {
#include <astcenc.h>
}

#include "base/error.h"
#include "base/half.h"
#include "gguf/reader.h"
#include "quant/astc6x6.h"
#include "quant/astc_encoder.h"
#include "quant/astc_lanes.h"
#include "quant/tensor_encode.h"

namespace afm::quant::astc {
namespace {

// Decodes `blocks` (n of them, laid out as a strip n tiles wide) with astcenc: channel R of
// every texel, block b's texel (y, x) at out[b * 36 + 6 * y + x].
std::vector<float> library_decode(const std::vector<uint8_t>& blocks) {
  const size_t n = blocks.size() / kBlockBytes;
  astcenc_config config;
  EXPECT_EQ(astcenc_config_init(ASTCENC_PRF_HDR_RGB_LDR_A, kTile, kTile, 1, ASTCENC_PRE_FAST,
                                ASTCENC_FLG_DECOMPRESS_ONLY, &config),
            ASTCENC_SUCCESS);
  astcenc_context* context = nullptr;
  EXPECT_EQ(astcenc_context_alloc(&config, 1, &context), ASTCENC_SUCCESS);
  std::vector<float> rgba(n * kTexels * 4);
  void* slices[1] = {rgba.data()};
  astcenc_image image{static_cast<unsigned>(n * kTile), kTile, 1, ASTCENC_TYPE_F32, slices};
  const astcenc_swizzle swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_G, ASTCENC_SWZ_B, ASTCENC_SWZ_A};
  EXPECT_EQ(astcenc_decompress_image(context, blocks.data(), blocks.size(), &image, &swizzle, 0),
            ASTCENC_SUCCESS);
  astcenc_context_free(context);
  std::vector<float> r(n * kTexels);
  for (size_t b = 0; b < n; ++b) {
    for (int y = 0; y < kTile; ++y) {
      for (int x = 0; x < kTile; ++x) {
        r[b * kTexels + y * kTile + x] = rgba[(y * n * kTile + b * kTile + x) * 4];
      }
    }
  }
  return r;
}

bool same_value(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || float_bits(a) == float_bits(b);
}

// Random blocks with a chosen shape: `single` clears the partition bits, so most decode.
std::vector<uint8_t> random_blocks(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> out(n * kBlockBytes);
  for (size_t b = 0; b < n; ++b) {
    uint64_t lo = rng(), hi = rng();
    switch (b % 8) {
      case 0: break;  // anything: partitions, dual plane, error blocks
      case 1:         // void extent, extents all ones, HDR or LDR colour
        lo = (lo & ~0xFFFull & ~0x200ull) | 0x1FC | 0xC00 | (hi & 0x200);
        lo |= 0xFFFFFFFFFFFFF000ull;
        break;
      default: lo &= ~(uint64_t{3} << 11); break;  // one partition
    }
    std::memcpy(&out[b * kBlockBytes], &lo, 8);
    std::memcpy(&out[b * kBlockBytes + 8], &hi, 8);
  }
  return out;
}

TEST(AstcDecoder, RandomBlocksMatchLibraryBitForBit) {
  const size_t n = 120000;
  const std::vector<uint8_t> blocks = random_blocks(n, 20261126);
  const std::vector<float> want = library_decode(blocks);
  std::map<BlockStatus, int> statuses;
  std::map<int, int> modes_seen;  // colour endpoint mode of every decoded non-constant block
  for (size_t b = 0; b < n; ++b) {
    uint16_t got[kTexels];
    const BlockStatus s = decode_block_f16(&blocks[b * kBlockBytes], got);
    ++statuses[s];
    if (s == BlockStatus::kInvalid) {
      // The library decodes error blocks to its error colour, never a finite weight pattern
      // that a valid block could make: our refusal must match its verdict.
      const float v = want[b * kTexels];
      EXPECT_TRUE(std::isnan(v) || v == 1.0f) << "block " << b << " library gives " << v;
      continue;
    }
    if (s != BlockStatus::kOk) continue;
    if ((blocks[b * kBlockBytes] & 0xFF) != 0xFC || (blocks[b * kBlockBytes + 1] & 1) != 1) {
      ++modes_seen[(blocks[b * kBlockBytes + 1] >> 5) | ((blocks[b * kBlockBytes + 2] & 1) << 3)];
    }
    for (int i = 0; i < kTexels; ++i) {
      ASSERT_TRUE(same_value(f16_to_f32(got[i]), want[b * kTexels + i]))
          << "block " << b << " texel " << i << ": afm " << f16_to_f32(got[i]) << ", astcenc "
          << want[b * kTexels + i];
    }
  }
  // About a fifth of random single-partition patterns are valid ASTC (the rest are error
  // blocks: too few colour bits, weight grids larger than the block ...).
  EXPECT_GT(statuses[BlockStatus::kOk], static_cast<int>(n / 6));
  EXPECT_GT(statuses[BlockStatus::kPartitioned], 0);
  EXPECT_GT(statuses[BlockStatus::kDualPlane], 0);
  EXPECT_EQ(modes_seen.size(), 16u) << "every colour endpoint mode decoded at least once";
}

// The load-time check settles a block's status without decoding its integer sequences: its
// verdict must be the full decoder's on every kind of block.
TEST(AstcMatrix, ValidationAgreesWithTheDecoder) {
  const std::vector<uint8_t> blocks = random_blocks(30000, 99);
  int accepted = 0;
  for (size_t b = 0; b < blocks.size() / kBlockBytes; ++b) {
    uint8_t tile[kTileBytes] = {};  // one 6 x 6 tile: the block, then a zero offset
    std::memcpy(tile, &blocks[b * kBlockBytes], kBlockBytes);
    uint16_t texels[kTexels];
    const bool ok = decode_block_f16(tile, texels) == BlockStatus::kOk;
    bool valid = true;
    try {
      validate_matrix(tile, kTile, kTile, "m");
    } catch (const Error&) {
      valid = false;
    }
    ASSERT_EQ(valid, ok) << "block " << b;
    accepted += valid;
  }
  EXPECT_GT(accepted, 30000 / 6);
}

// Real trained weights: a few matrices of the shipped model.
std::vector<float> model_matrix(const std::string& name, int64_t& rows, int64_t& cols) {
  const auto file = gguf::File::open("models/afm-device-21m.gguf");
  const gguf::TensorInfo& t = file.get_tensor(name);
  cols = static_cast<int64_t>(t.shape[0]);
  rows = static_cast<int64_t>(t.shape[1]);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  decode_values(static_cast<const uint8_t*>(t.data), w.size(), t.type, w.data());
  return w;
}

double relative_rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double e = 0, s = 0;
  for (size_t i = 0; i < a.size(); ++i) e += (a[i] - b[i]) * double(a[i] - b[i]), s += double(a[i]) * a[i];
  return std::sqrt(e / s);
}

TEST(AstcDecoder, EncodedWeightsMatchLibraryAndReconstruct) {
  for (const char* name : {"blk.0.attn_q.weight", "blk.2.attn_v.weight", "blk.3.ffn_down.weight"}) {
    int64_t rows = 0, cols = 0;
    const std::vector<float> w = model_matrix(name, rows, cols);
    double rmse[2];
    for (OffsetMode mode : {OffsetMode::kPowerOfTwo, OffsetMode::kMinimum}) {
      const TileGrid g = tile_grid(rows, cols);
      std::vector<uint8_t> data(g.bytes);
      EncodeOptions options;
      options.offset = mode;
      options.effort = ASTCENC_PRE_FAST;
      options.threads = 2;
      encode_matrix(w.data(), rows, cols, options, data.data());
      // Every block bit-exact against the library.
      const std::vector<uint8_t> blocks(data.begin(), data.begin() + g.offsets_at);
      const std::vector<float> want = library_decode(blocks);
      for (size_t b = 0; b < blocks.size() / kBlockBytes; ++b) {
        float got[kTexels];
        ASSERT_EQ(decode_block(&blocks[b * kBlockBytes], got), BlockStatus::kOk) << name << " block " << b;
        for (int i = 0; i < kTexels; ++i) ASSERT_TRUE(same_value(got[i], want[b * kTexels + i]));
      }
      std::vector<float> back(w.size());
      decode_rows(data.data(), rows, cols, 0, rows, back.data());
      rmse[mode == OffsetMode::kMinimum] = relative_rmse(w, back);
    }
    // The power-of-two shift keeps a tile in one binade, where the HDR levels are even: about
    // a third of the error of the report's minimum shift (bench/astc_error.py: 0.22 against 0.70).
    EXPECT_LT(rmse[0], 0.26) << name;
    EXPECT_LT(rmse[0], 0.7 * rmse[1]) << name;
  }
}

TEST(AstcMatrix, RaggedShapesPadAndDecodeAnyRowRange) {
  // 20 x 33: neither side a multiple of 6; the padded texels must not change the weights.
  const int64_t rows = 20, cols = 33;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = normal(rng);
  const TileGrid g = tile_grid(rows, cols);
  EXPECT_EQ(g.tile_rows, 4);
  EXPECT_EQ(g.tile_cols, 6);
  EXPECT_EQ(g.bytes, 24u * 18u);
  std::vector<uint8_t> data(g.bytes);
  encode_matrix(w.data(), rows, cols, EncodeOptions{}, data.data());
  std::vector<float> all(w.size());
  decode_rows(data.data(), rows, cols, 0, rows, all.data());
  EXPECT_LT(relative_rmse(w, all), 0.3);
  for (int64_t begin : {0, 5, 6, 13}) {
    for (int64_t end : {begin + 1, std::min<int64_t>(begin + 7, rows), rows}) {
      std::vector<float> part((end - begin) * cols);
      decode_rows(data.data(), rows, cols, begin, end, part.data());
      for (int64_t i = 0; i < (end - begin) * cols; ++i) ASSERT_EQ(part[i], all[begin * cols + i]);
    }
  }
}

TEST(AstcMatrix, ValidationNamesTheBadTile) {
  const int64_t rows = 12, cols = 12;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = normal(rng);
  const TileGrid g = tile_grid(rows, cols);
  std::vector<uint8_t> data(g.bytes);
  encode_matrix(w.data(), rows, cols, EncodeOptions{}, data.data());
  EXPECT_NO_THROW(validate_matrix(data.data(), rows, cols, "m"));

  std::vector<uint8_t> partitioned = data;
  partitioned[3 * kBlockBytes + 1] |= 0x08;  // partition count bits (11-12) of tile (1, 1)
  try {
    validate_matrix(partitioned.data(), rows, cols, "m");
    FAIL() << "a two-partition block was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat);
    EXPECT_NE(std::string(e.what()).find("tile (1, 1)"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> infinite = data;
  const uint16_t inf = 0x7C00;
  std::memcpy(&infinite[g.offsets_at + 2 * 2], &inf, 2);
  EXPECT_THROW(validate_matrix(infinite.data(), rows, cols, "m"), Error);

  std::vector<float> bad = w;
  bad[5] = NAN;
  EXPECT_THROW(encode_matrix(bad.data(), rows, cols, EncodeOptions{}, data.data()), Error);
}

// ---- the lane form (quant/astc_lanes.h) ----------------------------------------------------

// Every tile of a lane form, lane block or exception, as f16 texels.
std::vector<uint16_t> lane_form_texels(const std::vector<uint8_t>& region_and_records, int64_t rows,
                                       int64_t cols) {
  const LaneView v = lane_view(region_and_records.data(), rows, cols);
  std::vector<uint16_t> out(static_cast<size_t>(v.tile_rows * v.tile_cols) * kTexels);
  for (int64_t t = 0; t < v.tile_rows * v.tile_cols; ++t) lane_block_f16(v.blocks[t], &out[t * kTexels]);
  for (int64_t tr = 0; tr < v.tile_rows; ++tr) {
    for (auto* e = v.exceptions_begin(tr); e != v.exceptions_end(tr); ++e) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const int texel = lane_texel(lane);
        if (texel >= 0) out[(tr * v.tile_cols + e->tile_col) * kTexels + texel] = e->lanes[lane];
      }
    }
  }
  return out;
}

TEST(AstcLanes, LaneOrderCoversEveryTexelOnce) {
  std::vector<int> seen(kTexels, 0);
  int padding = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    const int t = lane_texel(lane);
    if (t < 0) {
      ++padding;
    } else {
      ++seen[t];
    }
  }
  EXPECT_EQ(padding, kLanes - kTexels);
  for (int t = 0; t < kTexels; ++t) EXPECT_EQ(seen[t], 1) << "texel " << t;
  EXPECT_EQ(lane_weights(), (std::array<uint8_t, kLevels>{0, 12, 25, 39, 52, 64}));
}

// On real weights nearly every block has a lane block, each decodes to the decoder's exact
// f16 values, and the exceptions carry the rest: the whole form equals the file's blocks.
TEST(AstcLanes, LaneFormDecodesExactlyLikeTheBlocks) {
  for (const char* name : {"blk.0.attn_q.weight", "blk.3.ffn_down.weight"}) {
    int64_t rows = 0, cols = 0;
    std::vector<float> w = model_matrix(name, rows, cols);
    // A constant tile: the encoder writes a block that has no lane block (an exception).
    for (int64_t r = 6; r < 12; ++r) std::fill(w.begin() + r * cols + 12, w.begin() + r * cols + 18, 0.25f);
    const TileGrid g = tile_grid(rows, cols);
    std::vector<uint8_t> data(g.bytes);
    EncodeOptions options;
    options.effort = ASTCENC_PRE_FAST;
    options.threads = 2;
    encode_matrix(w.data(), rows, cols, options, data.data());

    const int64_t tiles = g.tile_rows * g.tile_cols;
    int64_t lane_blocks = 0;
    for (int64_t t = 0; t < tiles; ++t) {
      LaneBlock lane;
      if (!to_lane_block(&data[t * kBlockBytes], &lane)) continue;
      ++lane_blocks;
      uint16_t want[kTexels], got[kTexels];
      ASSERT_EQ(decode_block_f16(&data[t * kBlockBytes], want), BlockStatus::kOk);
      lane_block_f16(lane, got);
      for (int i = 0; i < kTexels; ++i) ASSERT_EQ(got[i], want[i]) << name << " tile " << t << " texel " << i;
    }
    EXPECT_GT(lane_blocks, tiles * 9 / 10) << name;
    const LaneForms forms = make_lane_forms(data.data(), 1, rows, cols);
    // Blocks of the lane shape outside their tile row's exponent span are exceptions too.
    EXPECT_GE(static_cast<int64_t>(forms.records.size()), tiles - lane_blocks);
    EXPECT_LT(static_cast<int64_t>(forms.records.size()), tiles - lane_blocks + tiles / 50) << name;
    EXPECT_GT(forms.records.size(), 0u) << name << ": the constant tile should be one";

    const LaneLayout l = lane_layout(rows, cols);
    std::vector<uint8_t> form(forms.bytes(), 0xAB);
    forms.place(form.data());
    // Every lane block's palette, read as integers on its tile row's scale, is its f16 values
    // exactly: what the integer kernels multiply.
    const LaneView v = lane_view(form.data(), rows, cols);
    for (int64_t t = 0; t < tiles; ++t) {
      const int exponent = v.exponents[t / v.tile_cols];
      ASSERT_GE(exponent, 1);
      uint16_t palette[8];
      lane_palette_f16(v.blocks[t], palette);
      const bool zero = palette[0] == 0 && palette[7] == 0;  // an exception's zero block
      for (int k = 0; k < 8; ++k) {
        const int32_t m = lane_palette_int(v.blocks[t], k, exponent);
        ASSERT_LT(m, 1 << 15);
        ASSERT_GE(m, 0);
        ASSERT_EQ(std::ldexp(static_cast<float>(m), exponent - 25), zero ? 0.0f : f16_to_f32(palette[k]))
            << name << " tile " << t << " entry " << k;
      }
    }
    const std::vector<uint16_t> got = lane_form_texels(form, rows, cols);
    for (int64_t t = 0; t < tiles; ++t) {
      uint16_t want[kTexels];
      decode_block_f16(&data[t * kBlockBytes], want);
      for (int i = 0; i < kTexels; ++i) ASSERT_EQ(got[t * kTexels + i], want[i]) << name << " tile " << t;
    }
    EXPECT_EQ(std::memcmp(form.data() + l.offsets_at, data.data() + g.offsets_at, tiles * 2), 0);
  }
}

// The exponent range comes from the LNS values: a palette value whose LNS exponent field is 31
// (clamped to the largest finite f16, field 30) reads 31, so that no tile row's integer scale
// takes it in (the kernels' shift would double it).
TEST(AstcLanes, ExponentRangeSeesTheClampedTop) {
  LaneBlock b{};
  b.e0 = 0x7800, b.e1 = 0x8000;  // fields 15 and 16
  int lo = 0, hi = 0;
  lane_exponent_range(b, &lo, &hi);
  EXPECT_EQ(lo, 15);
  EXPECT_EQ(hi, 16);
  b.e0 = 0xF000, b.e1 = 0xFFF0;  // field 30, then 31: f16 0x7BFF at the top
  lane_exponent_range(b, &lo, &hi);
  uint16_t palette[8];
  lane_palette_f16(b, palette);
  EXPECT_EQ(palette[kLevels - 1], 0x7BFF);
  EXPECT_EQ(lo, 30);
  EXPECT_EQ(hi, 31);
  b = LaneBlock{};  // an exception's zero block
  lane_exponent_range(b, &lo, &hi);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 0);
}

// A lane block is claimed only where it decodes exactly: random single-partition blocks of every
// kind (almost none have the lane shape) and real blocks with their digits scrambled.
TEST(AstcLanes, OnlyBlocksOfTheLaneShapeAreClaimed) {
  const std::vector<uint8_t> blocks = random_blocks(60000, 7);
  for (size_t b = 0; b < blocks.size() / kBlockBytes; ++b) {
    LaneBlock lane;
    if (!to_lane_block(&blocks[b * kBlockBytes], &lane)) continue;
    uint16_t want[kTexels], got[kTexels];
    ASSERT_EQ(decode_block_f16(&blocks[b * kBlockBytes], want), BlockStatus::kOk);
    lane_block_f16(lane, got);
    for (int i = 0; i < kTexels; ++i) ASSERT_EQ(got[i], want[i]) << "block " << b;
  }
  int64_t rows = 0, cols = 0;
  const std::vector<float> w = model_matrix("blk.1.attn_k.weight", rows, cols);
  std::vector<uint8_t> data(tile_grid(rows, cols).bytes);
  EncodeOptions options;
  options.effort = ASTCENC_PRE_FAST;
  encode_matrix(w.data(), rows, cols, options, data.data());
  std::mt19937 rng(3);
  int claimed = 0;
  for (int b = 0; b < 2000; ++b) {
    uint8_t block[kBlockBytes];
    std::memcpy(block, &data[(b % (data.size() / 18)) * kBlockBytes], kBlockBytes);
    block[15 - rng() % 11] ^= static_cast<uint8_t>(1u << (rng() % 8));  // a weight bit
    LaneBlock lane;
    if (!to_lane_block(block, &lane)) continue;
    ++claimed;
    uint16_t want[kTexels], got[kTexels];
    ASSERT_EQ(decode_block_f16(block, want), BlockStatus::kOk);
    lane_block_f16(lane, got);
    for (int i = 0; i < kTexels; ++i) ASSERT_EQ(got[i], want[i]) << "scrambled block " << b;
  }
  EXPECT_GT(claimed, 1000);
}

}  // namespace
}  // namespace afm::quant::astc
