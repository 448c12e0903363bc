// Memory figures of the running process, from /proc (0 where unavailable).
#pragma once

#include <cstddef>

namespace afm {

size_t resident_set_bytes();  // VmRSS now
size_t peak_resident_set_bytes();  // VmHWM

}  // namespace afm
