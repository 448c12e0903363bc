// Partial JSON: the value a prefix of a JSON text denotes so far, for streaming snapshots.
//
// A model writes JSON one token at a time; after every token the framework yields the whole
// partially generated value. parse_partial_json() maps any byte prefix of a JSON text (compact
// or with whitespace) to that value; PartialJsonParser does the same incrementally, costing
// O(new bytes) per append() and O(1) per snapshot() (plus re-reading an unfinished number).
//
// What a prefix shows (docs/guided.md, "Partial JSON"):
//  - Objects and arrays appear as soon as they open; object members keep generation order.
//  - A member appears once its key string is complete and its value has started with
//    something representable; a key whose string is unfinished is omitted.
//  - An unfinished string shows the characters so far. An unfinished escape (`\`, `\u00`, a
//    high surrogate waiting for its low half) and an unfinished UTF-8 sequence are held back,
//    so the text shown is always a prefix of the final string.
//  - An unfinished number shows the longest prefix of its text that is a JSON number:
//    `12` of `123`, `1` of `1.` and of `1e`, `1.5` of `1.5e-`; `-` alone shows nothing.
//    Numbers are read as nlohmann::json reads them (integers, then unsigned, then double).
//  - Unfinished true/false/null show nothing.
//  - A number too large for a double shows as null; the text is invalid once it ends there
//    (nlohmann rejects it too).
//  - Duplicate keys behave as in nlohmann::ordered_json::parse: the later value replaces the
//    earlier one in place, once the later value is representable.
//
// Validity: `valid` turns false at the first byte after which no continuation can be valid
// JSON (RFC 8259: UTF-8 checked, no control characters in strings, no leading zeros, no
// trailing commas, nothing but whitespace after the value; a byte order mark is not
// accepted). `error` names the byte offset (0-based, counted over all appended bytes) and
// what was expected; `value` then keeps what was parsed before the error, and later bytes are
// ignored. Nesting deeper than kPartialJsonMaxDepth is an error, not a stack overflow: the
// parser is iterative, and the limit keeps the recursive copy/dump of nlohmann values safe.
// `complete` is true when the prefix is one whole JSON value (trailing whitespace allowed);
// then `value` equals nlohmann::ordered_json::parse(prefix).
//
// Thread safety: a PartialJsonParser is single-threaded; parse_partial_json is reentrant.
// Errors are reported in the result, never thrown (std::bad_alloc aside).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace afm::guided {

inline constexpr size_t kPartialJsonMaxDepth = 1000;

struct PartialJson {
  nlohmann::ordered_json value;  // the partial value; null when nothing usable yet
  bool complete = false;         // the prefix is one whole JSON value (trailing whitespace ok)
  bool valid = true;             // false when the prefix can never become valid JSON
  std::string error;             // why not valid: names the byte offset
};

PartialJson parse_partial_json(std::string_view prefix);

class PartialJsonParser {
 public:
  PartialJsonParser() { reset(); }
  // Not copyable (the state points into its own value); moving keeps the state.
  PartialJsonParser(const PartialJsonParser&) = delete;
  PartialJsonParser& operator=(const PartialJsonParser&) = delete;
  PartialJsonParser(PartialJsonParser&& other) noexcept { *this = std::move(other); }
  PartialJsonParser& operator=(PartialJsonParser&& other) noexcept;
  // Feeds the next bytes of the text; any split is fine (inside strings, escapes, UTF-8).
  void append(std::string_view bytes);
  // The value so far. The reference stays valid until the next append()/reset(); copy the
  // value (O(size)) to keep it.
  const PartialJson& snapshot();
  void reset();
  // Bytes appended since construction or reset().
  uint64_t offset() const { return offset_; }

 private:
  using Json = nlohmann::ordered_json;
  enum class Mode : uint8_t {
    kValue,        // a value must start here (top level, after ':' or after ',' in an array)
    kArrayFirst,   // after '[': a value or ']'
    kArrayNext,    // after an element: ',' or ']'
    kObjectFirst,  // after '{': a key or '}'
    kObjectKey,    // after ',' in an object: a key
    kColon,        // after a key
    kObjectNext,   // after a member: ',' or '}'
    kString,       // inside a string (key or value)
    kNumber,       // inside a number
    kLiteral,      // inside true/false/null
    kDone,         // the top-level value is finished: whitespace only
    kError,
  };
  enum class NumState : uint8_t { kSign, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };

  bool step(char c);  // one byte outside strings; false: not consumed
  void start_value(char c);
  void start_string(bool key);
  void value_done();
  Json* insert(Json v);       // into the innermost open container (or the root)
  void open(Json container);  // pushes an object/array
  void close();
  size_t scan_string(const char* p, size_t n);  // returns the bytes consumed
  void string_byte(uint8_t c);
  void emit_code_point(uint32_t cp);
  bool number_byte(char c);  // false: c ends the number (not consumed)
  void end_number(char c);   // c, a delimiter, ended the number
  void refresh_number();
  void fail(std::string_view expected, int got = -1);  // got: the offending byte, if any

  PartialJson snap_;
  Mode mode_ = Mode::kValue;
  uint64_t offset_ = 0;
  std::vector<Json*> stack_;    // open containers, innermost last (pointers into snap_.value)
  Json* leaf_ = nullptr;        // the value being written (string or number), when inserted
  std::string key_;             // the current / pending object key
  bool in_key_ = false;         // the open string is a key
  std::string* out_ = nullptr;  // where decoded string characters go (key_ or leaf string)

  // String state: escapes and UTF-8 sequences are buffered until whole.
  uint8_t esc_ = 0;         // 0 none; 1 after '\'; 2..5 hex digits of \u read + 2
  uint32_t esc_cp_ = 0;     // the \u code unit being read
  uint32_t high_ = 0;       // a high surrogate waiting for its low half (0 = none)
  uint8_t high_stage_ = 0;  // 0: want '\', 1: want 'u', then esc_ carries the digits
  uint8_t utf8_need_ = 0;   // continuation bytes still needed
  uint8_t utf8_lo_ = 0x80, utf8_hi_ = 0xBF;  // range of the next continuation byte
  char utf8_buf_[4] = {};
  uint8_t utf8_len_ = 0;

  // Number state.
  NumState num_ = NumState::kSign;
  std::string num_text_;
  size_t num_valid_ = 0;    // length of the longest prefix of num_text_ that is a number
  size_t num_shown_ = 0;    // num_valid_ when the leaf was last refreshed
  bool num_finite_ = true;  // the shown prefix fits in a double

  // Literal state.
  const char* lit_ = nullptr;  // "true", "false" or "null"
  uint8_t lit_pos_ = 0;
};

}  // namespace afm::guided
