// Unicode property escapes of ECMA-262 regexes with the `u` flag (`\p{..}`, `\P{..}`), as code
// point sets for the regex parser.
//
// Supported: every General_Category value by its short or long name or alias (`L`, `Letter`,
// `Lu`, `digit`, `punct`...), bare or as `General_Category=..` / `gc=..`, and the binary
// properties `ASCII`, `Any` and `Assigned`. Scripts and the other binary properties are not
// supported (nullopt: the caller names the construct in its error).
//
// Version independence: the table (unicode_categories.inc) holds the assigned code points of
// one Unicode version. A later version may assign a code point that is unassigned there, so no
// set returned here holds an unassigned code point: `\p{C}` is Cc|Cf|Co (surrogates are never
// characters), `\P{L}` is the assigned code points that are not letters, and `\p{Cn}` is
// refused (nullopt). Every set is therefore a subset of what any later version says, which
// keeps generated text valid for validators on newer Unicode data (narrower, never wider).
// Thread safety: pure functions over constant tables.
#pragma once

#include <optional>
#include <string_view>

#include "guided/char_classes.h"

namespace afm::guided {

// The set `\p{name}` denotes, or nullopt when `name` is unknown or unsupported.
std::optional<CodePointSet> unicode_property(std::string_view name);

// Every code point the table assigns (Unicode 14.0.0; surrogates are never encoded).
const CodePointSet& assigned_code_points();

}  // namespace afm::guided
