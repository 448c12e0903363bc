#include "hf/config.h"

#include "base/error.h"
#include "base/mapped_file.h"

namespace afm::hf {

HfConfig HfConfig::load(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(read_file_to_string(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw_error(ErrorCode::kFormat, path + ": not a valid JSON object");
  }
  return HfConfig(std::move(j), path);
}

void HfConfig::bad(const std::string& key, const char* wanted) const {
  throw_error(ErrorCode::kFormat, path_ + ": key '" + key + "' " + wanted);
}

uint64_t HfConfig::get_uint(const std::string& key) const {
  if (!has(key)) bad(key, "is missing");
  if (!j_[key].is_number_unsigned()) bad(key, "must be a non-negative integer");
  return j_[key].get<uint64_t>();
}

uint64_t HfConfig::get_uint(const std::string& key, uint64_t fallback) const {
  return has(key) ? get_uint(key) : fallback;
}

double HfConfig::get_float(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_number()) bad(key, "must be a number");
  return j_[key].get<double>();
}

bool HfConfig::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_boolean()) bad(key, "must be true or false");
  return j_[key].get<bool>();
}

std::string HfConfig::get_string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  if (!j_[key].is_string()) bad(key, "must be a string");
  return j_[key].get<std::string>();
}

std::string HfConfig::architecture() const {
  if (!has("architectures") || !j_["architectures"].is_array() || j_["architectures"].empty() ||
      !j_["architectures"][0].is_string()) {
    bad("architectures", "must be a non-empty list of names");
  }
  return j_["architectures"][0].get<std::string>();
}

}  // namespace afm::hf
