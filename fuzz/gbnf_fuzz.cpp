// libFuzzer target: any bytes as a GBNF grammar compile to a grammar or an afm::Error (never a
// crash, never another exception), and a compiled grammar's matcher runs over the same bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/gbnf_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto grammar = afm::guided::compile_gbnf(text);
    afm::guided::ByteMatcher matcher(grammar);
    for (char c : text.substr(0, 256)) {
      if (!matcher.accept_byte(static_cast<uint8_t>(c))) break;
    }
    (void)matcher.allowed_next_bytes();
    (void)matcher.is_complete();
  } catch (const afm::Error&) {
  }
  return 0;
}
