// The 16-row "lanes" layout of q4_k and q6_k weights, made once at load (ops/interleaved_weights)
// for the decode kernels of sets that read it (gemm.h, KQuantLaneKernels): lane r of a 512-bit
// register is row r of a 16-row group, as in the q4_0 / q8_0 interleaved layout, so one
// vpdpbusd advances 16 rows by four products and a sub-block's scale work (two conversions,
// one multiply, one fma) is paid once per 16 rows. The file's layout has a kernel unpack each
// row's six-bit scales and spread each 64-value chunk's scales over its lanes on its own: one
// AMD EPYC Zen 4 core reached 22 GB/s on q4_k from L2 and from DRAM alike, its arithmetic the
// limit, where the read bandwidth is ~32 (docs/engine.md).
//
// A group of 16 rows holds, for each super-block sb in order, the 16 rows' super-block sb in
// the same bytes as the file's 16 blocks (16 x 144 for q4_k, 16 x 210 for q6_k), so a group is
// 16 x row_bytes and row offsets stay the file's:
//
// q4_k (2,304 bytes):
//   [0, 32)     d of rows 0-15 (f16)          [32, 64)   dmin of rows 0-15 (f16)
//   [64, 256)   the 6-bit scales and mins, as four 64-byte vectors U0..U3 once unpacked:
//               byte 16 i + r of U_g is quantity 4 g + i of row r (quantities 0-7: the
//               scales of sub-blocks 0-7; 8-15: their mins). Stored as three words: N0 (at 64)
//               low nibble U0's low four bits, high nibble U1's; N1 (at 128) likewise U2, U3;
//               H (at 192) bits 2g, 2g+1: U_g's top two bits.
//   [256, 2304) codes: sub-block j's word w (j 0-7, w 0-3) at 256 + 64 (4 j + w); lane r byte i:
//               low nibble = row r's value 32 j + 4 w + i, high nibble = value 32 j + 16 + 4 w + i.
//
// q6_k (3,360 bytes):
//   [0, 32)     d of rows 0-15 (f16)
//   [32, 288)   scales: group g's (g 0-15, 16 values each) for row r at 32 + 16 g + r (int8)
//   [288, 3360) sub-block j (groups 2j, 2j+1) at 288 + 384 j:
//               four nibble words w at + 64 w: lane r byte i low nibble = the low four bits of
//                 row r's value 32 j + 4 w + i, high nibble those of value 32 j + 16 + 4 w + i;
//               two high-bit words u at + 256 + 64 u: in lane r byte i, bits 2f, 2f+1 are the
//                 top two bits of the code that nibble (c = 4 u + f: word w = c / 2, high
//                 nibble when c is odd) of byte i holds.
// Codes are the file's unsigned ones (q6_k: q + 32).
#pragma once

#include <cstddef>
#include <cstdint>

namespace afm::cpu::k_lanes {

inline constexpr int kRows = 16;

inline constexpr size_t kQ4KBlockBytes = 144;
inline constexpr size_t kQ4KGroupBlock = kRows * kQ4KBlockBytes;  // one super-block of a group
inline constexpr size_t kQ4KD = 0, kQ4KDmin = 32, kQ4KScales = 64, kQ4KCodes = 256;

inline constexpr size_t kQ6KBlockBytes = 210;
inline constexpr size_t kQ6KGroupBlock = kRows * kQ6KBlockBytes;
inline constexpr size_t kQ6KD = 0, kQ6KScales = 32, kQ6KSubBlocks = 288, kQ6KSubBlockBytes = 384;
inline constexpr size_t kQ6KHighBits = 256;  // within a sub-block

// w: n_rows (a multiple of 16) rows of k values (a multiple of 256) in the file's layout, row
// r at w + r * w_row_bytes -> out (n_rows * w_row_bytes bytes) in the layout above.
void interleave_q4_k(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);
void interleave_q6_k(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);

}  // namespace afm::cpu::k_lanes
