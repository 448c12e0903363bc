// How the synthetic generators write dates, amounts and numbers in prose, and the canonical
// forms their answers use. Integer arithmetic only (amounts are in hundredths), so output is
// identical on every platform.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "data/synth/synth_rng.h"

namespace afm::data::synth {

struct Date {
  int year = 2024, month = 1, day = 1;
};

Date random_date(SynthRng& rng, int first_year, int last_year);
Date add_days(Date d, int days);
std::string_view month_name(int month);  // 1..12
std::string iso_date(const Date& d);     // "2024-03-05"
// The date as prose in one of kDateStyles styles: "March 5, 2024", "5 March 2024",
// "the 5th of March, 2024", "Mar 5, 2024".
inline constexpr int kDateStyles = 4;
std::string prose_date(const Date& d, int style);
std::string month_day(const Date& d);  // "March 5"

std::string ordinal(int n);          // "1st", "22nd", "13th"
std::string with_commas(int64_t n);  // "-1,234,567"
// Hundredths as a decimal: 123450 -> "1234.50"; trim drops a ".00" or a trailing zero.
std::string decimal(int64_t hundredths, bool trim = false);
// Hundredths as a JSON number: an integer when whole (2400, not 2400.0), else the double
// nearest the decimal (correctly rounded division, the same everywhere; printed shortest).
nlohmann::ordered_json to_number(int64_t hundredths);

struct Currency {
  std::string_view code, symbol, name_plural;
};
inline constexpr Currency kCurrencies[] = {
    {"USD", "$", "dollars"}, {"EUR", "€", "euros"}, {"GBP", "£", "pounds"}};
// An amount as prose in one of kMoneyStyles styles: "$1,234.50", "1,234.50 dollars",
// "USD 1,234.50".
inline constexpr int kMoneyStyles = 3;
std::string prose_money(int64_t hundredths, const Currency& c, int style);

// round(value * num / den) for non-negative value, num, den > 0 (half rounds up).
int64_t scale_rounded(int64_t value, int64_t num, int64_t den);

}  // namespace afm::data::synth
