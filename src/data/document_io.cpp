#include "data/document_io.h"

#include "data/text_clean.h"

namespace afm::data {
namespace {

void add_if_not_blank(std::string_view doc, std::vector<std::string_view>& out) {
  if (!doc.empty() && doc.back() == '\n') doc.remove_suffix(1);
  if (!doc.empty() && doc.back() == '\r') doc.remove_suffix(1);
  if (!is_blank(doc)) out.push_back(doc);
}

bool is_separator_line(std::string_view line) { return line == "\f" || line == "\f\r"; }

}  // namespace

std::vector<std::string_view> split_documents(std::string_view text) {
  std::vector<std::string_view> docs;
  size_t doc_start = 0, line_start = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    if (is_separator_line(text.substr(line_start, line_end - line_start))) {
      add_if_not_blank(text.substr(doc_start, line_start - doc_start), docs);
      doc_start = line_end + 1;
    }
    line_start = line_end + 1;
  }
  if (doc_start < text.size()) add_if_not_blank(text.substr(doc_start), docs);
  return docs;
}

DocumentWriter::DocumentWriter(std::string path) : path_(path), file_(std::move(path)) {}

bool DocumentWriter::add(std::string_view document) {
  const std::string clean = sanitize_text(document);
  std::string_view text = trim_right(clean);
  if (is_blank(text)) return false;
  file_.write(text);
  file_.write("\n\f\n");
  ++documents_;
  return true;
}

}  // namespace afm::data
