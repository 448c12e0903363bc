// GBNF text -> syntax tree (gbnf_ast.h). A recursive-descent parser whose recursion is bounded
// by kMaxDepth (groups and stacked postfix operators), so untrusted text cannot exhaust the
// stack; everything else is loops.
#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "base/error.h"
#include "guided/gbnf_ast.h"

namespace afm::guided::gbnf {
namespace {

constexpr uint32_t kMaxCount = 100000;
constexpr int kMaxDepth = 200;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string show(std::string_view text, size_t pos) {
  if (pos >= text.size()) return "the end of the text";
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c == '\n' || c == '\r') return "the end of the line";
  if (c > 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  return buf;
}

void append_utf8(std::string& s, uint32_t cp) { s += encode_code_point(cp, CharEncoding::kUtf8); }

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  Ast run() {
    skip_space(true);
    while (!eof()) {
      parse_rule();
      skip_space(true);
    }
    for (const Rule& r : ast_.rules) {
      if (r.used && !r.defined) error_at(r.used_at, "undefined rule '" + r.name + "'");
    }
    return std::move(ast_);
  }

 private:
  bool eof(size_t k = 0) const { return pos_ + k >= t_.size(); }
  char peek(size_t k = 0) const { return eof(k) ? '\0' : t_[pos_ + k]; }
  Location loc() const { return {line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }
  void advance() {
    if (t_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  [[noreturn]] void expected(const std::string& what) {
    error_at(loc(), "expected " + what + ", got " + show(t_, pos_));
  }

  // Spaces, tabs and '#' comments; line breaks too when `newlines`.
  void skip_space(bool newlines) {
    while (!eof()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        advance();
      } else if (c == '#') {
        while (!eof() && peek() != '\n' && peek() != '\r') advance();
      } else {
        break;
      }
    }
  }

  bool at_definition() const {  // the text at pos_ is "name ::=" (after the name)
    size_t p = pos_;
    while (p < t_.size() && (t_[p] == ' ' || t_[p] == '\t')) ++p;
    return t_.substr(p).starts_with("::=");
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!eof() && is_name_char(peek())) advance();
    return std::string(t_.substr(start, pos_ - start));
  }

  uint32_t rule_index(const std::string& name) {
    auto [it, inserted] = index_.emplace(name, static_cast<uint32_t>(ast_.rules.size()));
    if (inserted) {
      ast_.rules.emplace_back();
      ast_.rules.back().name = name;
    }
    return it->second;
  }

  void parse_rule() {
    const Location at = loc();
    if (!is_name_char(peek())) expected("a rule name (letters, digits and '-')");
    const std::string name = parse_name();
    skip_space(false);
    if (!t_.substr(pos_).starts_with("::=")) expected("'::=' after the rule name '" + name + "'");
    pos_ += 3;
    const uint32_t id = rule_index(name);
    if (ast_.rules[id].defined) {
      const Location first = ast_.rules[id].defined_at;
      error_at(at, "rule '" + name + "' is defined twice (first at line " +
                       std::to_string(first.line) + ")");
    }
    ast_.rules[id].defined = true;
    ast_.rules[id].defined_at = at;
    skip_space(true);
    Node body = parse_alternatives(/*nested=*/false, 0);
    ast_.rules[id].body = std::move(body);  // index again: parsing may have added rules
    if (!eof() && peek() != '\n' && peek() != '\r') {
      if (peek() == '_') {
        error_at(loc(), "'_' is not allowed in rule names (use letters, digits and '-')");
      }
      expected("a symbol, '|' or the end of the rule");
    }
  }

  Node parse_alternatives(bool nested, int depth) {
    Node alt(Node::Kind::kAlt, loc());
    alt.kids.push_back(parse_sequence(nested, depth));
    while (true) {
      if (peek() == '|') {
        advance();
        skip_space(true);
        alt.kids.push_back(parse_sequence(nested, depth));
        continue;
      }
      if (!nested && (peek() == '\n' || peek() == '\r')) {
        // A following line that starts with '|' continues the rule.
        const size_t pos = pos_, line_start = line_start_;
        const uint32_t line = line_;
        skip_space(true);
        if (peek() == '|') continue;
        pos_ = pos;
        line_ = line;
        line_start_ = line_start;
      }
      break;
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  Node parse_sequence(bool nested, int depth) {
    Node seq(Node::Kind::kSeq, loc());
    while (!eof()) {
      const Location at = loc();
      const char c = peek();
      Node item;
      if (c == '"') {
        item = parse_string();
      } else if (c == '[') {
        item = parse_class();
      } else if (c == '.') {
        advance();
        item = Node(Node::Kind::kClass, at);
        item.chars = CodePointSet::all();
      } else if (c == '(') {
        if (depth + 1 > kMaxDepth) unsupported_at(at, "nesting deeper than 200");
        advance();
        skip_space(true);
        item = parse_alternatives(/*nested=*/true, depth + 1);
        skip_space(true);
        if (peek() != ')') {
          expected("')' to close the '(' at line " + std::to_string(at.line) + ", column " +
                   std::to_string(at.column));
        }
        advance();
      } else if (is_name_char(c)) {
        const std::string name = parse_name();
        if (at_definition()) {
          error_at(at, nested ? "missing ')' before the rule definition '" + name + " ::='"
                              : "a rule definition ('" + name +
                                    " ::=') must start on a new line after a rule body");
        }
        item = Node(Node::Kind::kRef, at);
        item.rule = rule_index(name);
        Rule& r = ast_.rules[item.rule];
        if (!r.used) {
          r.used = true;
          r.used_at = at;
        }
      } else if (c == '<' || (c == '!' && peek(1) == '<')) {
        unsupported_at(at, "token references (<...>) are not supported: grammars match bytes");
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        error_at(at, std::string("'") + c + "' must follow a symbol");
      } else {
        break;
      }
      skip_space(nested);
      int item_depth = depth;
      while (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') {
        if (++item_depth > kMaxDepth) unsupported_at(loc(), "nesting deeper than 200");
        item = parse_postfix(std::move(item), nested);
        skip_space(nested);
      }
      seq.kids.push_back(std::move(item));
    }
    if (seq.kids.size() == 1) return std::move(seq.kids[0]);
    return seq;
  }

  Node parse_postfix(Node item, bool nested) {
    Node rep(Node::Kind::kRepeat, loc());
    const char c = peek();
    advance();
    if (c == '*' || c == '+' || c == '?') {
      rep.min = c == '+' ? 1 : 0;
      rep.max = c == '?' ? 1 : kUnbounded;
    } else {
      skip_space(nested);
      rep.min = parse_count();
      skip_space(nested);
      rep.max = rep.min;
      if (peek() == ',') {
        advance();
        skip_space(nested);
        rep.max = (peek() >= '0' && peek() <= '9') ? parse_count() : kUnbounded;
        skip_space(nested);
      }
      if (peek() != '}') expected("'}' to end the repetition count");
      advance();
      if (rep.max < rep.min) error_at(rep.at, "repetition {m,n} with n smaller than m");
    }
    rep.kids.push_back(std::move(item));
    return rep;
  }

  uint32_t parse_count() {
    if (!(peek() >= '0' && peek() <= '9')) expected("a number in the repetition count");
    const Location at = loc();
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = std::min<uint64_t>(v * 10 + static_cast<uint64_t>(peek() - '0'), uint64_t{1} << 40);
      advance();
    }
    if (v > kMaxCount) unsupported_at(at, "repetition count above 100000");
    return static_cast<uint32_t>(v);
  }

  // One code point of a literal or class: an escape or a UTF-8 character of the text.
  uint32_t parse_char() {
    const Location at = loc();
    const unsigned char c = static_cast<unsigned char>(peek());
    if (c == '\\') {
      advance();
      if (eof()) expected("an escape character after '\\'");
      const char e = peek();
      int digits = 0;
      switch (e) {
        case 'x':
          digits = 2;
          break;
        case 'u':
          digits = 4;
          break;
        case 'U':
          digits = 8;
          break;
        case 't':
          advance();
          return '\t';
        case 'r':
          advance();
          return '\r';
        case 'n':
          advance();
          return '\n';
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
          advance();
          return static_cast<uint8_t>(e);
        default:
          error_at(at, "unknown escape '\\" + std::string(1, e) +
                           "' (known: \\x \\u \\U \\t \\r \\n \\\\ \\\" \\[ \\] \\-)");
      }
      advance();
      uint32_t cp = 0;
      for (int i = 0; i < digits; ++i) {
        const int h = hex_digit(peek());
        if (eof() || h < 0) expected(std::to_string(digits) + " hex digits after '\\" + e + "'");
        cp = cp * 16 + static_cast<uint32_t>(h);
        advance();
      }
      if (cp > kMaxCodePoint || (cp >= 0xD800 && cp <= 0xDFFF)) {
        error_at(at, "escape names no Unicode character (surrogate or above U+10FFFF)");
      }
      return cp;
    }
    // Raw UTF-8 from the grammar text, checked as strictly as any UTF-8 input.
    int need = 0;
    uint32_t cp = c;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2, cp = c & 0x0F, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3, cp = c & 0x07, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    } else if (c >= 0x80) {
      error_at(at, "invalid UTF-8 in the grammar text");
    }
    advance();
    for (int i = 0; i < need; ++i) {
      const unsigned char k = static_cast<unsigned char>(peek());
      if (eof() || k < lo || k > hi) error_at(at, "invalid UTF-8 in the grammar text");
      cp = (cp << 6) | (k & 0x3F);
      lo = 0x80, hi = 0xBF;
      advance();
    }
    return cp;
  }

  Node parse_string() {
    Node lit(Node::Kind::kLiteral, loc());
    advance();  // '"'
    while (true) {
      if (eof()) error_at(lit.at, "unterminated string literal");
      if (peek() == '"') break;
      append_utf8(lit.text, parse_char());
    }
    advance();
    return lit;
  }

  Node parse_class() {
    Node cls(Node::Kind::kClass, loc());
    advance();  // '['
    const bool negate = peek() == '^';
    if (negate) advance();
    while (true) {
      if (eof()) error_at(cls.at, "unterminated character class");
      if (peek() == ']') break;
      const Location at = loc();
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (peek() == '-' && !eof(1) && peek(1) != ']') {
        advance();
        hi = parse_char();
        if (hi < lo) error_at(at, "character range out of order (end below start)");
      }
      cls.chars.add(lo, hi);
    }
    advance();
    if (negate) cls.chars = cls.chars.complement();
    return cls;
  }

  std::string_view t_;
  size_t pos_ = 0, line_start_ = 0;
  uint32_t line_ = 1;
  Ast ast_;
  std::unordered_map<std::string, uint32_t> index_;
};

}  // namespace

Ast parse(std::string_view text) { return Parser(text).run(); }

void error_at(Location at, const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument,
              "gbnf:" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + what);
}

void unsupported_at(Location at, const std::string& what) {
  throw_error(ErrorCode::kUnsupported,
              "gbnf:" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + what);
}

}  // namespace afm::guided::gbnf
