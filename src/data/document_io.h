// Document files: what `afm data corpus` and `afm data synth` write and `afm data shards`
// reads (docs/data.md).
//
// Format: UTF-8 text. Every document is written as its text followed by "\n\f\n", so
// documents are separated by a line holding only a form feed. A reader splits at lines equal
// to "\f" (a trailing "\r" is tolerated); text after the last separator is one more document,
// so a plain text file without separators is a single document. Blank documents are skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/atomic_file.h"

namespace afm::data {

// The documents of `text`, in order, without the newline before each separator. The views
// point into `text`.
std::vector<std::string_view> split_documents(std::string_view text);

// Writes one document file atomically: nothing appears at `path` until commit().
// Not thread-safe. Errors: Error(kIo) naming the path (from AtomicFileWriter).
class DocumentWriter {
 public:
  explicit DocumentWriter(std::string path);

  // Appends sanitize_text(document) (which turns form feeds into newlines, so no document can
  // hold a separator line) with trailing whitespace removed. Returns false, writing nothing,
  // when the document is blank.
  bool add(std::string_view document);

  uint64_t documents() const { return documents_; }
  uint64_t bytes() const { return file_.bytes_written(); }
  const std::string& path() const { return path_; }
  void commit() { file_.commit(); }

 private:
  std::string path_;
  AtomicFileWriter file_;
  uint64_t documents_ = 0;
};

}  // namespace afm::data
