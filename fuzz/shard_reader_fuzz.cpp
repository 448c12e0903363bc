// libFuzzer target: any bytes as a token shard give a ShardView or an afm::Error, and a view
// that parses reads every token without going out of bounds; the same bytes as meta.json
// give a ShardMeta or an afm::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "data/shard_meta.h"
#include "data/shard_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const afm::data::ShardView view =
        afm::data::ShardView::parse({data, size}, "fuzz.bin", /*verify_tokens=*/true);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < view.n_tokens(); ++i) sum += view.token(i);
    (void)sum;
  } catch (const afm::Error&) {
  }
  try {
    (void)afm::data::parse_shard_meta(std::string(reinterpret_cast<const char*>(data), size),
                                      "meta.json");
  } catch (const afm::Error&) {
  }
  return 0;
}
