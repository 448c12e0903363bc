// The corpus readers on small inputs written here; the real packages are tested (or skipped)
// at the end.
#include "data/sources/sources.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "data/decompress.h"
#include "data_pipeline/test_util.h"

namespace afm::data::sources {
namespace {

std::vector<std::string> collect(const std::function<void(const DocumentSink&)>& run) {
  std::vector<std::string> docs;
  run([&](std::string_view d) { docs.emplace_back(d); });
  return docs;
}

TEST(Decompress, GzipAndUnixCompress) {
  const std::string text = "the quick brown fox jumps over the lazy dog\n";
  for (const char* filter : {"gzip", "compress"}) {
    const std::vector<uint8_t> z = testing::compress_stream(text + text + text, filter);
    EXPECT_EQ(decompress(z, filter), text + text + text) << filter;
    std::vector<uint8_t> cut(z.begin(), z.begin() + static_cast<long>(z.size() / 2));
    if (std::string(filter) == "gzip") {
      EXPECT_THROW(decompress(cut, filter), Error);  // gzip ends with a length and a CRC
    } else {
      EXPECT_NE(decompress(cut, filter), text + text + text);  // .Z has no end marker
    }
  }
  const std::string plain = "plain text";
  try {
    decompress({reinterpret_cast<const uint8_t*>(plain.data()), plain.size()}, "plain.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat);
    EXPECT_NE(std::string(e.what()).find("plain.txt"), std::string::npos);
  }
  const std::vector<uint8_t> big = testing::compress_stream(std::string(5000, 'a'), "gzip");
  EXPECT_THROW(decompress(big, "big", 1000), Error);
}

TEST(Kjv, ChaptersFromVerses) {
  const auto docs = collect([](const DocumentSink& s) {
    kjv_documents(
        "Title line.\nGe1:1 In the beginning.\nGe1:2 And the earth.\n"
        "Ge2:1 Thus the heavens.\n1Sm3:10 And the LORD came.\nZz9:9 Unknown book.\n",
        s);
  });
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0], "Genesis 1\n1 In the beginning.\n2 And the earth.\n");
  EXPECT_EQ(docs[1], "Genesis 2\n1 Thus the heavens.\n");
  EXPECT_EQ(docs[2], "1 Samuel 3\n10 And the LORD came.\n");
  EXPECT_EQ(docs[3], "Zz 9\n9 Unknown book.\n");
}

TEST(Kjv, ContainerHoldsOneCompressStream) {
  const std::string verses = "Ge1:1 In the beginning God created the heaven and the earth.\n";
  std::vector<uint8_t> data = {'E', 'C', '0', '2'};
  data.resize(0x58, 0);
  const uint8_t chunks[4] = {0, 0, 0, 1};  // one chunk: two offsets follow
  data.insert(data.end(), chunks, chunks + 4);
  data.resize(data.size() + 8, 0);
  const std::vector<uint8_t> z = testing::compress_stream(verses, "compress");
  data.insert(data.end(), z.begin(), z.end());
  EXPECT_EQ(kjv_verses_from_container(data, "bible.data"), verses);
  data[0x5b] = 7;  // the table now claims more chunks: no stream where it should start
  EXPECT_THROW(kjv_verses_from_container(data, "bible.data"), Error);
  EXPECT_THROW(kjv_verses_from_container(std::vector<uint8_t>(10, 0), "bible.data"), Error);
}

TEST(Gcide, EntryMarkupBecomesPlainText) {
  const std::string entry =
      "Anchoret \\An\"cho*ret\\, Anchorite \\An\"cho*rite\\, n. [F.\n"
      "   anachor[`e]te, L. anachoreta.]\n"
      "   One who renounces the world; a hermit; a {recluse}. [Obs.]\n"
      "   [1913 Webster]\n"
      "\n"
      "   2. A caf['e] dweller in [ae]ther.\n"
      "   [1913 Webster] Anchoretic\n";
  EXPECT_EQ(gcide_entry_to_text(entry),
            "Anchoret, Anchorite, n. One who renounces the world; a hermit; a recluse.\n"
            "2. A café dweller in æther.\n");
  EXPECT_EQ(gcide_entry_to_text("Apple \\Ap\"ple\\ ([a^]p\"p'l), n. A fruit.\n"),
            "Apple, n. A fruit.\n");
  EXPECT_EQ(
      gcide_entry_to_text("Amber fish \\Am\"ber\n   fish`\\ (am\"ber), n. A fish ({{Seriola}}).\n"),
      "Amber fish, n. A fish (Seriola).\n");
  EXPECT_EQ(gcide_entry_to_text("Odd [unclosed bracket {and} text\n"),
            "Odd unclosed bracket and text\n");
}

TEST(Gcide, IndexGivesDistinctRangesInTextOrder) {
  // Offsets and lengths are base-64 numbers: "A" = 0, "k" = 36, "Bk" = 100.
  const std::string text(200, 'x');
  const auto ranges = parse_dict_index(
      "00-database-info\tA\tk\nzeta\tBk\tk\nalpha\tk\tk\nalias\tk\tk\n", text.size(), "idx");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].offset, 36u);
  EXPECT_EQ(ranges[1].offset, 100u);
  EXPECT_EQ(ranges[1].length, 36u);
  EXPECT_THROW(parse_dict_index("word\tB*\tk\n", text.size(), "idx"), Error);
  EXPECT_THROW(parse_dict_index("word only\n", text.size(), "idx"), Error);
  try {
    parse_dict_index("ok\tA\tB\nlate\tDI\tk\n", text.size(), "idx");  // 200 + 36 > 200
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("idx line 2"), std::string::npos) << e.what();
  }
}

