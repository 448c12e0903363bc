// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace afm {

// Length (1-4) of the well-formed UTF-8 sequence at p (n bytes available, n >= 1), or 0 when
// the bytes there are not one.
size_t utf8_sequence_length(const unsigned char* p, size_t n);

// Whether all of `s` is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

// Appends the code points of `s` to *out; false at the first ill-formed sequence (*out then
// holds the code points before it).
bool decode_utf8(std::string_view s, std::vector<uint32_t>* out);

}  // namespace afm
