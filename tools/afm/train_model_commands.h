// `afm train pretrain`, `afm train sft`, `afm train draft` and `afm train export`: front-ends for the libtorch trainer, which lives
// in its own binary `afm-train` next to `afm` (the runtime never links libtorch).
#pragma once

#include <CLI/CLI.hpp>

namespace afm::cli {

void setup_train_pretrain(CLI::App& train);
void setup_train_export(CLI::App& train);

}  // namespace afm::cli
