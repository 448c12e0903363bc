// Incremental JSON prefix parser: a byte-level state machine with an explicit stack of open
// containers. The partial value is built in place, so an append costs only its new bytes.
#include "guided/partial_json.h"

#include <cstdio>
#include <utility>

namespace afm::guided {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string describe_byte(int c) {
  char buf[16];
  if (c > 0x20 && c < 0x7f) {
    std::snprintf(buf, sizeof buf, "'%c'", static_cast<char>(c));
  } else {
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  }
  return buf;
}

}  // namespace

PartialJson parse_partial_json(std::string_view prefix) {
  PartialJsonParser parser;
  parser.append(prefix);
  return parser.snapshot();
}

PartialJsonParser& PartialJsonParser::operator=(PartialJsonParser&& other) noexcept {
  if (this == &other) return *this;
  // Containers below the root live on the heap and survive the move; pointers to the root
  // value and to key_ are members of `other` and must be rebased.
  const bool root_open = !other.stack_.empty();
  const bool leaf_root = other.leaf_ == &other.snap_.value;
  const bool out_key = other.out_ == &other.key_;
  snap_ = std::move(other.snap_);
  mode_ = other.mode_;
  offset_ = other.offset_;
  stack_ = std::move(other.stack_);
  leaf_ = leaf_root ? &snap_.value : other.leaf_;
  key_ = std::move(other.key_);
  in_key_ = other.in_key_;
  out_ = out_key ? &key_ : other.out_;
  if (root_open) stack_[0] = &snap_.value;
  esc_ = other.esc_;
  esc_cp_ = other.esc_cp_;
  high_ = other.high_;
  high_stage_ = other.high_stage_;
  utf8_need_ = other.utf8_need_;
  utf8_lo_ = other.utf8_lo_;
  utf8_hi_ = other.utf8_hi_;
  std::copy(std::begin(other.utf8_buf_), std::end(other.utf8_buf_), utf8_buf_);
  utf8_len_ = other.utf8_len_;
  num_ = other.num_;
  num_text_ = std::move(other.num_text_);
  num_valid_ = other.num_valid_;
  num_shown_ = other.num_shown_;
  num_finite_ = other.num_finite_;
  lit_ = other.lit_;
  lit_pos_ = other.lit_pos_;
  other.reset();
  return *this;
}

void PartialJsonParser::reset() {
  snap_ = PartialJson{};
  mode_ = Mode::kValue;
  offset_ = 0;
  stack_.clear();
  leaf_ = nullptr;
  key_.clear();
  in_key_ = false;
  out_ = nullptr;
  esc_ = 0;
  esc_cp_ = 0;
  high_ = 0;
  high_stage_ = 0;
  utf8_need_ = 0;
  utf8_len_ = 0;
  num_ = NumState::kSign;
  num_text_.clear();
  num_valid_ = num_shown_ = 0;
  num_finite_ = true;
  lit_ = nullptr;
  lit_pos_ = 0;
}

void PartialJsonParser::append(std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  size_t i = 0;
  while (i < n && mode_ != Mode::kError) {
    if (mode_ == Mode::kString) {
      i += scan_string(p + i, n - i);  // advances offset_ itself
      continue;
    }
    if (step(p[i])) {
      ++i;
      ++offset_;
    }
  }
}

const PartialJson& PartialJsonParser::snapshot() {
  if (mode_ == Mode::kNumber) refresh_number();
  const bool number_whole = mode_ == Mode::kNumber && stack_.empty() && num_finite_ &&
                            num_valid_ == num_text_.size() && num_valid_ > 0;
  snap_.complete = mode_ == Mode::kDone || number_whole;
  return snap_;
}

void PartialJsonParser::fail(std::string_view expected, int got) {
  if (mode_ == Mode::kNumber) refresh_number();  // same value whatever the append splits
  snap_.valid = false;
  snap_.complete = false;
  snap_.error = "invalid JSON at byte " + std::to_string(offset_) + ": expected ";
  snap_.error += expected;
  if (got >= 0) snap_.error += ", got " + describe_byte(got);
  mode_ = Mode::kError;
}

