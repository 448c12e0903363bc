// Debian Reference from debian-reference-en: its plain-text rendering
// /usr/share/debian-reference/debian-reference.en.txt.gz -> one document per preface,
// chapter and appendix.
#include "data/decompress.h"
#include "data/package_files.h"
#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

constexpr size_t kBodyIndent = 4;  // the renderer indents body text by four spaces

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Column-0 "Chapter 3. ..." or "Appendix A. ...": where a document starts.
bool is_part_heading(std::string_view line) {
  return starts_with(line, "Chapter ") || starts_with(line, "Appendix ");
}

// Rendered tables ("+----+", "|cell|") do not read as text.
bool is_table_line(std::string_view line) {
  std::string_view t = trim(line);
  return starts_with(t, "|") || starts_with(t, "+-") || has_box_drawing(t);
}

std::string finish_document(const std::string& raw) {
  return squeeze_blank_lines(dedent(raw, kBodyIndent));
}

}  // namespace

void debian_reference_documents(std::string_view text, const DocumentSink& sink) {
  const std::string clean = sanitize_text(text);  // the rendering uses no-break spaces
  const std::vector<std::string_view> lines = split_lines(clean);
  // The title page, table of contents and list of tables come first; the body starts at the
  // last "Preface" heading (the contents list it too), else at the first chapter.
  size_t start = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (trim_right(lines[i]) == "Preface") start = i;
  }
  if (start == lines.size()) {
    for (start = 0; start < lines.size() && !is_part_heading(lines[start]);) ++start;
  }
  std::string doc;
  for (size_t i = start; i < lines.size(); ++i) {
    if (is_part_heading(lines[i]) && !doc.empty()) {
      sink(finish_document(doc));
      doc.clear();
    }
    if (is_table_line(lines[i])) continue;
    doc.append(lines[i]).push_back('\n');
  }
  if (!is_blank(doc)) sink(finish_document(doc));
}

void read_debian_reference(const std::filesystem::path& root, const DocumentSink& sink) {
  require_package_file(root, kDebianReferenceText, kDebianReferencePackage);
  const std::string path = package_path(root, kDebianReferenceText).string();
  debian_reference_documents(decompress_file(path), sink);
}

}  // namespace afm::data::sources
