// Small text utilities shared by the corpus readers: line splitting, trimming, paragraph
// reflow and the sanitising every written document goes through.
//
// Contract: all functions are pure and never throw on any input bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace afm::data {

// Lines without their "\n" (a trailing "\r" is kept). "" gives no lines; "a\n" gives {"a"}.
std::vector<std::string_view> split_lines(std::string_view text);

std::string_view trim(std::string_view s);        // spaces, tabs, "\r", "\n" at both ends
std::string_view trim_right(std::string_view s);  // the same, right end only
bool is_blank(std::string_view s);

// Valid UTF-8 out of any bytes: invalid sequences become U+FFFD; "\r\n" and "\r" become "\n";
// form feed and vertical tab become "\n"; a backspace deletes the character before it
// (terminal overstrike); other C0 and C1 control
// characters and DEL are dropped ("\n" and "\t" stay); U+00A0 (no-break space) becomes " ".
std::string sanitize_text(std::string_view text);

// Paragraphs (separated by blank lines) each joined into one line, words separated by single
// spaces; paragraphs separated by "\n".
std::string reflow_paragraphs(std::string_view text);

// Removes up to `max_spaces` leading spaces from every line and trailing spaces from all.
std::string dedent(std::string_view text, size_t max_spaces);

// Runs of blank lines become one empty line; leading and trailing blank lines are dropped.
std::string squeeze_blank_lines(std::string_view text);

// Runs of spaces and tabs become one space.
std::string collapse_spaces(std::string_view text);

// True when the line holds a box-drawing character (U+2500..U+257F): rendered table borders.
bool has_box_drawing(std::string_view line);

// "{word}" -> "word": braces around non-empty text on one line (cross-references in the
// dictionary and jargon sources); other braces, such as a literal "{}", stay.
std::string strip_reference_braces(std::string_view text);

void replace_all(std::string& s, std::string_view from, std::string_view to);

}  // namespace afm::data
