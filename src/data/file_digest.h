// SHA-256 of bytes or of a file, as lowercase hex (OpenSSL's libcrypto does the hashing).
//
// Contract: sha256_file throws Error(kIo) naming the path when it cannot be read.
#pragma once

#include <string>
#include <string_view>

namespace afm::data {

std::string sha256_hex(std::string_view bytes);
std::string sha256_file(const std::string& path);

}  // namespace afm::data
