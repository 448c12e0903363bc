// General Category sets from the generated table; see unicode_properties.h.
#include "guided/unicode_properties.h"

#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace afm::guided {

namespace {

struct CategoryRange {
  uint32_t lo, hi;
};
struct CategoryTable {
  const char* name;  // two letters
  const CategoryRange* ranges;
  size_t size;
};

#include "guided/unicode_categories.inc"

// Long names and aliases of General_Category values (Unicode's PropertyValueAliases.txt) ->
// the letters that select the table's categories: "L" selects every category starting with L.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"Letter", "L"}, {"Cased_Letter", "LC"}, {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"}, {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"}, {"Mark", "M"}, {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"}, {"Number", "N"}, {"Decimal_Number", "Nd"},
    {"digit", "Nd"}, {"Letter_Number", "Nl"}, {"Other_Number", "No"}, {"Punctuation", "P"},
    {"punct", "P"}, {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"}, {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"}, {"Symbol", "S"},
    {"Math_Symbol", "Sm"}, {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"}, {"Separator", "Z"}, {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"},
    {"Control", "Cc"}, {"cntrl", "Cc"}, {"Format", "Cf"}, {"Surrogate", "Cs"},
    {"Private_Use", "Co"},
};

// The union of the table's categories whose two-letter name `selects`; nullopt when none does.
template <typename Selects>
std::optional<CodePointSet> union_of(Selects selects) {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  bool any = false;
  for (const CategoryTable& t : kCategories) {
    if (!selects(std::string_view(t.name))) continue;
    any = true;
    for (size_t i = 0; i < t.size; ++i) ranges.emplace_back(t.ranges[i].lo, t.ranges[i].hi);
  }
  if (!any) return std::nullopt;
  CodePointSet out;
  out.add(ranges);
  return out;
}

// The categories `code` selects ("L": every L category, "Lu", "LC": Lu Ll Lt). Unassigned code
// points (Cn) are never in the table.
std::optional<CodePointSet> categories(std::string_view code) {
  return union_of([&](std::string_view name) {
    if (code.size() == 1) return name[0] == code[0];
    if (code == "LC") return name == "Lu" || name == "Ll" || name == "Lt";
    return name == code;
  });
}

std::optional<CodePointSet> general_category(std::string_view value) {
  for (auto [alias, code] : kAliases) {
    if (value == alias) return categories(code);
  }
  if (value.size() > 2 || value == "Cn") return std::nullopt;  // Cn: see the header
  return categories(value);
}

}  // namespace

const CodePointSet& assigned_code_points() {
  static const CodePointSet assigned = *union_of([](std::string_view) { return true; });
  return assigned;
}

std::optional<CodePointSet> unicode_property(std::string_view name) {
  for (std::string_view prefix : {"General_Category=", "gc="}) {
    if (name.substr(0, prefix.size()) == prefix) return general_category(name.substr(prefix.size()));
  }
  if (name == "ASCII") return CodePointSet::of(0, 0x7F);
  if (name == "Any") return CodePointSet::all();
  if (name == "Assigned") return assigned_code_points();
  return general_category(name);
}

}  // namespace afm::guided
