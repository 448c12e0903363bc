// Memory for large, long-lived, read-mostly buffers (a model's weight copies) on transparent
// huge pages where the kernel allows them.
//
// Why: decode streams every weight once per token. On 4 KiB pages a 300 MB model crosses
// ~75,000 pages per token, each a TLB miss and a stop for the hardware prefetcher, which does not
// follow a stream across a page boundary; on 2 MiB pages it crosses ~150. Measured on a
// Qwen2-0.5B-shaped q4_0 file, one AMD EPYC Zen 4 core: 64-67 -> 70-72 tokens/s (docs/engine.md).
//
// The arena reserves address space in large chunks aligned to 2 MiB, asks for huge pages with
// madvise(MADV_HUGEPAGE) (the system's "madvise" THP mode honours it; "never" leaves 4 KiB pages
// and everything still works), and hands out 64-byte-aligned pieces by bumping a pointer.
// Untouched address space costs no memory, so a chunk's unused tail is free. Everything is
// returned when the arena is destroyed; pieces are not freed one by one.
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace afm {

class HugePageArena {
 public:
  HugePageArena() = default;
  ~HugePageArena();
  HugePageArena(const HugePageArena&) = delete;
  HugePageArena& operator=(const HugePageArena&) = delete;

  // `bytes` of zero-filled memory aligned to 64 bytes; throws std::bad_alloc when the system has
  // no address space left.
  uint8_t* allocate(size_t bytes);

  size_t reserved_bytes() const;  // address space held (not all of it resident)

 private:
  struct Chunk {
    uint8_t* base;
    size_t size;
    size_t used;
  };
  std::vector<Chunk> chunks_;
};

}  // namespace afm
