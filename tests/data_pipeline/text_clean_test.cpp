#include "data/text_clean.h"

#include <gtest/gtest.h>

namespace afm::data {
namespace {

TEST(TextClean, SanitizeRepairsBytesAndControls) {
  EXPECT_EQ(sanitize_text("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(sanitize_text("bad \xC3 x \xED\xA0\x80"),
            "bad \xEF\xBF\xBD x \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_text("over\xC0\xAF"), "over\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_text("a\r\nb\rc"), "a\nb\nc");
  EXPECT_EQ(sanitize_text("__\b\bUN\x07lucky"), "UNlucky");
  EXPECT_EQ(sanitize_text("caf\xC3\xA9\b!"), "caf!");
  EXPECT_EQ(sanitize_text("no\xC2\xA0"
                          "break\xC2\x85"),
            "no break");
  EXPECT_EQ(sanitize_text("tab\tkept\n"), "tab\tkept\n");
  EXPECT_EQ(sanitize_text("page\fbreak\v"), "page\nbreak\n");
}

TEST(TextClean, ReflowDedentSqueeze) {
  EXPECT_EQ(reflow_paragraphs("  one\n  two  words\n\n\n three\n"), "one two words\nthree");
  EXPECT_EQ(dedent("    a\n  b\n      c  \n", 4), "a\nb\n  c\n");
  EXPECT_EQ(squeeze_blank_lines("\n\na\n\n\n\nb  \n\n"), "a\n\nb");
  EXPECT_EQ(collapse_spaces("a \t  b"), "a b");
}

TEST(TextClean, BracesAndBoxes) {
  EXPECT_EQ(strip_reference_braces("see {foo} and {bar baz}, not {} or {\n}"),
            "see foo and bar baz, not {} or {\n}");
  EXPECT_EQ(strip_reference_braces("({{Genus species}})"), "(Genus species)");
  EXPECT_TRUE(has_box_drawing("\xE2\x94\x8C\xE2\x94\x80"));  // ┌─
  EXPECT_FALSE(has_box_drawing("plain | table"));
  std::string s = "a-b-c";
  replace_all(s, "-", "--");
  EXPECT_EQ(s, "a--b--c");
}

}  // namespace
}  // namespace afm::data
