// OpenAI's `stop`: generation ends before the first occurrence of any stop sequence, and the
// sequence itself is not part of the answer. The engine knows nothing of them; the server
// scans the text it streams and cancels generation on a match.
//
// Text that could be the start of a stop sequence is held back until it is known not to be
// one, so a streaming client never receives a piece it would have to take back.
// Thread safety: none; one scanner per response.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace afm::server {

class StopScanner {
 public:
  explicit StopScanner(std::vector<std::string> stops);

  // Appends generated text; returns the text that is now safe to emit. After a match,
  // stopped() is true and everything from the match on is dropped (later pushes return "").
  std::string push(std::string_view text);
  // At the end of generation: the held-back tail (a partial match that never completed).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace afm::server
