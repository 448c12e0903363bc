#include "base/huge_page_arena.h"

#include <sys/mman.h>

#include <new>

namespace afm {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Address space reserved at a time: a small model's copies fit one chunk, a large one's few.
constexpr size_t kChunkBytes = size_t{256} << 20;
constexpr size_t kAlign = 64;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// `size` bytes (a multiple of kHugePage) of anonymous memory starting on a 2 MiB boundary:
// over-map by one huge page and unmap the unaligned head and tail.
uint8_t* map_aligned(size_t size) {
  const size_t span = size + kHugePage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto raw = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = round_up(raw, kHugePage);
  if (aligned > raw) munmap(p, aligned - raw);
  const uintptr_t tail = aligned + size, end = raw + span;
  if (end > tail) munmap(reinterpret_cast<void*>(tail), end - tail);
  // Advice only: without THP the memory is ordinary pages.
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);
  return reinterpret_cast<uint8_t*>(aligned);
}

}  // namespace

HugePageArena::~HugePageArena() {
  for (const Chunk& c : chunks_) munmap(c.base, c.size);
}

uint8_t* HugePageArena::allocate(size_t bytes) {
  const size_t need = round_up(bytes == 0 ? 1 : bytes, kAlign);
  if (chunks_.empty() || chunks_.back().size - chunks_.back().used < need) {
    const size_t size = need > kChunkBytes ? round_up(need, kHugePage) : kChunkBytes;
    chunks_.push_back({map_aligned(size), size, 0});
  }
  Chunk& c = chunks_.back();
  uint8_t* out = c.base + c.used;
  c.used += need;
  return out;
}

size_t HugePageArena::reserved_bytes() const {
  size_t total = 0;
  for (const Chunk& c : chunks_) total += c.size;
  return total;
}

}  // namespace afm
