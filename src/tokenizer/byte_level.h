// GPT-2's byte <-> printable-character mapping used by byte-level BPE vocabularies: every byte
// is represented by one Unicode character, so any byte string is a string of vocabulary chars.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace afm::tokenizer {

// UTF-8 of the character that stands for `byte`.
const std::string& byte_to_unicode(uint8_t byte);
// Appends the byte-level form of `bytes` to `out`.
void bytes_to_byte_level(std::string_view bytes, std::string& out);
// Decodes a byte-level string back to bytes; nullopt if it holds a character that is not one
// of the 256 byte characters.
std::optional<std::string> byte_level_to_bytes(std::string_view text);

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for invalid lead bytes).
inline size_t utf8_sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xe) return 3;
  if ((lead >> 3) == 0x1e) return 4;
  return 1;
}

}  // namespace afm::tokenizer
