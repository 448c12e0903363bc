#include "data/corpus_sources.h"

#include "base/error.h"

namespace afm::data {

const std::vector<CorpusSource>& corpus_sources() {
  using namespace sources;
  static const std::vector<CorpusSource> kSources = {
      {"kjv",
       kKjvPackage,
       "public-domain",
       "King James Bible (1611), one chapter per document",
       {kKjvData},
       read_kjv},
      {"gcide",
       kGcidePackage,
       "GPL-2.0-or-later",
       "GNU Collaborative International Dictionary of English (Webster 1913 + WordNet), one "
       "entry per document, markup stripped",
       {kGcideDict, kGcideIndex},
       read_gcide},
      {"wordnet",
       kWordnetPackage,
       "WordNet-3.0",
       "WordNet 3.0 synonym sets with their glosses and examples",
       {kWordnetData[0], kWordnetData[1], kWordnetData[2], kWordnetData[3]},
       read_wordnet},
      {"debian-reference",
       kDebianReferencePackage,
       "GPL-2.0-or-later",
       "Debian Reference, system administration guide, one chapter per document",
       {kDebianReferenceText},
       read_debian_reference},
      {"jargon",
       kJargonPackage,
       "public-domain",
       "The Jargon File 4.4.7, hacker slang, one entry or section per document",
       {kJargonText},
       read_jargon},
      {"fortunes",
       kFortunesPackage,
       "BSD-3-Clause",
       "fortune(6) cookies: quotations, jokes, verse, one cookie per document",
       {kFortunesMarker},
       read_fortunes},
  };
  return kSources;
}

const CorpusSource& find_corpus_source(std::string_view name) {
  std::string known;
  for (const CorpusSource& s : corpus_sources()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw_error(ErrorCode::kInvalidArgument,
              "unknown corpus source '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace afm::data
