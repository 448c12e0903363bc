// `afm-train svd-split`: a model minus the top singular directions of its adapted matrices, the
// base that `afm quantize --type astc6x6` compresses before recovery training
// (train/svd_split.h, docs/compression.md "SVD + recovery LoRA").
#pragma once

#include <CLI/CLI.hpp>

namespace afm::train {

void add_svd_split_command(CLI::App& app);

}  // namespace afm::train
