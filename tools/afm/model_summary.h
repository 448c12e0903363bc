// A JSON summary of a GGUF model (used by `afm info`): architecture, hyperparameters
// ({arch}.* keys), tensor statistics per type, tokenizer summary, chat template family.
#pragma once

#include <nlohmann/json.hpp>

#include "gguf/reader.h"

namespace afm::cli {

nlohmann::json summarize_model(const gguf::File& file);

}  // namespace afm::cli
