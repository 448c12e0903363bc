// GCIDE from dict-gcide: /usr/share/dictd/gcide.dict.dz + gcide.index -> one document per
// dictionary entry (plain text, see gcide_markup.cpp).
#include <algorithm>

#include "base/error.h"
#include "base/mapped_file.h"
#include "data/decompress.h"
#include "data/package_files.h"
#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

// dictd writes offsets and lengths as base-64 numbers, most significant digit first.
bool decode_b64_number(std::string_view s, uint64_t& value) {
  static constexpr std::string_view kDigits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (s.empty() || s.size() > 10) return false;  // 60 bits at most: no overflow
  value = 0;
  for (char c : s) {
    const size_t digit = kDigits.find(c);
    if (digit == std::string_view::npos) return false;
    value = value * 64 + digit;
  }
  return true;
}

bool is_database_info(std::string_view headword) {
  return headword.rfind("00-", 0) == 0 || headword.rfind("00database", 0) == 0;
}

}  // namespace

std::vector<DictEntryRange> parse_dict_index(std::string_view index, uint64_t text_size,
                                             const std::string& name) {
  std::vector<DictEntryRange> ranges;
  size_t line_number = 0;
  for (std::string_view line : split_lines(index)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == std::string_view::npos ? tab1 : line.find('\t', tab1 + 1);
    auto where = [&] { return name + " line " + std::to_string(line_number) + ": "; };
    if (tab2 == std::string_view::npos) {
      throw_error(ErrorCode::kFormat, where() + "expected headword, offset and length");
    }
    const std::string_view headword = line.substr(0, tab1);
    const std::string_view offset_text = line.substr(tab1 + 1, tab2 - tab1 - 1);
    std::string_view length_text = line.substr(tab2 + 1);
    length_text = length_text.substr(0, length_text.find('\t'));  // dictd may add a 4th field
    DictEntryRange r;
    if (!decode_b64_number(offset_text, r.offset) || !decode_b64_number(length_text, r.length)) {
      throw_error(ErrorCode::kFormat, where() + "offset or length is not a base-64 number");
    }
    if (r.offset > text_size || r.length > text_size - r.offset) {
      throw_error(ErrorCode::kFormat, where() + "entry range [" + std::to_string(r.offset) + ", +" +
                                          std::to_string(r.length) +
                                          ") is past the end of the text (" +
                                          std::to_string(text_size) + " bytes)");
    }
    if (!is_database_info(headword)) ranges.push_back(r);
  }
  std::sort(ranges.begin(), ranges.end(), [](const DictEntryRange& a, const DictEntryRange& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.length < b.length;
  });
  auto same = [](const DictEntryRange& a, const DictEntryRange& b) {
    return a.offset == b.offset && a.length == b.length;
  };
  ranges.erase(std::unique(ranges.begin(), ranges.end(), same), ranges.end());
  return ranges;
}

void gcide_documents(std::string_view text, std::string_view index, const std::string& name,
                     const DocumentSink& sink) {
  for (const DictEntryRange& r : parse_dict_index(index, text.size(), name)) {
    std::string entry = gcide_entry_to_text(text.substr(r.offset, r.length));
    if (!is_blank(entry)) sink(entry);
  }
}

void read_gcide(const std::filesystem::path& root, const DocumentSink& sink) {
  require_package_file(root, kGcideDict, kGcidePackage);
  require_package_file(root, kGcideIndex, kGcidePackage);
  const std::string index_path = package_path(root, kGcideIndex).string();
  const std::string text = decompress_file(package_path(root, kGcideDict).string());
  MappedFile index = MappedFile::open(index_path);
  const std::string_view index_text(reinterpret_cast<const char*>(index.data()), index.size());
  gcide_documents(text, index_text, index_path, sink);
}

}  // namespace afm::data::sources
