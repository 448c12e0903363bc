#include "server/model_catalog.h"

#include <algorithm>

#include "base/error.h"

namespace afm::server {

ModelCatalog::ModelCatalog(std::vector<ServedModel> models) : models_(std::move(models)) {
  AFM_CHECK(!models_.empty());
}

std::vector<ServedModel> ModelCatalog::list() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return models_;
}

std::optional<ServedModel> ModelCatalog::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const ServedModel& m : models_) {
    if (m.id == id) return m;
  }
  return std::nullopt;
}

std::string ModelCatalog::base_id() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return models_.front().id;
}

bool ModelCatalog::add(ServedModel model) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const ServedModel& m : models_) {
    if (m.id == model.id) return false;
  }
  models_.push_back(std::move(model));
  return true;
}

std::optional<ServedModel> ModelCatalog::remove_adapter(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(models_.begin() + 1, models_.end(),
                         [&](const ServedModel& m) { return m.id == id && m.adapter; });
  if (it == models_.end()) return std::nullopt;
  ServedModel removed = std::move(*it);
  models_.erase(it);
  return removed;
}

}  // namespace afm::server
