// Typed access to a Hugging Face config.json; missing or mistyped keys are errors naming them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace afm::hf {

class HfConfig {
 public:
  static HfConfig load(const std::string& path);  // Error(kIo | kFormat) naming the file
  explicit HfConfig(nlohmann::json j, std::string path)
      : j_(std::move(j)), path_(std::move(path)) {}

  bool has(const std::string& key) const { return j_.contains(key) && !j_[key].is_null(); }
  uint64_t get_uint(const std::string& key) const;
  uint64_t get_uint(const std::string& key, uint64_t fallback) const;
  double get_float(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // The first entry of "architectures" (e.g. "LlamaForCausalLM").
  std::string architecture() const;
  const nlohmann::json& json() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void bad(const std::string& key, const char* wanted) const;
  nlohmann::json j_;
  std::string path_;
};

}  // namespace afm::hf
