// The version of the afm library a program runs with (libafm.so or the static framework):
// "MAJOR.MINOR.PATCH", the project version of the build (CMake's project(afm VERSION ...)).
#pragma once

namespace afm {

const char* version();

}  // namespace afm
