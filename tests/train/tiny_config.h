// The tiny model configurations the trainer tests share: 4 layers of width 64 over 96 tokens;
// afm-device with Block 2 from layer 3, afm-server with 2 tracks, 4 experts top-2 and a sliding
// window of 5 (shorter than the test sequences).
#pragma once

#include <string>

#include "train/model_config.h"

namespace afm::train::testing {

ModelConfig tiny_config(const std::string& arch);

}  // namespace afm::train::testing
