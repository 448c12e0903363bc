#include "reply_printer.h"

#include "base/error.h"
#include "framework/tool_grammar.h"

namespace afm::cli {

ReplyPrinter::ReplyPrinter(const tokenizer::Tokenizer& tokenizer, const ChatTemplate& chat_template,
                           Write write)
    : tokenizer_(tokenizer),
      format_(chat_template.tool_call_format()),
      decoder_(tokenizer),
      write_(std::move(write)) {
  if (!format_) return;
  // Blocks are recognised by their single-token delimiters; a vocabulary without them has none.
  block_start_ = tokenizer.added_token_id(format_->start_token).value_or(-1);
  block_end_ = tokenizer.added_token_id(format_->end_token).value_or(-1);
  if (block_start_ < 0 || block_end_ < 0) format_.reset();
}

// A block body for a one-line label: without the format's framing, newlines as spaces.
std::string ReplyPrinter::one_line(std::string body) const {
  if (body.starts_with(format_->body_open)) body.erase(0, format_->body_open.size());
  for (char& c : body) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return body;
}

void ReplyPrinter::write_text(const std::string& text) {
  if (text.empty()) return;
  write_(text);
  wrote_any_ = true;
  at_line_start_ = text.back() == '\n';
}

void ReplyPrinter::start_line() {
  if (!at_line_start_) write_text("\n");
}

void ReplyPrinter::push(int32_t token) {
  if (format_ && !in_block_ && token == block_start_) {
    write_text(decoder_.flush());
    in_block_ = true;
    body_.clear();
    return;
  }
  if (in_block_) {
    if (token != block_end_) {
      body_ += tokenizer_.token_bytes(token);
      return;
    }
    in_block_ = false;
    show_block("[tool call, not parsed] ");
    return;
  }
  write_text(decoder_.push(token));
}

void ReplyPrinter::show_block(const char* label_if_unparsed) {
  start_line();
  try {
    for (const ToolCall& call : parse_tool_call_body(body_, *format_)) {
      write_text("[tool call] " + call.name + "(" +
                 call.arguments.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                 ")\n");
    }
  } catch (const Error&) {
    write_text(label_if_unparsed + one_line(body_) + "\n");
  }
}

void ReplyPrinter::finish(bool complete) {
  if (in_block_) {
    in_block_ = false;
    start_line();
    write_text("[tool call, cut off] " + one_line(body_) + "\n");
  }
  write_text(decoder_.flush());
  if (complete && !wrote_any_) write_text("\n");  // an empty reply is still one line
  start_line();
}

}  // namespace afm::cli
