// Helpers shared by the data-pipeline tests: scratch directories and compressed inputs.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace afm::data::testing {

// An empty folder private to this process: CTest runs tests in parallel processes, and two
// tests that share a helper must not share its folder.
inline std::filesystem::path fresh_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("afm_data_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_text(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `text` compressed as one gzip (filter "gzip") or Unix compress (filter "compress") stream.
inline std::vector<uint8_t> compress_stream(std::string_view text, const std::string& filter) {
  std::vector<uint8_t> buf(text.size() * 2 + 1024);
  size_t used = 0;
  archive* a = archive_write_new();
  if (filter == "gzip") {
    archive_write_add_filter_gzip(a);
  } else {
    archive_write_add_filter_compress(a);
  }
  archive_write_set_format_raw(a);
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open_memory(a, buf.data(), buf.size(), &used);
  archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  archive_write_header(a, e);
  archive_write_data(a, text.data(), text.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  buf.resize(used);
  return buf;
}

inline void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace afm::data::testing
