// Read-only memory map of a whole file.
//
// Contract: open() throws Error(kIo) naming the path when the file cannot be opened or mapped.
// The mapping lives as long as the MappedFile (move-only); views into it must not outlive it.
// An empty file maps to data() == nullptr, size() == 0. Safe to read from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace afm {

class MappedFile {
 public:
  MappedFile() = default;
  static MappedFile open(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Gives back the pages wholly inside `bytes` (a range of this mapping) that this process has
  // read: a later read faults them in again from the file. For data the process has copied
  // elsewhere, so it is not held twice. Ranges outside the mapping are ignored.
  void drop_resident(std::span<const uint8_t> bytes) const;

 private:
  void release();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// Reads a whole (small) file into a string; throws Error(kIo) naming the path.
std::string read_file_to_string(const std::string& path);

}  // namespace afm
