#include "data/text_clean.h"

#include <cstdint>

#include "base/utf8.h"

namespace afm::data {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Removes the last UTF-8 character of `out` (for a backspace).
void pop_character(std::string& out) {
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty()) out.pop_back();
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return trim_right(s);
}

bool is_blank(std::string_view s) { return trim(s).empty(); }

std::string sanitize_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c == '\r') {
      if (i + 1 >= n || p[i + 1] != '\n') out.push_back('\n');
      ++i;
    } else if (c == '\f' || c == '\v') {
      out.push_back('\n');  // a page break
      ++i;
    } else if (c == '\b') {
      pop_character(out);
      ++i;
    } else if (c < 0x20 && c != '\n' && c != '\t') {
      ++i;
    } else if (c == 0x7F) {
      ++i;
    } else {
      const size_t len = utf8_sequence_length(p + i, n - i);
      if (len == 0) {
        out += kReplacement;
        ++i;
      } else if (len == 2 && c == 0xC2 && p[i + 1] < 0xA0) {
        i += 2;  // a C1 control character
      } else if (len == 2 && c == 0xC2 && p[i + 1] == 0xA0) {
        out.push_back(' ');
        i += 2;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
    }
  }
  return out;
}

std::string reflow_paragraphs(std::string_view text) {
  std::string out, paragraph;
  auto flush = [&] {
    if (paragraph.empty()) return;
    if (!out.empty()) out.push_back('\n');
    out += paragraph;
    paragraph.clear();
  };
  for (std::string_view line : split_lines(text)) {
    std::string_view t = trim(line);
    if (t.empty()) {
      flush();
      continue;
    }
    if (!paragraph.empty()) paragraph.push_back(' ');
    paragraph.append(t);
  }
  flush();
  return collapse_spaces(out);
}

std::string dedent(std::string_view text, size_t max_spaces) {
  std::string out;
  out.reserve(text.size());
  for (std::string_view line : split_lines(text)) {
    size_t k = 0;
    while (k < max_spaces && k < line.size() && line[k] == ' ') ++k;
    out.append(trim_right(line.substr(k)));
    out.push_back('\n');
  }
  return out;
}

std::string squeeze_blank_lines(std::string_view text) {
  std::string out;
  bool pending_blank = false;
  for (std::string_view line : split_lines(text)) {
    line = trim_right(line);
    if (line.empty()) {
      pending_blank = !out.empty();
      continue;
    }
    if (pending_blank) out.push_back('\n');
    pending_blank = false;
    out.append(line);
    out.push_back('\n');
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string collapse_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_space = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t';
    if (space && in_space) continue;
    out.push_back(space ? ' ' : c);
    in_space = space;
  }
  return out;
}

bool has_box_drawing(std::string_view line) {
  // U+2500..U+257F encode as E2 94 80 .. E2 95 BF.
  for (size_t i = 0; i + 2 < line.size(); ++i) {
    if (static_cast<unsigned char>(line[i]) == 0xE2) {
      const auto b = static_cast<unsigned char>(line[i + 1]);
      if (b == 0x94 || b == 0x95) return true;
    }
  }
  return false;
}

namespace {

std::string strip_innermost_braces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t close =
        text[i] == '{' ? text.find_first_of("{}\n", i + 1) : std::string_view::npos;
    if (close != std::string_view::npos && close > i + 1 && text[close] == '}') {
      out.append(text.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

}  // namespace

std::string strip_reference_braces(std::string_view text) {
  // Nested references ("{{Orycteropus afer}}") lose one level per pass.
  std::string out = strip_innermost_braces(text);
  for (int pass = 0; pass < 4; ++pass) {
    std::string next = strip_innermost_braces(out);
    if (next == out) break;
    out = std::move(next);
  }
  return out;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace afm::data
