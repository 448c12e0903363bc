// `afm data synth --format jsonl`: every line is a chat-completions conversation the server's
// parser accepts, and rendering it the way SFT does (the request's messages and extras through
// the afm template) gives exactly the document `--format text` writes.
#include <gtest/gtest.h>

#include "data/synth/openai_jsonl.h"
#include "data/synth/synth.h"
#include "framework/chat_service.h"
#include "server/openai_protocol.h"

namespace afm::data::synth {
namespace {

TEST(SynthJsonl, LinesParseAsRequestsAndRenderToTheTextDocuments) {
  const ChatTemplate tmpl(ChatTemplateKind::kAfm);
  const std::vector<Task> tasks = canonical_tasks({});
  std::map<std::string, int> seen;
  int tool_calls = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    const Example e = make_example(11, i, tasks);
    nlohmann::ordered_json line = to_openai_conversation(e);
    ASSERT_EQ(line["metadata"]["task"], task_name(e.task));
    ++seen[line["metadata"]["task"]];
    line["model"] = "sft";
    const ChatRequest r = server::parse_chat_request_json(line, 0).chat;
    for (const ChatMessage& m : r.messages) tool_calls += static_cast<int>(m.tool_calls.size());
    EXPECT_EQ(tmpl.render(r.messages, false, prompt_extras(r)), render_example(e)) << i;
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_GT(tool_calls, 50);
}

}  // namespace
}  // namespace afm::data::synth
