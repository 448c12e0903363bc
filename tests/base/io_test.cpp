#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/byte_reader.h"
#include "base/error.h"
#include "base/mapped_file.h"

namespace afm {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const char* name) {
  fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFile, CommitReplacesAndAbandonLeavesNothing) {
  fs::path dir = fresh_dir("afm_atomic_test");
  std::string path = (dir / "out.bin").string();
  write_file_atomic(path, "one");
  EXPECT_EQ(read_file_to_string(path), "one");
  {
    AtomicFileWriter w(path);
    w.write("partial");
  }  // destroyed without commit
  EXPECT_EQ(read_file_to_string(path), "one");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  write_file_atomic(path, "two");
  EXPECT_EQ(read_file_to_string(path), "two");
  EXPECT_THROW(write_file_atomic((dir / "no/such/dir/x").string(), "x"), Error);
  fs::remove_all(dir);
}

TEST(MappedFile, MapsBytesAndReportsErrors) {
  fs::path dir = fresh_dir("afm_mmap_test");
  std::string path = (dir / "f").string();
  write_file_atomic(path, "abc");
  MappedFile m = MappedFile::open(path);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.data()[1], 'b');
  MappedFile moved = std::move(m);
  EXPECT_EQ(moved.size(), 3u);
  EXPECT_EQ(m.size(), 0u);
  write_file_atomic(path, "");
  EXPECT_EQ(MappedFile::open(path).size(), 0u);
  try {
    MappedFile::open((dir / "missing").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
  }
  EXPECT_THROW(MappedFile::open(dir.string()), Error);  // a directory
  fs::remove_all(dir);
}

TEST(ByteReader, ChecksBoundsAndNamesOffsets) {
  const uint8_t bytes[] = {1, 0, 0, 0, 2};
  ByteReader r(bytes, "ctx");
  EXPECT_EQ(r.read<uint32_t>("a"), 1u);
  try {
    r.read<uint32_t>("b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat);
    EXPECT_EQ(std::string(e.what()), "ctx: truncated: b needs 4 bytes, 1 left at byte offset 4");
  }
  EXPECT_THROW(r.seek(6, "x"), Error);
  EXPECT_EQ(r.read_bytes(1, "c"), "\x02");
}

}  // namespace
}  // namespace afm
