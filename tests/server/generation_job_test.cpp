// GenerationJob: streamed log-probabilities travel with the text that covers their first byte,
// also when a stop sequence holds text back and cuts the answer.
#include "server/generation_job.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace afm::server {
namespace {

// A completion that streams the given tokens as ChatService does: each token's entry first,
// then its text.
CompleteFn fake_completion(std::vector<std::string> tokens) {
  return [tokens](const ChatRequest&, const DeltaFn& on_delta, const CancelledFn&) {
    ChatResult r;
    for (const std::string& t : tokens) {
      const ChatLogprob entry{{t, -1.0f}, {}};
      r.logprobs.push_back(entry);
      if (!on_delta(ChatDelta{"", {entry}})) break;
      r.text += t;
      if (!on_delta(ChatDelta{t, {}})) break;
    }
    r.finish_reason = "stop";
    return r;
  };
}

struct Streamed {
  std::string text;
  std::vector<std::string> tokens;  // the entries, in delivery order
};

Streamed drain(GenerationJob& job) {
  Streamed s;
  for (bool done = false; !done;) {
    GenerationJob::Update u = job.wait(std::chrono::milliseconds(50));
    s.text += u.text;
    for (const ChatLogprob& l : u.logprobs) s.tokens.push_back(l.chosen.bytes);
    done = u.done;
  }
  return s;
}

TEST(GenerationJob, LogprobsArriveWithTheirText) {
  GenerationJob job(fake_completion({"He", "llo", " wor", "ld"}), {}, {}, nullptr);
  const Streamed s = drain(job);
  EXPECT_EQ(s.text, "Hello world");
  EXPECT_EQ(s.tokens, (std::vector<std::string>{"He", "llo", " wor", "ld"}));
  EXPECT_EQ(job.result().logprobs.size(), 4u);
}

TEST(GenerationJob, AStopSequenceCutsTheLogprobsWithTheText) {
  // "wor" is held back as a possible stop, then matched: the answer is "Hello ", and the
  // token " wor", which put its first byte into the answer, is the last entry.
  GenerationJob job(fake_completion({"He", "llo", " wor", "ld", "!"}), {}, {"wor"}, nullptr);
  const Streamed s = drain(job);
  EXPECT_EQ(s.text, "Hello ");
  EXPECT_EQ(s.tokens, (std::vector<std::string>{"He", "llo", " wor"}));
  EXPECT_EQ(job.result().text, "Hello ");
  ASSERT_EQ(job.result().logprobs.size(), 3u);
  EXPECT_EQ(job.result().finish_reason, "stop");
}

}  // namespace
}  // namespace afm::server
