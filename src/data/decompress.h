// Decompresses one gzip stream (including dictzip, the dictd variant) or one Unix compress
// (.Z, LZW) stream held in memory, with libarchive.
//
// Contract: returns the decompressed bytes; throws Error(kFormat) naming `name` when the bytes
// are neither format, are corrupt or truncated, or would decompress to more than
// `max_output` bytes. Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace afm::data {

std::string decompress(std::span<const uint8_t> bytes, const std::string& name,
                       size_t max_output = size_t{1} << 30);

// decompress() of a whole file; Error(kIo) when it cannot be read.
std::string decompress_file(const std::string& path, size_t max_output = size_t{1} << 30);

}  // namespace afm::data
