#include "data/corpus_builder.h"

#include <algorithm>
#include <system_error>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/corpus_sources.h"
#include "data/document_io.h"
#include "data/package_files.h"

namespace afm::data {
namespace {

std::vector<const CorpusSource*> select_sources(const std::vector<std::string>& names) {
  std::vector<const CorpusSource*> out;
  if (names.empty()) {
    for (const CorpusSource& s : corpus_sources()) out.push_back(&s);
    return out;
  }
  for (const std::string& name : names) {
    const CorpusSource* s = &find_corpus_source(name);
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

// One error for every missing package, so a user installs them all at once.
void check_packages(const std::vector<const CorpusSource*>& selected,
                    const std::filesystem::path& root) {
  std::string missing, packages;
  for (const CorpusSource* s : selected) {
    for (const std::string& file : s->required_files) {
      std::error_code ec;
      if (std::filesystem::exists(package_path(root, file), ec)) continue;
      missing += (missing.empty() ? "" : "; ") + s->name + " needs " + s->package + " (" +
                 package_path(root, file).string() + " is missing)";
      packages += " " + s->package;
      break;
    }
  }
  if (!missing.empty()) {
    throw_error(ErrorCode::kNotFound, "missing Debian packages: " + missing +
                                          "; install with: apt-get install" + packages);
  }
}

CorpusFileSummary build_one(const CorpusSource& s, const CorpusOptions& options) {
  CorpusFileSummary summary{
      s.name,    s.package,     installed_package_version(options.root, s.package),
      s.license, s.description, s.name + ".txt"};
  DocumentWriter writer((options.out_dir / summary.file).string());
  s.read(options.root, [&](std::string_view doc) { writer.add(doc); });
  writer.commit();
  summary.bytes = writer.bytes();
  summary.documents = writer.documents();
  return summary;
}

}  // namespace

nlohmann::ordered_json CorpusSummary::to_json() const {
  nlohmann::ordered_json sources = nlohmann::ordered_json::array();
  for (const CorpusFileSummary& f : files) {
    sources.push_back({{"name", f.name},
                       {"package", f.package},
                       {"version", f.version.empty() ? nlohmann::ordered_json()
                                                     : nlohmann::ordered_json(f.version)},
                       {"license", f.license},
                       {"description", f.description},
                       {"file", f.file},
                       {"bytes", f.bytes},
                       {"documents", f.documents}});
  }
  return {{"format", "afm-corpus"}, {"version", 1}, {"separator", "\f"}, {"sources", sources}};
}

CorpusSummary build_corpus(const CorpusOptions& options) {
  const std::vector<const CorpusSource*> selected = select_sources(options.sources);
  check_packages(selected, options.root);
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) {
    throw_error(ErrorCode::kIo,
                "cannot create directory " + options.out_dir.string() + ": " + ec.message());
  }
  CorpusSummary summary;
  for (const CorpusSource* s : selected) summary.files.push_back(build_one(*s, options));
  write_file_atomic((options.out_dir / "sources.json").string(), summary.to_json().dump(2) + "\n");
  return summary;
}

}  // namespace afm::data
