// libFuzzer target: tokenizer.json loading turns any bytes into a Tokenizer or an afm::Error,
// and a loaded tokenizer encodes and decodes without crashing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    afm::tokenizer::Tokenizer t = afm::tokenizer::Tokenizer::from_json(
        std::string(reinterpret_cast<const char*>(data), size));
    std::vector<int32_t> ids = t.encode("ab <s> héllo 🙂 12345");
    (void)t.decode(ids);
  } catch (const afm::Error&) {
  }
  return 0;
}
