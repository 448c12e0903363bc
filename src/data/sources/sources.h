// Readers that turn the text of Debian data packages into plain-English documents, one
// concern per file (kjv.cpp, gcide.cpp, wordnet.cpp, debian_reference.cpp, jargon.cpp,
// fortunes.cpp). Each has a pure function over the text (tested on small inputs) and a
// read_* function that finds the package's files under a root directory.
//
// Contract: documents are handed to the sink in a fixed order (the same input gives the same
// documents); the parse functions throw Error(kFormat) naming the file and line or offset
// when the text does not have the layout they expect; read_* functions throw Error(kNotFound)
// naming the package when a file is missing. Documents may still contain control characters
// or invalid UTF-8: DocumentWriter sanitises what it writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace afm::data {

using DocumentSink = std::function<void(std::string_view document)>;

namespace sources {

// The Debian packages the readers use and the files they need from each (absolute paths
// inside the package; read_* functions look for them under their root argument).
inline constexpr const char* kKjvPackage = "bible-kjv-text";
inline constexpr const char* kKjvData = "/usr/lib/bible.data";
inline constexpr const char* kGcidePackage = "dict-gcide";
inline constexpr const char* kGcideDict = "/usr/share/dictd/gcide.dict.dz";
inline constexpr const char* kGcideIndex = "/usr/share/dictd/gcide.index";
inline constexpr const char* kWordnetPackage = "wordnet-base";
inline constexpr const char* kWordnetData[] = {
    "/usr/share/wordnet/data.noun", "/usr/share/wordnet/data.verb", "/usr/share/wordnet/data.adj",
    "/usr/share/wordnet/data.adv"};
inline constexpr const char* kDebianReferencePackage = "debian-reference-en";
inline constexpr const char* kDebianReferenceText =
    "/usr/share/debian-reference/debian-reference.en.txt.gz";
inline constexpr const char* kJargonPackage = "jargon-text";
inline constexpr const char* kJargonText = "/usr/share/doc/jargon-text/jargon.txt.gz";
inline constexpr const char* kFortunesPackage = "fortunes";
inline constexpr const char* kFortunesDirectory = "/usr/share/games/fortunes";
inline constexpr const char* kFortunesMarker = "/usr/share/games/fortunes/wisdom";  // not in -min

// King James Bible (bible-kjv-text). The package stores the verses as one Unix-compress
// stream inside a small container ("EC02" header, a table of chunk offsets, then the stream).
std::string kjv_verses_from_container(std::span<const uint8_t> data, const std::string& name);
// Verse lines "Ge1:1 In the beginning ..." -> one document per chapter: "Genesis 1" then one
// numbered verse per line. Lines that are not verses (the title line) are skipped.
void kjv_documents(std::string_view verses, const DocumentSink& sink);
void read_kjv(const std::filesystem::path& root, const DocumentSink& sink);

// GCIDE dictionary (dict-gcide), in dictd format: a gzip/dictzip text and an index of
// "headword TAB offset TAB length" lines with base-64 numbers.
struct DictEntryRange {
  uint64_t offset = 0, length = 0;
};
// The distinct entry ranges of the index in text order, "00-" database-information entries
// left out; each range is checked against text_size.
std::vector<DictEntryRange> parse_dict_index(std::string_view index, uint64_t text_size,
                                             const std::string& name);
// One dictionary entry's markup -> plain text (gcide_markup.cpp).
std::string gcide_entry_to_text(std::string_view entry);
void gcide_documents(std::string_view text, std::string_view index, const std::string& name,
                     const DocumentSink& sink);
void read_gcide(const std::filesystem::path& root, const DocumentSink& sink);

// WordNet (wordnet-base) data.noun/verb/adj/adv: "words (part of speech): gloss" lines, up to
// kWordnetSynsetsPerDocument synsets of one lexicographer file per document.
inline constexpr int kWordnetSynsetsPerDocument = 100;
void wordnet_documents(std::string_view data_file, const std::string& name,
                       const DocumentSink& sink);
void read_wordnet(const std::filesystem::path& root, const DocumentSink& sink);

// Debian Reference (debian-reference-en), its plain-text rendering: one document per
// preface, chapter and appendix, rendered tables left out.
void debian_reference_documents(std::string_view text, const DocumentSink& sink);
void read_debian_reference(const std::filesystem::path& root, const DocumentSink& sink);

// The Jargon File (jargon-text): one document per lexicon entry and per chapter or appendix
// section; the title page and table of contents left out.
void jargon_documents(std::string_view text, const DocumentSink& sink);
void read_jargon(const std::filesystem::path& root, const DocumentSink& sink);

// fortune(6) cookie files (fortunes, fortunes-min): one document per cookie ("%" lines
// separate them). read_fortunes reads every cookie file of the directory in name order except
// the ASCII-art and non-English ones.
void fortune_documents(std::string_view text, const DocumentSink& sink);
void read_fortunes(const std::filesystem::path& root, const DocumentSink& sink);

}  // namespace sources
}  // namespace afm::data
