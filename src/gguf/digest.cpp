#include "gguf/digest.h"

#include <openssl/evp.h>

#include <memory>

#include "base/error.h"

namespace afm::gguf {

std::string data_section_sha256(const File& file) {
  std::span<const uint8_t> bytes = file.data_section();
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  // Chunks of 64 MiB: EVP takes size_t, but smaller updates keep page faults streaming.
  constexpr size_t kChunk = size_t{64} << 20;
  for (size_t i = 0; ok && i < bytes.size(); i += kChunk) {
    ok = EVP_DigestUpdate(ctx.get(), bytes.data() + i, std::min(kChunk, bytes.size() - i)) == 1;
  }
  ok = ok && EVP_DigestFinal_ex(ctx.get(), digest, &len) == 1;
  if (!ok) throw_error(ErrorCode::kInternal, "OpenSSL SHA-256 failed for " + file.path());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace afm::gguf
