// WordNet glosses from wordnet-base: /usr/share/wordnet/data.{noun,verb,adj,adv} -> lines
// "abstraction, abstract entity (noun): a general concept formed by ...".
#include <cctype>
#include <cstdlib>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "data/package_files.h"
#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

struct Synset {
  std::string lexfile;  // lexicographer file number: synsets of one topic share it
  std::string line;     // "words (pos): gloss"
};

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string_view part_of_speech(std::string_view ss_type) {
  if (ss_type == "n") return "noun";
  if (ss_type == "v") return "verb";
  if (ss_type == "a" || ss_type == "s") return "adjective";
  if (ss_type == "r") return "adverb";
  return {};
}

// "ice_cream(a)" -> "ice cream": underscores are spaces; adjectives may carry a syntactic
// marker "(a)", "(p)" or "(ip)".
std::string display_word(std::string_view w) {
  const size_t paren = w.find('(');
  if (paren != std::string_view::npos && w.back() == ')') w = w.substr(0, paren);
  std::string out(w);
  for (char& c : out) {
    if (c == '_') c = ' ';
  }
  return out;
}

// One data line -> synset; false for the license header lines (they start with spaces).
bool parse_synset(std::string_view line, const std::string& where, Synset& out) {
  if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) return false;
  const size_t bar = line.find(" | ");
  const std::vector<std::string_view> f = split_spaces(line.substr(0, bar));
  auto fail = [&](const char* what) { throw_error(ErrorCode::kFormat, where + ": " + what); };
  if (bar == std::string_view::npos) fail("no \" | \" before the gloss");
  if (f.size() < 4) fail("fewer than 4 fields before the gloss");
  const std::string_view pos = part_of_speech(f[2]);
  if (pos.empty()) fail("unknown synset type");
  const std::string count_text(f[3]);
  char* end = nullptr;
  const unsigned long words = std::strtoul(count_text.c_str(), &end, 16);
  if (end == count_text.c_str() || *end != '\0' || words == 0 || 4 + 2 * words > f.size()) {
    fail("word count does not match the fields");
  }
  std::string text;
  for (unsigned long i = 0; i < words; ++i) {
    if (i > 0) text += ", ";
    text += display_word(f[4 + 2 * i]);
  }
  text.append(" (").append(pos).append("): ").append(trim(line.substr(bar + 3)));
  out.lexfile = std::string(f[1]);
  out.line = std::move(text);
  return true;
}

}  // namespace

void wordnet_documents(std::string_view data_file, const std::string& name,
                       const DocumentSink& sink) {
  std::string doc, lexfile;
  int in_doc = 0;
  size_t line_number = 0;
  for (std::string_view line : split_lines(data_file)) {
    ++line_number;
    Synset s;
    if (!parse_synset(trim_right(line), name + " line " + std::to_string(line_number), s)) {
      continue;
    }
    if (in_doc == kWordnetSynsetsPerDocument || (in_doc > 0 && s.lexfile != lexfile)) {
      sink(doc);
      doc.clear();
      in_doc = 0;
    }
    lexfile = s.lexfile;
    doc.append(s.line).push_back('\n');
    ++in_doc;
  }
  if (in_doc > 0) sink(doc);
}

void read_wordnet(const std::filesystem::path& root, const DocumentSink& sink) {
  for (const char* path : kWordnetData) require_package_file(root, path, kWordnetPackage);
  for (const char* path : kWordnetData) {
    const std::string file_path = package_path(root, path).string();
    MappedFile file = MappedFile::open(file_path);
    wordnet_documents({reinterpret_cast<const char*>(file.data()), file.size()}, file_path, sink);
  }
}

}  // namespace afm::data::sources
