// UTF-8 well-formedness against RFC 3629's table: sequence lengths, overlongs, surrogates, the
// top of the range, truncated sequences.
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace afm {
namespace {

size_t length(const std::string& s) {
  return utf8_sequence_length(reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

TEST(Utf8, SequenceLengths) {
  EXPECT_EQ(length("a"), 1u);
  EXPECT_EQ(length("\xC3\xA9"), 2u);          // é
  EXPECT_EQ(length("\xE4\xB8\xAD"), 3u);      // 中
  EXPECT_EQ(length("\xF0\x9F\x98\x80"), 4u);  // 😀
  EXPECT_EQ(length("\xF4\x8F\xBF\xBF"), 4u);  // U+10FFFF
}

TEST(Utf8, IllFormedSequencesAreRejected) {
  EXPECT_EQ(length("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(length("\xE0\x80\xAF"), 0u);      // overlong
  EXPECT_EQ(length("\xED\xA0\x80"), 0u);      // surrogate U+D800
  EXPECT_EQ(length("\xF4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(length("\x80"), 0u);              // a lone continuation byte
  EXPECT_EQ(length("\xE4\xB8"), 0u);          // truncated
  EXPECT_EQ(length("\xE4\x41\xAD"), 0u);      // not a continuation byte
}

TEST(Utf8, WholeStrings) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("h\xC3\xA9llo \xE4\xB8\xAD"));
  EXPECT_FALSE(is_valid_utf8("h\xC3"));
  EXPECT_FALSE(is_valid_utf8("\xA9y"));
}

TEST(Utf8, DecodesCodePointsAndStopsAtTheFirstIllFormedSequence) {
  std::vector<uint32_t> cps;
  EXPECT_TRUE(decode_utf8("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80", &cps));
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x61, 0xE9, 0x4E2D, 0x1F600}));
  cps.clear();
  EXPECT_FALSE(decode_utf8("ab\xED\xA0\x80" "c", &cps));  // an encoded surrogate
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x61, 0x62}));
}

}  // namespace
}  // namespace afm
