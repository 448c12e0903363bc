// libFuzzer target: the GGUF reader must turn any byte string into a File or an afm::Error.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "gguf/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    afm::gguf::File f = afm::gguf::File::parse(std::span<const uint8_t>(data, size), "fuzz");
    // Touch what a loader would touch: every value and every tensor byte range.
    for (const auto& [key, value] : f.metadata()) (void)afm::gguf::to_display_string(value);
    uint64_t sum = 0;
    for (const auto& t : f.tensors()) {
      if (t.n_bytes > 0) sum += t.data[0] + t.data[t.n_bytes - 1];
    }
    (void)sum;
  } catch (const afm::Error&) {
  }
  return 0;
}
