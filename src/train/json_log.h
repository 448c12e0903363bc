// The training runs' log: one JSON record per line in <dir>/log.jsonl, appended across resumed
// runs (a killed run's cut-off last record is closed with a newline first), each record
// flushed at once; optionally echoed to stdout for scripts (`--json`).
// Errors: afm::Error(kIo) when the file cannot be opened. Not thread-safe.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace afm::train {

class JsonLog {
 public:
  JsonLog(const std::string& dir, bool to_stdout);
  void write(const nlohmann::json& record);

 private:
  std::ofstream file_;
  bool to_stdout_;
};

}  // namespace afm::train
