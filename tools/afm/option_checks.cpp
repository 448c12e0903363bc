#include "option_checks.h"

#include <cmath>
#include <cstdio>
#include <functional>

namespace afm::cli {
namespace {

// Readable bounds: "0.5", "1", "65535" (never a 300-digit rendering of the largest double).
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// A validator for numeric values; the rule gets the parsed value and returns "" when it holds.
CLI::Validator numeric(const std::string& description, std::function<std::string(double)> rule) {
  return CLI::Validator(
      [rule = std::move(rule)](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v)) {
          return "must be a finite number, got '" + text + "'";
        }
        return rule(v);
      },
      description);
}

std::string got(const std::string& rule, double v) {
  return "must be " + rule + ", got " + number(v);
}

}  // namespace

CLI::Validator finite_number() {
  return numeric("finite", [](double) { return std::string(); });
}

CLI::Validator at_least(double min) {
  return numeric(">= " + number(min),
                 [min](double v) { return v >= min ? "" : got(">= " + number(min), v); });
}

CLI::Validator above(double min) {
  return numeric("> " + number(min),
                 [min](double v) { return v > min ? "" : got("> " + number(min), v); });
}

CLI::Validator between(double min, double max) {
  const std::string rule = "in [" + number(min) + ", " + number(max) + "]";
  return numeric(rule, [=](double v) { return v >= min && v <= max ? "" : got(rule, v); });
}

CLI::Validator above_up_to(double min, double max) {
  const std::string rule = "in (" + number(min) + ", " + number(max) + "]";
  return numeric(rule, [=](double v) { return v > min && v <= max ? "" : got(rule, v); });
}

CLI::Validator token_limit() {
  return numeric("-1 or >= 1",
                 [](double v) { return v == -1 || v >= 1 ? "" : got("-1 (no limit) or >= 1", v); });
}

CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; },
      "not empty");
}

void usage_error(const std::string& message) { throw CLI::ValidationError(message); }

}  // namespace afm::cli
