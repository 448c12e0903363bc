// libFuzzer target: the safetensors parser turns any bytes into tensors or an afm::Error.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "hf/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    afm::hf::SafetensorsFile f =
        afm::hf::SafetensorsFile::parse(std::span<const uint8_t>(data, size), "fuzz");
    uint64_t sum = 0;
    for (const auto& t : f.tensors()) {
      if (!t.data.empty()) sum += t.data.front() + t.data.back();
    }
    (void)sum;
  } catch (const afm::Error&) {
  }
  return 0;
}
