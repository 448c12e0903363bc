// The Jargon File from jargon-text: /usr/share/doc/jargon-text/jargon.txt.gz -> one document
// per lexicon entry ("   :cruft: /kruhft/" starts one) and per chapter or appendix section
// (a heading at column 0 starts one).
#include "data/decompress.h"
#include "data/package_files.h"
#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

constexpr size_t kJargonIndent = 3;

bool is_heading(std::string_view line) { return !line.empty() && line[0] != ' '; }

// "   :term: rest" -> true; entries are indented by three spaces and open with a colon.
bool is_entry_line(std::string_view line) {
  return line.size() > 5 && line.substr(0, 4) == "   :" && line.find(':', 5) != line.npos;
}

class Section {
 public:
  void start(std::string_view first_line, bool entry) {
    entry_ = entry;
    text_.assign(first_line).push_back('\n');
  }
  void add(std::string_view line) { text_.append(line).push_back('\n'); }
  bool empty() const { return text_.empty(); }

  // Entries: the head line, then each paragraph on one line; sections keep their lines.
  void emit(const DocumentSink& sink) {
    if (text_.empty()) return;
    std::string doc;
    if (entry_) {
      const size_t head_end = text_.find('\n');
      std::string head(trim(std::string_view(text_).substr(0, head_end)).substr(1));
      replace_all(head, " //", "");
      doc = head + "\n" + reflow_paragraphs(std::string_view(text_).substr(head_end + 1));
    } else {
      doc = squeeze_blank_lines(dedent(text_, kJargonIndent));
    }
    doc = strip_reference_braces(doc);
    if (!is_blank(doc)) sink(doc);
    text_.clear();
  }

 private:
  bool entry_ = false;
  std::string text_;
};

}  // namespace

void jargon_documents(std::string_view text, const DocumentSink& sink) {
  const std::string clean = sanitize_text(text);
  const std::vector<std::string_view> lines = split_lines(clean);
  // The title page and table of contents come before the first chapter heading.
  size_t i = 0;
  while (i < lines.size() && lines[i].substr(0, 8) != "Chapter ") ++i;
  Section section;
  for (; i < lines.size(); ++i) {
    const std::string_view line = trim_right(lines[i]);
    if (has_box_drawing(line)) continue;  // rendered tables
    const bool entry = is_entry_line(line);
    if (entry || is_heading(line)) {
      section.emit(sink);
      section.start(line, entry);
    } else if (!section.empty()) {
      section.add(line);
    }
  }
  section.emit(sink);
}

void read_jargon(const std::filesystem::path& root, const DocumentSink& sink) {
  require_package_file(root, kJargonText, kJargonPackage);
  jargon_documents(decompress_file(package_path(root, kJargonText).string()), sink);
}

}  // namespace afm::data::sources
