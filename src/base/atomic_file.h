// Writes a file so that readers see either the old file or the complete new one, never a part.
//
// Contract: bytes go to a temporary file next to the target ("<path>.tmp.<pid>.<n>");
// commit() flushes, fsyncs and renames it over the target. If commit() is never reached (an
// error, an exception, a crash) the temporary file is removed by the destructor (or left for
// a crash, under a name that cannot be mistaken for the output) and the target is untouched.
// All failures throw Error(kIo) naming the path. Not thread-safe; one writer per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace afm {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  void write_zeros(size_t n);
  uint64_t bytes_written() const { return written_; }
  void commit();

 private:
  std::string path_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// Convenience: atomically replaces `path` with `contents`.
void write_file_atomic(const std::string& path, std::string_view contents);

}  // namespace afm
