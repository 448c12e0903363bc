// Loading and unloading LoRA adapters while the server runs (docs/server.md "Adapters"):
//   GET    /v1/adapters          the adapters served now
//   POST   /v1/adapters          {"name": N, "path": FILE, "scale": S?}: serve BASE:N
//   DELETE /v1/adapters/{name}   stop serving BASE:N
// These routes exist only when the server has an AdapterLoader, and answer only requests that
// carry the server's API key: a server started without --api-key refuses them (403), since
// they make the server read files named by the client.
//
// This file holds the request and response shapes; http_server.cpp routes them.
// Thread safety: reentrant.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/model_catalog.h"

namespace afm::server {

// Builds the served model for an adapter (the id is BASE:NAME); throws afm::Error naming the
// problem when the file cannot be loaded on this base (docs/adapters.md's checks).
using AdapterLoader = std::function<ServedModel(const std::string& id, const AdapterInfo& info)>;

// The POST body: "name" (1-64 of a-z A-Z 0-9 _ - .), "path" (non-empty), "scale" (a number in
// [-100, 100], default 1); any other member is a 400 naming it.
AdapterInfo parse_adapter_load(std::string_view body);

nlohmann::ordered_json adapter_json(const ServedModel& model);

}  // namespace afm::server
