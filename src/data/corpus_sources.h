// The corpus sources `afm data corpus` knows: each a Debian package of English text with a
// reader in sources/ (docs/data.md lists them with sizes and licenses).
//
// Contract: corpus_sources() is a fixed list in a fixed order; find_corpus_source throws
// Error(kInvalidArgument) naming the unknown source and listing the known ones.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "data/sources/sources.h"

namespace afm::data {

struct CorpusSource {
  std::string name;         // also the output file's stem: <name>.txt
  std::string package;      // the Debian package
  std::string license;      // SPDX-like identifier, from the package's copyright file
  std::string description;  // what text it holds
  std::vector<std::string> required_files;  // absolute paths inside the package
  std::function<void(const std::filesystem::path& root, const DocumentSink& sink)> read;
};

const std::vector<CorpusSource>& corpus_sources();
const CorpusSource& find_corpus_source(std::string_view name);

}  // namespace afm::data
