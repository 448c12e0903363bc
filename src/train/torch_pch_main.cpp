// The executable owner of a precompiled <torch/torch.h> (src/train/CMakeLists.txt,
// afm_use_torch_pch): the build compiles the header with this target's flags (-fPIE). No macro
// may be defined here: a consumer lacking it could not use the copy.
int main() { return 0; }
