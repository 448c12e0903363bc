// Strings and numbers of the incremental JSON prefix parser (partial_json.h). Escapes and
// UTF-8 sequences are buffered until whole, so a shown string is always a prefix of the final
// one; numbers show their longest prefix that is itself a JSON number.
#include "guided/partial_json.h"

namespace afm::guided {
namespace {

int hex_digit(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Plain string bytes that need no state: everything but '"', '\\', controls and non-ASCII.
bool plain(uint8_t c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

}  // namespace

void PartialJsonParser::start_string(bool key) {
  in_key_ = key;
  if (key) {
    key_.clear();
    out_ = &key_;
  } else {
    leaf_ = insert(Json(std::string()));
    out_ = &leaf_->get_ref<std::string&>();
  }
  esc_ = 0;
  high_ = 0;
  high_stage_ = 0;
  utf8_need_ = 0;
  utf8_len_ = 0;
  mode_ = Mode::kString;
}

size_t PartialJsonParser::scan_string(const char* p, size_t n) {
  size_t j = 0;
  while (j < n && mode_ == Mode::kString) {
    if (esc_ == 0 && high_ == 0 && utf8_need_ == 0) {
      size_t k = j;
      while (k < n && plain(static_cast<uint8_t>(p[k]))) ++k;
      if (k > j) {
        out_->append(p + j, k - j);
        offset_ += k - j;
        j = k;
        continue;
      }
    }
    string_byte(static_cast<uint8_t>(p[j]));
    if (mode_ == Mode::kError) return j;
    ++j;
    ++offset_;
  }
  return j;
}

void PartialJsonParser::string_byte(uint8_t c) {
  if (utf8_need_ > 0) {
    if (c < utf8_lo_ || c > utf8_hi_) {
      fail("a UTF-8 continuation byte", c);
      return;
    }
    utf8_buf_[utf8_len_++] = static_cast<char>(c);
    utf8_lo_ = 0x80;
    utf8_hi_ = 0xBF;
    if (--utf8_need_ == 0) {
      out_->append(utf8_buf_, utf8_len_);
      utf8_len_ = 0;
    }
    return;
  }
  if (high_ != 0 && esc_ == 0) {  // a high surrogate must be followed by "\u" + low half
    if (c != (high_stage_ == 0 ? '\\' : 'u')) {
      fail("a \\u low surrogate after a high surrogate", c);
      return;
    }
    if (++high_stage_ == 2) {
      esc_ = 2;
      esc_cp_ = 0;
    }
    return;
  }
  if (esc_ == 1) {
    esc_ = 0;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out_->push_back(static_cast<char>(c));
        return;
      case 'b':
        out_->push_back('\b');
        return;
      case 'f':
        out_->push_back('\f');
        return;
      case 'n':
        out_->push_back('\n');
        return;
      case 'r':
        out_->push_back('\r');
        return;
      case 't':
        out_->push_back('\t');
        return;
      case 'u':
        esc_ = 2;
        esc_cp_ = 0;
        return;
      default:
        esc_ = 1;
        fail("an escape character (one of \"\\/bfnrtu)", c);
        return;
    }
  }
  if (esc_ >= 2) {
    const int h = hex_digit(c);
    if (h < 0) {
      fail("a hex digit in a \\u escape", c);
      return;
    }
    esc_cp_ = esc_cp_ * 16 + static_cast<uint32_t>(h);
    if (++esc_ < 6) return;
    esc_ = 0;
    const uint32_t cp = esc_cp_;
    if (high_ != 0) {
      if (cp < 0xDC00 || cp > 0xDFFF) {
        fail("a low surrogate (\\uDC00-\\uDFFF) after a high surrogate", c);
        return;
      }
      emit_code_point(0x10000 + ((high_ - 0xD800) << 10) + (cp - 0xDC00));
      high_ = 0;
      high_stage_ = 0;
    } else if (cp >= 0xD800 && cp <= 0xDBFF) {
      high_ = cp;
      high_stage_ = 0;
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      fail("no low surrogate without a high surrogate before it", c);
    } else {
      emit_code_point(cp);
    }
    return;
  }
  if (c == '"') {
    if (in_key_) {
      mode_ = Mode::kColon;
    } else {
      value_done();
    }
    out_ = nullptr;
    return;
  }
  if (c == '\\') {
    esc_ = 1;
    return;
  }
  if (c < 0x20) {
    fail("no control characters in a string (escape them)", c);
    return;
  }
  if (c < 0x80) {
    out_->push_back(static_cast<char>(c));
    return;
  }
  // UTF-8 lead bytes (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
  utf8_lo_ = 0x80;
  utf8_hi_ = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    utf8_need_ = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    utf8_need_ = 2;
    if (c == 0xE0) utf8_lo_ = 0xA0;
    if (c == 0xED) utf8_hi_ = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    utf8_need_ = 3;
    if (c == 0xF0) utf8_lo_ = 0x90;
    if (c == 0xF4) utf8_hi_ = 0x8F;
  } else {
    fail("a valid UTF-8 lead byte", c);
    return;
  }
  utf8_buf_[0] = static_cast<char>(c);
  utf8_len_ = 1;
}

void PartialJsonParser::emit_code_point(uint32_t cp) {
  std::string& s = *out_;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool PartialJsonParser::number_byte(char c) {
  const bool digit = c >= '0' && c <= '9';
  const bool exp = c == 'e' || c == 'E';
  NumState next = num_;
  switch (num_) {
    case NumState::kSign:
      if (!digit) return false;
      next = c == '0' ? NumState::kZero : NumState::kInt;
      break;
    case NumState::kZero:
      if (digit) {
        fail("no leading zeros in a number", static_cast<uint8_t>(c));
        return true;
      }
      if (c != '.' && !exp) return false;
      next = c == '.' ? NumState::kDot : NumState::kExp;
      break;
    case NumState::kInt:
      if (digit) {
        next = NumState::kInt;
      } else if (c == '.' || exp) {
        next = c == '.' ? NumState::kDot : NumState::kExp;
      } else {
        return false;
      }
      break;
    case NumState::kDot:
      if (!digit) return false;
      next = NumState::kFrac;
      break;
    case NumState::kFrac:
      if (!digit && !exp) return false;
      next = digit ? NumState::kFrac : NumState::kExp;
      break;
    case NumState::kExp:
      if (c != '+' && c != '-' && !digit) return false;
      next = digit ? NumState::kExpDigits : NumState::kExpSign;
      break;
    case NumState::kExpSign:
    case NumState::kExpDigits:
      if (!digit) return false;
      next = NumState::kExpDigits;
      break;
  }
  num_ = next;
  num_text_.push_back(c);
  if (num_ == NumState::kZero || num_ == NumState::kInt || num_ == NumState::kFrac ||
      num_ == NumState::kExpDigits) {
    num_valid_ = num_text_.size();
    if (leaf_ == nullptr) leaf_ = insert(Json());  // value filled in by refresh_number()
  }
  return true;
}

void PartialJsonParser::end_number(char c) {
  if (num_valid_ != num_text_.size() || num_valid_ == 0) {
    fail("a digit", static_cast<uint8_t>(c));
    return;
  }
  refresh_number();
  if (!num_finite_) {
    fail("a number within the range of a double (it ends here)");
    return;
  }
  value_done();
}

void PartialJsonParser::refresh_number() {
  if (leaf_ == nullptr || num_shown_ == num_valid_) return;
  num_shown_ = num_valid_;
  // nlohmann's own reader, so a finished number equals what nlohmann::json::parse gives.
  Json v = Json::parse(num_text_.data(), num_text_.data() + num_valid_, nullptr,
                       /*allow_exceptions=*/false);
  num_finite_ = !v.is_discarded();
  *leaf_ = num_finite_ ? std::move(v) : Json();
}

}  // namespace afm::guided
