#include "data/document_io.h"

#include <gtest/gtest.h>

#include "base/mapped_file.h"
#include "data_pipeline/test_util.h"

namespace afm::data {
namespace {

using Docs = std::vector<std::string_view>;

TEST(SplitDocuments, SeparatorLinesEndDocuments) {
  EXPECT_EQ(split_documents("one\n\f\ntwo\nlines\n\f\n"), (Docs{"one", "two\nlines"}));
  EXPECT_EQ(split_documents("no separator\n"), (Docs{"no separator"}));
  EXPECT_EQ(split_documents("a\n\f\r\nb"), (Docs{"a", "b"}));
  EXPECT_EQ(split_documents("\f\n \n\f\n\f\nx\n\f\n"), (Docs{"x"}));  // blank ones skipped
  EXPECT_EQ(split_documents("form\ffeed inside\n\f\n"), (Docs{"form\ffeed inside"}));
  EXPECT_TRUE(split_documents("").empty());
}

TEST(DocumentWriter, RoundTripsAndSanitises) {
  const auto dir = testing::fresh_dir("docwriter");
  const std::string path = (dir / "docs.txt").string();
  {
    DocumentWriter w(path);
    EXPECT_TRUE(w.add("first\n\n"));
    EXPECT_FALSE(w.add(" \n\t"));
    EXPECT_TRUE(w.add("page\fbreak and bad \xff byte\r\nnext"));
    EXPECT_EQ(w.documents(), 2u);
    w.commit();
  }
  const std::string text = read_file_to_string(path);
  EXPECT_EQ(text, "first\n\f\npage\nbreak and bad \xEF\xBF\xBD byte\nnext\n\f\n");
  EXPECT_EQ(split_documents(text), (Docs{"first", "page\nbreak and bad \xEF\xBF\xBD byte\nnext"}));
}

TEST(DocumentWriter, NothingAppearsWithoutCommit) {
  const auto dir = testing::fresh_dir("docwriter_abandon");
  {
    DocumentWriter w((dir / "docs.txt").string());
    w.add("text");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace afm::data