bool PartialJsonParser::step(char c) {
  switch (mode_) {
    case Mode::kValue:
      if (!is_ws(c)) start_value(c);
      return true;
    case Mode::kArrayFirst:
      if (is_ws(c)) return true;
      if (c == ']') {
        close();
      } else {
        start_value(c);
      }
      return true;
    case Mode::kArrayNext:
      if (is_ws(c)) return true;
      if (c == ',') {
        mode_ = Mode::kValue;
      } else if (c == ']') {
        close();
      } else {
        fail("',' or ']' after an array element", static_cast<uint8_t>(c));
      }
      return true;
    case Mode::kObjectFirst:
    case Mode::kObjectKey:
      if (is_ws(c)) return true;
      if (c == '"') {
        start_string(/*key=*/true);
      } else if (c == '}' && mode_ == Mode::kObjectFirst) {
        close();
      } else {
        fail(mode_ == Mode::kObjectFirst ? "a string key or '}'" : "a string key",
             static_cast<uint8_t>(c));
      }
      return true;
    case Mode::kColon:
      if (is_ws(c)) return true;
      if (c == ':') {
        mode_ = Mode::kValue;
      } else {
        fail("':' after an object key", static_cast<uint8_t>(c));
      }
      return true;
    case Mode::kObjectNext:
      if (is_ws(c)) return true;
      if (c == ',') {
        mode_ = Mode::kObjectKey;
      } else if (c == '}') {
        close();
      } else {
        fail("',' or '}' after an object member", static_cast<uint8_t>(c));
      }
      return true;
    case Mode::kNumber:
      if (number_byte(c)) return true;
      end_number(c);
      return mode_ == Mode::kError;  // otherwise the delimiter is read again in the new mode
    case Mode::kLiteral:
      if (c != lit_[lit_pos_]) {
        fail(std::string("'") + lit_[lit_pos_] + "' in '" + lit_ + "'", static_cast<uint8_t>(c));
        return true;
      }
      if (lit_[++lit_pos_] == '\0') {
        insert(lit_[0] == 't' ? Json(true) : lit_[0] == 'f' ? Json(false) : Json(nullptr));
        value_done();
      }
      return true;
    case Mode::kDone:
      if (!is_ws(c)) fail("nothing but whitespace after the JSON value", static_cast<uint8_t>(c));
      return true;
    case Mode::kString:
    case Mode::kError:
      break;
  }
  return true;
}

PartialJsonParser::Json* PartialJsonParser::insert(Json v) {
  if (stack_.empty()) {
    snap_.value = std::move(v);
    return &snap_.value;
  }
  Json& parent = *stack_.back();
  if (parent.is_object()) {
    // operator[] keeps the first position of a repeated key and replaces its value, as
    // nlohmann's own parser does.
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  parent.push_back(std::move(v));
  return &parent.back();
}

void PartialJsonParser::start_value(char c) {
  switch (c) {
    case '{':
      open(Json::object());
      return;
    case '[':
      open(Json::array());
      return;
    case '"':
      start_string(/*key=*/false);
      return;
    case 't':
      lit_ = "true";
      break;
    case 'f':
      lit_ = "false";
      break;
    case 'n':
      lit_ = "null";
      break;
    default:
      if (c == '-' || is_digit(c)) {
        mode_ = Mode::kNumber;
        num_ = NumState::kSign;
        num_text_.clear();
        num_valid_ = num_shown_ = 0;
        num_finite_ = true;
        leaf_ = nullptr;
        if (c == '-') {
          num_text_.push_back(c);
        } else {
          number_byte(c);
        }
        return;
      }
      fail("a JSON value", static_cast<uint8_t>(c));
      return;
  }
  lit_pos_ = 1;
  mode_ = Mode::kLiteral;
}

void PartialJsonParser::open(Json container) {
  if (stack_.size() >= kPartialJsonMaxDepth) {
    fail("nesting at most " + std::to_string(kPartialJsonMaxDepth) + " levels deep");
    return;
  }
  const bool is_object = container.is_object();
  stack_.push_back(insert(std::move(container)));
  mode_ = is_object ? Mode::kObjectFirst : Mode::kArrayFirst;
}

void PartialJsonParser::close() {
  stack_.pop_back();
  value_done();
}

void PartialJsonParser::value_done() {
  leaf_ = nullptr;
  if (stack_.empty()) {
    mode_ = Mode::kDone;
  } else {
    mode_ = stack_.back()->is_object() ? Mode::kObjectNext : Mode::kArrayNext;
  }
}

}  // namespace afm::guided
