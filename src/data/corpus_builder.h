// `afm data corpus`: reads the selected sources and writes DIR/<name>.txt (document files,
// document_io.h) plus DIR/sources.json describing them.
//
// Contract: before anything is written, every selected source's package files are checked;
// missing ones give one Error(kNotFound) naming each package and the apt-get command that
// installs them. Every file is written atomically, sources.json last. An unknown source name
// is Error(kInvalidArgument).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace afm::data {

struct CorpusOptions {
  std::filesystem::path out_dir;
  std::vector<std::string> sources;  // empty: all of corpus_sources()
  std::filesystem::path root = "/";  // where the packages are installed
};

struct CorpusFileSummary {
  std::string name, package, version, license, description, file;
  uint64_t bytes = 0, documents = 0;
};

struct CorpusSummary {
  std::vector<CorpusFileSummary> files;
  // {"format": "afm-corpus", "version": 1, "separator": "\f", "sources": [...]}
  nlohmann::ordered_json to_json() const;
};

CorpusSummary build_corpus(const CorpusOptions& options);

}  // namespace afm::data
