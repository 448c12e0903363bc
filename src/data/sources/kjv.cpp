// King James Bible from bible-kjv-text: /usr/lib/bible.data -> one document per chapter.
#include <array>
#include <cctype>
#include <utility>

#include "base/error.h"
#include "base/mapped_file.h"
#include "data/decompress.h"
#include "data/package_files.h"
#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

// The container: "EC02" magic, a big-endian u32 chunk count at kCountOffset, then count + 1
// big-endian u32 chunk offsets, then the compress(1) stream (magic 1f 9d).
constexpr size_t kCountOffset = 0x58;
constexpr uint32_t kMaxChunks = 1u << 20;

// The abbreviations the text uses, in canon order, and the book names we print.
constexpr std::array<std::pair<std::string_view, std::string_view>, 66> kBooks = {{
    {"Ge", "Genesis"},          {"Exo", "Exodus"},
    {"Lev", "Leviticus"},       {"Num", "Numbers"},
    {"Deu", "Deuteronomy"},     {"Josh", "Joshua"},
    {"Jdgs", "Judges"},         {"Ruth", "Ruth"},
    {"1Sm", "1 Samuel"},        {"2Sm", "2 Samuel"},
    {"1Ki", "1 Kings"},         {"2Ki", "2 Kings"},
    {"1Chr", "1 Chronicles"},   {"2Chr", "2 Chronicles"},
    {"Ezra", "Ezra"},           {"Neh", "Nehemiah"},
    {"Est", "Esther"},          {"Job", "Job"},
    {"Psa", "Psalms"},          {"Prv", "Proverbs"},
    {"Eccl", "Ecclesiastes"},   {"SSol", "Song of Solomon"},
    {"Isa", "Isaiah"},          {"Jer", "Jeremiah"},
    {"Lam", "Lamentations"},    {"Eze", "Ezekiel"},
    {"Dan", "Daniel"},          {"Hos", "Hosea"},
    {"Joel", "Joel"},           {"Amos", "Amos"},
    {"Obad", "Obadiah"},        {"Jonah", "Jonah"},
    {"Mic", "Micah"},           {"Nahum", "Nahum"},
    {"Hab", "Habakkuk"},        {"Zep", "Zephaniah"},
    {"Hag", "Haggai"},          {"Zec", "Zechariah"},
    {"Mal", "Malachi"},         {"Mat", "Matthew"},
    {"Mark", "Mark"},           {"Luke", "Luke"},
    {"John", "John"},           {"Acts", "Acts"},
    {"Rom", "Romans"},          {"1Cor", "1 Corinthians"},
    {"2Cor", "2 Corinthians"},  {"Gal", "Galatians"},
    {"Eph", "Ephesians"},       {"Phi", "Philippians"},
    {"Col", "Colossians"},      {"1Th", "1 Thessalonians"},
    {"2Th", "2 Thessalonians"}, {"1Tim", "1 Timothy"},
    {"2Tim", "2 Timothy"},      {"Titus", "Titus"},
    {"Phmn", "Philemon"},       {"Heb", "Hebrews"},
    {"Jas", "James"},           {"1Pet", "1 Peter"},
    {"2Pet", "2 Peter"},        {"1Jn", "1 John"},
    {"2Jn", "2 John"},          {"3Jn", "3 John"},
    {"Jude", "Jude"},           {"Rev", "Revelation"},
}};

std::string_view book_name(std::string_view abbreviation) {
  for (const auto& [abbr, name] : kBooks) {
    if (abbr == abbreviation) return name;
  }
  return abbreviation;
}

uint32_t read_be32(std::span<const uint8_t> d, size_t at) {
  return (uint32_t{d[at]} << 24) | (uint32_t{d[at + 1]} << 16) | (uint32_t{d[at + 2]} << 8) |
         uint32_t{d[at + 3]};
}

struct Verse {
  std::string_view book, chapter, number, text;
};

// "1Sm3:10 And the LORD came ..." -> parts; false when the line is not a verse.
bool parse_verse(std::string_view line, Verse& v) {
  size_t i = 0;
  if (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  while (i < line.size() && std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
  if (i == 0 || (i == 1 && std::isdigit(static_cast<unsigned char>(line[0])))) return false;
  v.book = line.substr(0, i);
  const size_t chapter_start = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == chapter_start || i >= line.size() || line[i] != ':') return false;
  v.chapter = line.substr(chapter_start, i - chapter_start);
  const size_t number_start = ++i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == number_start || i >= line.size() || line[i] != ' ') return false;
  v.number = line.substr(number_start, i - number_start);
  v.text = trim(line.substr(i + 1));
  return true;
}

}  // namespace

std::string kjv_verses_from_container(std::span<const uint8_t> data, const std::string& name) {
  if (data.size() < kCountOffset + 4 || data[0] != 'E' || data[1] != 'C' || data[2] != '0' ||
      data[3] != '2') {
    throw_error(ErrorCode::kFormat, name + ": not a bible-kjv container (no EC02 header)");
  }
  const uint32_t chunks = read_be32(data, kCountOffset);
  const uint64_t stream = kCountOffset + 4 + (uint64_t{chunks} + 1) * 4;
  if (chunks == 0 || chunks > kMaxChunks || stream + 2 > data.size() || data[stream] != 0x1f ||
      data[stream + 1] != 0x9d) {
    throw_error(ErrorCode::kFormat,
                name + ": no compress stream after the chunk table (chunk count " +
                    std::to_string(chunks) + " at offset " + std::to_string(kCountOffset) + ")");
  }
  return decompress(data.subspan(static_cast<size_t>(stream)), name);
}

void kjv_documents(std::string_view verses, const DocumentSink& sink) {
  std::string doc, book, chapter;
  auto flush = [&] {
    if (!doc.empty()) sink(doc);
    doc.clear();
  };
  for (std::string_view line : split_lines(verses)) {
    Verse v;
    if (!parse_verse(trim(line), v)) continue;
    if (v.book != book || v.chapter != chapter) {
      flush();
      book = v.book, chapter = v.chapter;
      doc.append(book_name(v.book)).append(" ").append(v.chapter).append("\n");
    }
    doc.append(v.number).append(" ").append(v.text).append("\n");
  }
  flush();
}

void read_kjv(const std::filesystem::path& root, const DocumentSink& sink) {
  require_package_file(root, kKjvData, kKjvPackage);
  const std::string path = package_path(root, kKjvData).string();
  MappedFile file = MappedFile::open(path);
  kjv_documents(kjv_verses_from_container(file.bytes(), path), sink);
}

}  // namespace afm::data::sources
