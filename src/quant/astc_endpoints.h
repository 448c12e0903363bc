// The colour endpoint modes of ASTC (all 16, channel R only) and the HDR profile's f16
// conversions, written from the ASTC specification, for astc6x6.cpp.
#pragma once

#include <cstdint>

namespace afm::quant::astc::detail {

// A block's two endpoints for channel R.
struct EndpointsR {
  int32_t e0 = 0, e1 = 0;  // 16-bit: LNS when hdr, UNORM16 otherwise
  bool hdr = false;
};

// Endpoint mode `cem` (0..15) from its 2 (cem / 4 + 1) colour values, unquantised to 0..255.
EndpointsR endpoints_r(int cem, const uint32_t* v);

// UNORM16 to f16 by truncation, as the specification's LDR-in-HDR path does.
uint16_t unorm16_to_f16(uint32_t p);

// One texel's f16 from its weight (0..64): the endpoints interpolated, then converted.
uint16_t texel_f16(const EndpointsR& e, int w);

}  // namespace afm::quant::astc::detail
