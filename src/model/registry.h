// Architectures register a loader under their `general.architecture` name, one file each in
// model/archs/ (AFM_REGISTER_ARCH); load_model() looks the name up. Nothing else switches on
// the architecture.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace afm::model {

using ArchLoader = std::unique_ptr<Model> (*)(std::shared_ptr<const gguf::File> file);

bool register_arch(const std::string& name, ArchLoader loader);
std::vector<std::string> registered_archs();  // sorted

// Opens the GGUF at path and builds its architecture's model. Errors: kIo / kFormat from the
// file, kUnsupported naming an unknown architecture and listing the known ones.
std::unique_ptr<Model> load_model(const std::string& path);
std::unique_ptr<Model> load_model(std::shared_ptr<const gguf::File> file);

}  // namespace afm::model

#define AFM_REGISTER_ARCH(name, loader) \
  static const bool afm_arch_registered_##loader = ::afm::model::register_arch(name, loader)
