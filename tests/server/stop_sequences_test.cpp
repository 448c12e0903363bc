// Stop sequences across delta boundaries: nothing past a match is emitted, and text that might
// begin a match is held back until it is known not to.
#include "server/stop_sequences.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace afm::server {
namespace {

std::string run(const std::vector<std::string>& stops, const std::vector<std::string>& pieces,
                bool* stopped = nullptr) {
  StopScanner s(stops);
  std::string out;
  for (const std::string& p : pieces) out += s.push(p);
  out += s.flush();
  if (stopped) *stopped = s.stopped();
  return out;
}

TEST(StopScanner, NoStopsPassesEverything) {
  StopScanner s({});
  EXPECT_EQ(s.push("abc"), "abc");
  EXPECT_EQ(s.flush(), "");
  EXPECT_FALSE(s.stopped());
}

TEST(StopScanner, MatchInsideOnePiece) {
  bool stopped = false;
  EXPECT_EQ(run({"END"}, {"hello END world"}, &stopped), "hello ");
  EXPECT_TRUE(stopped);
}

TEST(StopScanner, MatchAcrossPiecesIsHeldBack) {
  StopScanner s({"<|end|>"});
  EXPECT_EQ(s.push("abc<|"), "abc");  // "<|" may begin the stop sequence
  EXPECT_EQ(s.push("en"), "");
  EXPECT_EQ(s.push("d|>tail"), "");
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.push("more"), "");
  EXPECT_EQ(s.flush(), "");
}

TEST(StopScanner, FalseStartIsReleased) {
  StopScanner s({"STOP"});
  EXPECT_EQ(s.push("ST"), "");
  EXPECT_EQ(s.push("AY"), "STAY");
  EXPECT_EQ(s.push("S"), "");
  EXPECT_EQ(s.flush(), "S");  // a partial match at the end is ordinary text
  EXPECT_FALSE(s.stopped());
}

TEST(StopScanner, EarliestOfSeveral) {
  EXPECT_EQ(run({"zz", "b"}, {"a", "bzz"}), "a");
  EXPECT_EQ(run({"\n\n", "x"}, {"line\n", "\nrest"}), "line");
}

}  // namespace
}  // namespace afm::server
