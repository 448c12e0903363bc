// libFuzzer target: any bytes as an AFMSFT01 record file (data/sft_records.h) give the records
// or an afm::Error; parsed records satisfy the format's invariants.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "base/error.h"
#include "data/sft_records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const afm::data::SftRecordFile f = afm::data::parse_sft_records({data, size}, "fuzz.sft");
    for (const afm::data::SftRecord& r : f.records) {
      if (r.tokens.size() != r.trained.size() || r.tokens.size() < 2) std::abort();
      for (int32_t id : r.tokens) {
        if (id < 0 || static_cast<uint32_t>(id) >= f.vocab_size) std::abort();
      }
    }
  } catch (const afm::Error&) {
  }
  return 0;
}
