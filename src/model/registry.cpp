#include "model/registry.h"

#include <algorithm>
#include <map>

#include "base/error.h"

namespace afm::model {
namespace {

std::map<std::string, ArchLoader>& arch_table() {
  static std::map<std::string, ArchLoader> table;
  return table;
}

}  // namespace

void SequenceState::truncate(int64_t n) {
  AFM_CHECK(n >= 0 && n <= n_past_);
  AFM_CHECK(n == 0 || n == n_past_ || n >= min_exact_truncate());
  n_past_ = n;
}

bool register_arch(const std::string& name, ArchLoader loader) {
  return arch_table().emplace(name, loader).second;
}

std::vector<std::string> registered_archs() {
  std::vector<std::string> names;
  for (const auto& [name, loader] : arch_table()) names.push_back(name);
  return names;
}

std::unique_ptr<Model> load_model(std::shared_ptr<const gguf::File> file) {
  const std::string arch = file->architecture();
  const auto it = arch_table().find(arch);
  if (it == arch_table().end()) {
    std::string known;
    for (const std::string& name : registered_archs()) known += (known.empty() ? "" : ", ") + name;
    throw_error(ErrorCode::kUnsupported, file->path() + ": architecture '" + arch +
                                             "' is not supported (supported: " + known + ")");
  }
  return it->second(std::move(file));
}

std::unique_ptr<Model> load_model(const std::string& path) {
  return load_model(std::make_shared<const gguf::File>(gguf::File::open(path)));
}

}  // namespace afm::model
