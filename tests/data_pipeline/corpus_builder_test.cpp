// build_corpus on a fake file-system root holding two small "packages".
#include "data/corpus_builder.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/document_io.h"
#include "data/sources/sources.h"
#include "data_pipeline/test_util.h"

namespace afm::data {
namespace {

namespace fs = std::filesystem;

fs::path fake_root() {
  const fs::path root = testing::fresh_dir("corpus_root");
  const std::string jargon =
      "Title\n\nChapter 1. Intro\n\n   Words.\n\n   :foo: n.\n\n   A {bar}.\n";
  testing::write_bytes(root / "usr/share/doc/jargon-text/jargon.txt.gz",
                       testing::compress_stream(jargon, "gzip"));
  testing::write_text(root / "usr/share/games/fortunes/wisdom", "Be wise.\n%\nBe kind.\n%\n");
  testing::write_text(root / "usr/share/games/fortunes/wisdom.dat", "\x01\x02 index");
  testing::write_text(root / "usr/share/games/fortunes/ascii-art", "  /\\_/\\\n%\n");
  testing::write_text(root / "var/lib/dpkg/status",
                      "Package: jargon-text\nStatus: install ok installed\nVersion: 4.4.7-4.1\n\n"
                      "Package: fortunes\nStatus: deinstall ok config-files\nVersion: 1:1.0\n");
  return root;
}

TEST(CorpusBuilder, WritesSourcesAndSummary) {
  const fs::path root = fake_root();
  const fs::path out = testing::fresh_dir("corpus_out") / "nested";
  const CorpusSummary summary = build_corpus({out, {"jargon", "fortunes", "jargon"}, root});
  ASSERT_EQ(summary.files.size(), 2u);
  EXPECT_EQ(summary.files[0].version, "4.4.7-4.1");
  EXPECT_EQ(summary.files[1].version, "");  // not installed according to dpkg
  const std::string jargon = testing::read_text(out / "jargon.txt");
  EXPECT_EQ(jargon, "Chapter 1. Intro\n\nWords.\n\f\nfoo: n.\nA bar.\n\f\n");
  const std::string fortunes = testing::read_text(out / "fortunes.txt");
  EXPECT_EQ(split_documents(fortunes).size(), 2u);  // ascii-art and .dat files skipped
  const auto json = nlohmann::json::parse(testing::read_text(out / "sources.json"));
  EXPECT_EQ(json["format"], "afm-corpus");
  EXPECT_EQ(json["sources"][0]["name"], "jargon");
  EXPECT_EQ(json["sources"][0]["documents"], 2);
  EXPECT_EQ(json["sources"][0]["bytes"], jargon.size());
  EXPECT_TRUE(json["sources"][1]["version"].is_null());
  EXPECT_EQ(json["sources"][1]["license"], "BSD-3-Clause");
}

TEST(CorpusBuilder, MissingPackagesAreNamedBeforeAnythingIsWritten) {
  const fs::path root = fake_root();
  const fs::path out = testing::fresh_dir("corpus_missing");
  try {
    build_corpus({out, {"jargon", "kjv", "gcide"}, root});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kjv needs bible-kjv-text"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install bible-kjv-text dict-gcide"), std::string::npos) << msg;
  }
  EXPECT_TRUE(fs::is_empty(out));
  try {
    build_corpus({out, {"nonsense"}, root});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("nonsense"), std::string::npos);
  }
}

TEST(CorpusBuilder, ReadersNameTheirPackageWhenCalledDirectly) {
  const fs::path root = testing::fresh_dir("corpus_empty_root");
  try {
    sources::read_wordnet(root, [](std::string_view) {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("apt-get install wordnet-base"), std::string::npos);
  }
}

}  // namespace
}  // namespace afm::data
