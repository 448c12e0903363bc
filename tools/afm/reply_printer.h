// Shows a chat reply as it is generated: text as soon as it is complete UTF-8, and each
// tool-call block (afm: <executable_start> ... <executable_end>, ChatML: <tool_call> ...
// </tool_call>) as one readable line per call instead of its raw tokens:
//   [tool call] get_weather({"city":"Paris"})
// The block is parsed with the framework's own parser (parse_tool_call_body); a block that
// does not parse is shown as "[tool call, not parsed] BODY", one cut off by the end of the
// reply as "[tool call, cut off] BODY". Templates without a tool-call format print text only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "framework/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace afm::cli {

class ReplyPrinter {
 public:
  using Write = std::function<void(std::string_view)>;
  ReplyPrinter(const tokenizer::Tokenizer& tokenizer, const ChatTemplate& chat_template,
               Write write);

  void push(int32_t token);
  // Ends the reply: writes what is pending, then a newline unless the reply ended with one.
  // complete: the reply ended normally (an empty one is still shown as an empty line);
  // false when it was cut off by an error (nothing is written if nothing was shown).
  void finish(bool complete = true);

 private:
  void write_text(const std::string& text);
  void start_line();
  void show_block(const char* label_if_unparsed);
  std::string one_line(std::string body) const;

  const tokenizer::Tokenizer& tokenizer_;
  std::optional<ToolCallFormat> format_;
  int32_t block_start_ = -1, block_end_ = -1;
  tokenizer::IncrementalDecoder decoder_;
  Write write_;
  bool in_block_ = false;
  bool at_line_start_ = true;
  bool wrote_any_ = false;
  std::string body_;
};

}  // namespace afm::cli
