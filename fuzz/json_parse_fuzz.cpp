// libFuzzer target, differential: parse_ordered_json (linear-time SAX builder for untrusted
// JSON) against nlohmann's own parser. Same verdict on every input; on success the same value
// and member order; the depth limit never builds more than it allows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const afm::ParsedJson mine = afm::parse_ordered_json(text, 64);
  const nlohmann::ordered_json theirs =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (mine.status == afm::JsonParseStatus::kTooDeep) return 0;  // nlohmann has no limit
  if (mine.ok() == theirs.is_discarded()) std::abort();         // verdicts differ
  const auto dump = [](const nlohmann::ordered_json& v) {
    return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  };
  if (mine.ok() && dump(mine.value) != dump(theirs)) std::abort();
  return 0;
}
