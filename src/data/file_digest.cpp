#include "data/file_digest.h"

#include <openssl/evp.h>

#include "base/error.h"
#include "base/mapped_file.h"

namespace afm::data {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    throw_error(ErrorCode::kInternal, "OpenSSL SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

std::string sha256_file(const std::string& path) {
  MappedFile file = MappedFile::open(path);
  return sha256_hex({reinterpret_cast<const char*>(file.data()), file.size()});
}

}  // namespace afm::data
