#include "data/decompress.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "base/error.h"
#include "base/mapped_file.h"

namespace afm::data {
namespace {

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchiveHandle = std::unique_ptr<archive, ArchiveFree>;

[[noreturn]] void fail(archive* a, const std::string& name, const std::string& what) {
  const char* detail = archive_error_string(a);
  throw_error(ErrorCode::kFormat, name + ": " + what + (detail ? std::string(": ") + detail : ""));
}

}  // namespace

std::string decompress(std::span<const uint8_t> bytes, const std::string& name, size_t max_output) {
  if (bytes.empty()) throw_error(ErrorCode::kFormat, name + ": empty input, expected gzip or .Z");
  ArchiveHandle a(archive_read_new());
  if (!a) throw_error(ErrorCode::kInternal, "libarchive: out of memory");
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_compress(a.get());
  archive_read_support_format_raw(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    fail(a.get(), name, "not a gzip or .Z stream");
  }
  archive_entry* entry = nullptr;
  if (archive_read_next_header(a.get(), &entry) != ARCHIVE_OK) {
    fail(a.get(), name, "not a gzip or .Z stream");
  }
  if (archive_filter_code(a.get(), 0) == ARCHIVE_FILTER_NONE) {
    throw_error(ErrorCode::kFormat, name + ": not a gzip or .Z stream (no compression found)");
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const la_ssize_t n = archive_read_data(a.get(), buf, sizeof(buf));
    if (n < 0) fail(a.get(), name, "corrupt compressed data");
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_output) {
      throw_error(ErrorCode::kFormat,
                  name + ": decompresses to more than " + std::to_string(max_output) + " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string decompress_file(const std::string& path, size_t max_output) {
  MappedFile file = MappedFile::open(path);
  return decompress(file.bytes(), path, max_output);
}

}  // namespace afm::data
