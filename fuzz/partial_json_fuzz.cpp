// libFuzzer target: any bytes through the partial JSON parser, one shot and in pieces. The
// piece sizes come from a hash of the input; after every piece the incremental snapshot must
// equal the one-shot parse of the same prefix, and the whole text is complete exactly when
// nlohmann accepts it (outside the documented differences: byte order mark, nesting limit;
// and nlohmann reads a NUL byte as the end of the input, so texts with NUL are not compared).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "guided/partial_json.h"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

bool same(const afm::guided::PartialJson& a, const afm::guided::PartialJson& b) {
  return a.value == b.value && a.complete == b.complete && a.valid == b.valid && a.error == b.error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using afm::guided::parse_partial_json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const afm::guided::PartialJson whole = parse_partial_json(text);

  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : text) h = (h ^ c) * 1099511628211ull;
  afm::guided::PartialJsonParser parser;
  size_t pos = 0, next_check = 0;
  while (pos < size) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    const size_t len = std::min<size_t>(size - pos, 1 + (h >> 33) % 17);
    parser.append(text.substr(pos, len));
    pos += len;
    // One-shot comparisons cost O(prefix): about 8 per input keeps the fuzzer fast.
    if (pos >= next_check) {
      require(same(parser.snapshot(), parse_partial_json(text.substr(0, pos))));
      next_check = pos + size / 8;
    }
  }
  require(same(parser.snapshot(), whole));
  if (!whole.valid) require(!whole.complete && !whole.error.empty());

  const bool bom = text.starts_with("\xef\xbb\xbf");
  const bool too_deep = whole.error.find("nesting") != std::string::npos;
  const bool nul = text.find('\0') != std::string_view::npos;
  if (!bom && !too_deep && !nul) {
    const bool accepted = nlohmann::ordered_json::accept(text);
    require(whole.complete == accepted);
    if (accepted) require(whole.value == nlohmann::ordered_json::parse(text));
  }
  return 0;
}