TEST(Gcide, DocumentsFollowTheIndex) {
  const std::string text = "Cat \\Cat\\, n. A small animal.\n\nDog \\Dog\\, n. A friend.\n";
  const std::string index = "cat\tA\td\ndog\tf\tY\n";  // [0, 29) and [31, 55)
  const auto docs = collect([&](const DocumentSink& s) { gcide_documents(text, index, "i", s); });
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0], "Cat, n. A small animal.\n");
  EXPECT_EQ(docs[1], "Dog, n. A friend.\n");
}

TEST(Wordnet, GlossLinesGroupedByLexicographerFile) {
  const std::string data =
      "  1 This software and database is being provided to you\n"
      "00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which exists  \n"
      "00002137 03 n 02 abstraction 0 abstract_entity 0 000 | a general concept  \n"
      "00016135 00 s 01 rank(a) 0 002 & 00013887 a 0000 | growing profusely  \n";
  const auto docs = collect([&](const DocumentSink& s) { wordnet_documents(data, "data.x", s); });
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0],
            "entity (noun): that which exists\n"
            "abstraction, abstract entity (noun): a general concept\n");
  EXPECT_EQ(docs[1], "rank (adjective): growing profusely\n");
  try {
    wordnet_documents("00001740 03 n 05 entity 0 000 | short\n", "data.noun", [](auto) {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFormat);
    EXPECT_NE(std::string(e.what()).find("data.noun line 1"), std::string::npos);
  }
  EXPECT_THROW(wordnet_documents("00001740 03 q 01 x 0 000 | y\n", "d", [](auto) {}), Error);
}

TEST(DebianReference, PrefaceChaptersAndNoTables) {
  const std::string text =
      "Debian Reference\n\nTable of Contents\n\nPreface\n    1. Disclaimer\nChapter 1. Old\n\n"
      "Preface\n\nThe\xC2\xA0preface text.\n\n"
      "Chapter 1. Tutorials\n\n    Body line one.\n      $ indented command\n\n"
      "    +-----+\n    |cell |\n    +-----+\n\n\n    After the table.\n"
      "Appendix A. Appendix\n\n    Backgrounds.\n";
  const auto docs = collect([&](const DocumentSink& s) { debian_reference_documents(text, s); });
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0], "Preface\n\nThe preface text.");
  EXPECT_EQ(docs[1],
            "Chapter 1. Tutorials\n\nBody line one.\n  $ indented command\n\n"
            "After the table.");
  EXPECT_EQ(docs[2], "Appendix A. Appendix\n\nBackgrounds.");
}

TEST(Jargon, EntriesAndSections) {
  const std::string text =
      "The Jargon File\n\n   Table of Contents\n\n   cruft\n\n"
      "Chapter 1. Slang\n\n   Hackers talk.\n   A lot.\n\n"
      "   :cruft: /kruhft/, n.\n\n   Excess {code}; see {}\n   more.\n\n   2. Sense two.\n\n"
      "   :(TM): //\n\n   A mark.\n\n"
      "\xE2\x94\x8C\xE2\x94\x80\xE2\x94\x90\n"
      "Appendix A. Folklore\n\n   Story.\n";
  const auto docs = collect([&](const DocumentSink& s) { jargon_documents(text, s); });
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0], "Chapter 1. Slang\n\nHackers talk.\nA lot.");
  EXPECT_EQ(docs[1], "cruft: /kruhft/, n.\nExcess code; see {} more.\n2. Sense two.");
  EXPECT_EQ(docs[2], "(TM):\nA mark.");
  EXPECT_EQ(docs[3], "Appendix A. Folklore\n\nStory.");
}

TEST(Fortunes, CookiesBetweenPercentLines) {
  const auto docs = collect([](const DocumentSink& s) {
    fortune_documents("First cookie.\n\t\t-- Someone\n%\n%\nSecond\nline.  \n%\n", s);
  });
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0], "First cookie.\n\t\t-- Someone");
  EXPECT_EQ(docs[1], "Second\nline.");
}

// The installed packages, when this machine has them (a user's machine may not).
TEST(RealPackages, KjvHasEveryChapter) {
  if (!std::filesystem::exists(kKjvData)) {
    GTEST_SKIP() << "bible-kjv-text is not installed (apt-get install bible-kjv-text)";
  }
  const auto docs = collect([](const DocumentSink& s) { read_kjv("/", s); });
  ASSERT_EQ(docs.size(), 1189u);  // chapters in the 66 books
  EXPECT_EQ(docs.front().substr(0, 22), "Genesis 1\n1 In the beg");
  EXPECT_EQ(docs.back().substr(0, 13), "Revelation 22");
}

TEST(RealPackages, GcideEntriesAreClean) {
  if (!std::filesystem::exists(kGcideDict)) {
    GTEST_SKIP() << "dict-gcide is not installed (apt-get install dict-gcide)";
  }
  size_t entries = 0, with_markup = 0;
  read_gcide("/", [&](std::string_view d) {
    ++entries;
    if (d.find("[1913 Webster]") != d.npos || d.find('\\') != d.npos) ++with_markup;
  });
  EXPECT_GT(entries, 100000u);
  EXPECT_LT(with_markup, entries / 1000);
}

}  // namespace
}  // namespace afm::data::sources
