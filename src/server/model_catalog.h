// The ids a server answers for: the base model first, then adapters ("BASE:NAME"), which the
// adapter admin endpoints (adapter_admin.h) add and remove while requests run.
//
// Contract: lookups return copies, so a request that found a model keeps its CompleteFn (and
// the adapter that function holds) alive even if the adapter is removed mid-generation; the
// next request for that id gets a 404. The base model cannot be removed. Thread-safe.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/generation_job.h"

namespace afm::server {

// What an adapter id was loaded from (for GET /v1/adapters).
struct AdapterInfo {
  std::string name;  // the part after "BASE:"
  std::string path;
  float scale = 1.0f;
};

struct ServedModel {
  std::string id;       // what clients pass as "model"
  int64_t created = 0;  // Unix seconds, shown in /v1/models
  CompleteFn complete;  // thread-safe (ChatService::complete)
  std::optional<AdapterInfo> adapter;  // set for "BASE:NAME" ids
};

class ModelCatalog {
 public:
  explicit ModelCatalog(std::vector<ServedModel> models);  // at least one: the base first

  std::vector<ServedModel> list() const;
  std::optional<ServedModel> find(const std::string& id) const;
  std::string base_id() const;
  // False (and nothing changes) when the id is taken.
  bool add(ServedModel model);
  // The removed adapter model; nullopt when `id` is not an adapter id here.
  std::optional<ServedModel> remove_adapter(const std::string& id);

 private:
  mutable std::mutex mutex_;
  std::vector<ServedModel> models_;
};

}  // namespace afm::server
