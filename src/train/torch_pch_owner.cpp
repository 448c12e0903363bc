// The library owner of a precompiled <torch/torch.h> (src/train/CMakeLists.txt,
// afm_use_torch_pch): the build compiles the header with this target's flags; no code.
