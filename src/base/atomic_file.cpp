#include "base/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"

namespace afm {

namespace {
std::atomic<int> g_tmp_counter{0};

[[noreturn]] void throw_io(const std::string& what, const std::string& path) {
  throw_error(ErrorCode::kIo, what + " '" + path + "': " + std::strerror(errno));
}
}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  tmp_path_ = path_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(g_tmp_counter++);
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) throw_io("cannot create", tmp_path_);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(tmp_path_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  AFM_CHECK(file_ != nullptr);
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) throw_io("cannot write", tmp_path_);
  written_ += n;
}

void AtomicFileWriter::write_zeros(size_t n) {
  static const char kZeros[256] = {};
  while (n > 0) {
    size_t k = n < sizeof(kZeros) ? n : sizeof(kZeros);
    write(kZeros, k);
    n -= k;
  }
}

void AtomicFileWriter::commit() {
  AFM_CHECK(file_ != nullptr && !committed_);
  if (std::fflush(file_) != 0) throw_io("cannot flush", tmp_path_);
  if (fsync(fileno(file_)) != 0) throw_io("cannot sync", tmp_path_);
  int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw_io("cannot close", tmp_path_);
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) throw_io("cannot rename onto", path_);
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  AtomicFileWriter writer(path);
  writer.write(contents);
  writer.commit();
}

}  // namespace afm
