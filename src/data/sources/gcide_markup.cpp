// GCIDE entry markup -> plain definition text.
//
// The dictd rendering of GCIDE marks pronunciations as \Ap"ple\, etymologies and labels in
// [brackets] (nested), cross-references in {braces}, the source of each paragraph as a line
// "[1913 Webster]", and letters the text cannot hold as bracket codes ("caf['e]" = café).
// We decode the codes, drop pronunciations, brackets and source lines, and reflow each
// paragraph into one line: "Anchored, a. 1. Held by an anchor; ...".
#include <array>
#include <cctype>
#include <vector>

#include "data/sources/sources.h"
#include "data/text_clean.h"

namespace afm::data::sources {
namespace {

struct NamedCode {
  std::string_view code, text;
};

constexpr std::array<NamedCode, 20> kNamedCodes = {{
    {"ae", "æ"},    {"AE", "Æ"},   {"oe", "œ"},   {"OE", "Œ"},   {"eth", "ð"},
    {"thorn", "þ"}, {"yogh", "ȝ"}, {"deg", "°"},  {"sect", "§"}, {"root", "√"},
    {"imac", "ī"},  {"aum", "ä"},  {"asl", "a"},  {"add", "a"},  {"udd", "u"},
    {"ng", "ng"},   {"th", "th"},  {"=oo", "oo"}, {"oo^", "oo"}, {"=ae", "ǣ"},
}};

// A diacritic code mark, the letters it has a precomposed form for, and those forms.
struct MarkForms {
  char mark;
  std::string_view letters;
  std::array<std::string_view, 12> forms;
};

constexpr std::array<MarkForms, 8> kMarks = {{
    {'\'', "aeiouyAEIOUY", {"á", "é", "í", "ó", "ú", "ý", "Á", "É", "Í", "Ó", "Ú", "Ý"}},
    {'`', "aeiouAEIOU", {"à", "è", "ì", "ò", "ù", "À", "È", "Ì", "Ò", "Ù"}},
    {'^', "aeiouAEIOU", {"â", "ê", "î", "ô", "û", "Â", "Ê", "Î", "Ô", "Û"}},
    {'"', "aeiouyAEIOU", {"ä", "ë", "ï", "ö", "ü", "ÿ", "Ä", "Ë", "Ï", "Ö", "Ü"}},
    {'=', "aeiouyAEIOU", {"ā", "ē", "ī", "ō", "ū", "ȳ", "Ā", "Ē", "Ī", "Ō", "Ū"}},
    {'~', "aeionuANO", {"ã", "ẽ", "ĩ", "õ", "ñ", "ũ", "Ã", "Ñ", "Õ"}},
    {',', "cC", {"ç", "Ç"}},
    {'b', "aeiouAEIOU", {"ă", "ĕ", "ĭ", "ŏ", "ŭ", "Ă", "Ĕ", "Ĭ", "Ŏ", "Ŭ"}},  // breve: "[a^]"
}};

constexpr std::string_view kOtherMarks = ".-*";  // dot, short mark, stress: letter kept plain

std::string accented(char mark, char letter) {
  for (const MarkForms& m : kMarks) {
    if (m.mark != mark) continue;
    const size_t i = m.letters.find(letter);
    if (i != std::string_view::npos) return std::string(m.forms[i]);
  }
  return std::string(1, letter);
}

// The text a bracket code stands for, or false when `code` is not one.
bool decode_code(std::string_view code, std::string& out) {
  for (const NamedCode& c : kNamedCodes) {
    if (c.code == code) {
      out = c.text;
      return true;
    }
  }
  if (code.size() != 2) return false;
  const char a = code[0], b = code[1];
  const bool a_letter = std::isalpha(static_cast<unsigned char>(a)) != 0;
  const bool b_letter = std::isalpha(static_cast<unsigned char>(b)) != 0;
  if (a_letter && b == '^') {
    out = accented('b', a);
  } else if (b_letter && std::string_view("'`^\"=~,").find(a) != std::string_view::npos) {
    out = accented(a, b);
  } else if (b_letter && kOtherMarks.find(a) != std::string_view::npos) {
    out = std::string(1, b);
  } else {
    return false;
  }
  return true;
}

// Replaces every "[code]" that decode_code knows; other brackets stay.
std::string decode_codes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') {
      const size_t close = s.find_first_of("[]\n", i + 1);
      std::string decoded;
      if (close != std::string_view::npos && s[close] == ']' && close - i <= 7 &&
          decode_code(s.substr(i + 1, close - i - 1), decoded)) {
        out += decoded;
        i = close;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool is_source_tag(std::string_view content) {
  for (std::string_view word : {"Webster", "WordNet", "PJC", "Century Dict", "Suppl."}) {
    if (content.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// Drops pronunciations such as \Ap"ple\ (they may wrap onto the next line) and a
// "(respelling)" with quote marks right after one.
std::string drop_pronunciations(std::string_view s) {
  constexpr size_t kMaxSpan = 160;
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t close = s[i] == '\\' ? s.find('\\', i + 1) : std::string_view::npos;
    if (close == std::string_view::npos || close - i > kMaxSpan ||
        s.substr(i, close - i).find("\n\n") != std::string_view::npos) {
      out.push_back(s[i]);
      continue;
    }
    i = close;
    size_t j = i + 1;
    while (j < s.size() && s[j] == ' ') ++j;
    const size_t paren_end = j < s.size() && s[j] == '(' ? s.find_first_of(")\n", j) : j;
    if (paren_end != std::string_view::npos && paren_end > j && s[paren_end] == ')' &&
        s.substr(j, paren_end - j).find('"') != std::string_view::npos) {
      i = paren_end;
    }
  }
  return out;
}

// Drops source lines "[1913 Webster]" and the stray headword the converter sometimes leaves
// after them.
std::string drop_source_lines(std::string_view s) {
  std::string out;
  for (std::string_view line : split_lines(s)) {
    std::string_view t = trim(line);
    if (!t.empty() && t[0] == '[') {
      const size_t close = t.find(']');
      if (close != std::string_view::npos && is_source_tag(t.substr(1, close - 1))) {
        std::string_view rest = trim(t.substr(close + 1));
        line = rest.find(' ') == std::string_view::npos ? std::string_view() : rest;
      }
    }
    out.append(line).push_back('\n');
  }
  return out;
}

// Removes balanced [...] spans (nested ones with them); an unmatched bracket loses only
// itself.
std::string drop_brackets(std::string_view s) {
  std::vector<int> depth_change(s.size() + 1, 0);
  std::vector<bool> stray(s.size(), false);
  std::vector<size_t> open;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') {
      open.push_back(i);
    } else if (s[i] == ']') {
      if (open.empty()) {
        stray[i] = true;
        continue;
      }
      ++depth_change[open.back()];
      --depth_change[i + 1];
      open.pop_back();
    }
  }
  for (size_t i : open) stray[i] = true;
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    depth += depth_change[i];
    if (depth > 0 || stray[i]) continue;
    out.push_back(s[i]);
  }
  return out;
}

// Spacing left behind by removed spans: " ," -> ",", "( " -> "(", "()" -> "".
std::string tidy_punctuation(std::string s) {
  for (std::string_view p : {" ,", " .", " ;", " :"}) replace_all(s, p, p.substr(1));
  replace_all(s, "( ", "(");
  replace_all(s, " )", ")");
  replace_all(s, "()", "");
  replace_all(s, ",,", ",");
  return collapse_spaces(s);
}

}  // namespace

std::string gcide_entry_to_text(std::string_view entry) {
  std::string s = decode_codes(entry);
  s = drop_source_lines(drop_pronunciations(s));
  s = strip_reference_braces(reflow_paragraphs(drop_brackets(s)));  // references may wrap
  std::string out;
  for (std::string_view line : split_lines(s)) {
    std::string tidy = tidy_punctuation(std::string(line));
    std::string_view t = trim(tidy);
    if (t.empty() || t == "." || t == ",") continue;
    out.append(t).push_back('\n');
  }
  return out;
}

}  // namespace afm::data::sources
