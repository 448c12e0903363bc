#include "tokenizer/byte_level.h"

#include <array>
#include <unordered_map>

namespace afm::tokenizer {

namespace {

std::string encode_utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    s.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
  return s;
}

struct Tables {
  std::array<std::string, 256> to_unicode;
  std::unordered_map<std::string, uint8_t> to_byte;
  Tables() {
    // Printable Latin-1 bytes stand for themselves; the rest map to U+0100 upwards, in order.
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
      to_unicode[b] = encode_utf8(printable ? b : next++);
      to_byte[to_unicode[b]] = static_cast<uint8_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return tables().to_unicode[byte]; }

void bytes_to_byte_level(std::string_view bytes, std::string& out) {
  const Tables& t = tables();
  for (char c : bytes) out += t.to_unicode[static_cast<uint8_t>(c)];
}

std::optional<std::string> byte_level_to_bytes(std::string_view text) {
  const Tables& t = tables();
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_sequence_length(static_cast<uint8_t>(text[i]));
    auto it = t.to_byte.find(std::string(text.substr(i, n)));
    if (it == t.to_byte.end()) return std::nullopt;
    out.push_back(static_cast<char>(it->second));
    i += n;
  }
  return out;
}

}  // namespace afm::tokenizer
