// Range checks for command-line values, with messages that name the rule and the value:
// "--temp: must be >= 0, got -1" (main.cpp prints it as "--temp must be >= 0, got -1").
// They run while parsing, so a bad value is a usage error (exit 2) before any model loads.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace afm::cli {

// Every numeric check also refuses inf and nan.
CLI::Validator finite_number();
CLI::Validator at_least(double min);                 // value >= min
CLI::Validator above(double min);                    // value > min
CLI::Validator between(double min, double max);      // min <= value <= max
CLI::Validator above_up_to(double min, double max);  // min < value <= max
// A token budget: -1 (no limit) or at least 1.
CLI::Validator token_limit();
// A non-empty string ("" is refused: an empty prompt has nothing to answer).
CLI::Validator not_empty();

// Throws the usage error for a rule CLI11 cannot express ("generate needs -p PROMPT or -f FILE"):
// exit 2 and one line, as for a failed check.
[[noreturn]] void usage_error(const std::string& message);

}  // namespace afm::cli
