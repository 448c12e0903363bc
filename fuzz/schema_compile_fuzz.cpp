// libFuzzer target: any bytes as a JSON Schema compile to a grammar or an afm::Error, and a
// compiled grammar's matcher consumes the same bytes without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"
#include "guided/regex_compiler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto grammar = afm::guided::compile_json_schema_text(text);
    afm::guided::ByteMatcher matcher(grammar);
    for (char c : text) {
      if (!matcher.accept_byte(static_cast<uint8_t>(c))) break;
    }
    (void)matcher.allowed_next_bytes();
  } catch (const afm::Error&) {
  }
  try {
    (void)afm::guided::compile_regex_grammar(text, true);
  } catch (const afm::Error&) {
  }
  return 0;
}
