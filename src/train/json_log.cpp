#include "train/json_log.h"

#include <filesystem>
#include <iostream>

#include "base/error.h"

namespace afm::train {
namespace {

bool ends_without_newline(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return false;
  in.seekg(-1, std::ios::end);
  return in.get() != '\n';
}

}  // namespace

JsonLog::JsonLog(const std::string& dir, bool to_stdout) : to_stdout_(to_stdout) {
  std::filesystem::create_directories(dir);
  const auto path = std::filesystem::path(dir) / "log.jsonl";
  const bool cut_short = ends_without_newline(path);  // a killed run's last record
  file_.open(path, std::ios::app);
  if (cut_short) file_ << "\n";
  if (!file_) throw_error(ErrorCode::kIo, "cannot open " + dir + "/log.jsonl");
}

void JsonLog::write(const nlohmann::json& record) {
  file_ << record.dump() << "\n";
  file_.flush();
  if (to_stdout_) std::cout << record.dump() << std::endl;
}

}  // namespace afm::train
