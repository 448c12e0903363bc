// The machine's physical memory, for sizing defaults (how many KV caches a server keeps).
#pragma once

#include <cstdint>

namespace afm {

// Bytes of physical memory (sysconf); 8 GiB when the system does not say.
uint64_t physical_memory_bytes();

}  // namespace afm
