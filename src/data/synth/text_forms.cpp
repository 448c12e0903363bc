#include "data/synth/text_forms.h"

#include <array>
#include <cstdio>

namespace afm::data::synth {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

}  // namespace

Date random_date(SynthRng& rng, int first_year, int last_year) {
  Date d;
  d.year = static_cast<int>(rng.range(first_year, last_year));
  d.month = static_cast<int>(rng.range(1, 12));
  d.day = static_cast<int>(rng.range(1, days_in_month(d.year, d.month)));
  return d;
}

Date add_days(Date d, int days) {
  for (int i = 0; i < days; ++i) {
    if (++d.day > days_in_month(d.year, d.month)) {
      d.day = 1;
      if (++d.month > 12) d.month = 1, ++d.year;
    }
  }
  return d;
}

std::string_view month_name(int month) { return kMonths[static_cast<size_t>(month - 1)]; }

std::string iso_date(const Date& d) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d", d.year, d.month, d.day);
  return buf;
}

std::string month_day(const Date& d) {
  return std::string(month_name(d.month)) + " " + std::to_string(d.day);
}

std::string prose_date(const Date& d, int style) {
  const std::string month(month_name(d.month));
  const std::string day = std::to_string(d.day), year = std::to_string(d.year);
  switch (style % kDateStyles) {
    case 0:
      return month + " " + day + ", " + year;
    case 1:
      return day + " " + month + " " + year;
    case 2:
      return "the " + ordinal(d.day) + " of " + month + ", " + year;
    default:
      return month.substr(0, 3) + " " + day + ", " + year;
  }
}

std::string ordinal(int n) {
  const int tens = n % 100, ones = n % 10;
  const char* suffix = "th";
  if (tens < 11 || tens > 13) {
    if (ones == 1) suffix = "st";
    if (ones == 2) suffix = "nd";
    if (ones == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

std::string with_commas(int64_t n) {
  const bool negative = n < 0;
  std::string digits = std::to_string(negative ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return negative ? "-" + out : out;
}

std::string decimal(int64_t hundredths, bool trim) {
  const bool negative = hundredths < 0;
  const int64_t v = negative ? -hundredths : hundredths;
  std::string out = negative ? "-" : "";
  out += std::to_string(v / 100);
  const int64_t frac = v % 100;
  if (trim && frac == 0) return out;
  char buf[8];
  std::snprintf(buf, sizeof(buf), ".%02d", static_cast<int>(frac));
  out += buf;
  if (trim && out.back() == '0') out.pop_back();
  return out;
}

nlohmann::ordered_json to_number(int64_t hundredths) {
  if (hundredths % 100 == 0) return hundredths / 100;
  return static_cast<double>(hundredths) / 100.0;
}

std::string prose_money(int64_t hundredths, const Currency& c, int style) {
  std::string amount = with_commas(hundredths / 100);
  if (hundredths % 100 != 0) {
    const std::string d = decimal(hundredths);
    amount += d.substr(d.find('.'));
  }
  switch (style % kMoneyStyles) {
    case 0:
      return std::string(c.symbol) + amount;
    case 1:
      return amount + " " + std::string(c.name_plural);
    default:
      return std::string(c.code) + " " + amount;
  }
}

int64_t scale_rounded(int64_t value, int64_t num, int64_t den) {
  return (value * num + den / 2) / den;
}

}  // namespace afm::data::synth
