// SHA-256 of a GGUF file's tensor data section: the bytes from the data section's first byte
// (File::data_offset()) to the end of the file. It identifies a model's weights independently
// of its metadata, so an adapter can name the exact base it was made for
// (adapter.base_model_sha256, docs/adapters.md) even after the base's metadata is edited.
//
// Contract: reads the File's mapping only; thread-safe on a shared File. Returns 64 lowercase
// hex characters.
#pragma once

#include <string>

#include "gguf/reader.h"

namespace afm::gguf {

std::string data_section_sha256(const File& file);

}  // namespace afm::gguf
