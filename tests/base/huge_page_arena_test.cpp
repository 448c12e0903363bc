#include "base/huge_page_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace afm {
namespace {

TEST(HugePageArena, PiecesAreAlignedZeroedAndDisjoint) {
  HugePageArena arena;
  std::vector<std::pair<uint8_t*, uint8_t*>> pieces;
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{4096}, size_t{3} << 20, size_t{100}}) {
    uint8_t* p = arena.allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    for (size_t i = 0; i < bytes; i += 997) EXPECT_EQ(p[i], 0) << bytes << " " << i;
    for (const auto& [begin, end] : pieces) {
      EXPECT_TRUE(p + bytes <= begin || p >= end) << "pieces overlap";
    }
    std::memset(p, 0x5A, bytes);  // writable end to end
    pieces.emplace_back(p, p + bytes);
  }
  EXPECT_GE(arena.reserved_bytes(), size_t{3} << 20);
}

TEST(HugePageArena, APieceLargerThanAChunkGetsItsOwn) {
  HugePageArena arena;
  uint8_t* small = arena.allocate(1000);
  const size_t big_bytes = size_t{300} << 20;  // more than the 256 MiB chunk
  uint8_t* big = arena.allocate(big_bytes);
  big[0] = 1;
  big[big_bytes - 1] = 2;  // the last byte is mapped
  small[999] = 3;
  EXPECT_EQ(big[0] + big[big_bytes - 1] + small[999], 6);
  EXPECT_GE(arena.reserved_bytes(), big_bytes);
}

}  // namespace
}  // namespace afm
